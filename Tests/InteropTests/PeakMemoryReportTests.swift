import Foundation
import TestSupport
import Testing

/// The peak RSS a share reports is its own, not its parent's: getrusage's ru_maxrss keeps the
/// peak of the image a process had before exec, so a share forked from a large process (a test
/// runner, a gateway's supervisor) once reported that process's size as its own.
@Suite struct PeakMemoryReportTests {
    @Test func aShareForkedFromALargeProcessReportsItsOwnPeak() throws {
        let python = try #require(Tools.which("python3"), "python3 is not installed")
        // 256 MiB written (so resident), then fork and exec: the child's image before exec
        // shares those pages and counts them.
        let script = """
            import os, sys
            ballast = b"\\x01" * (256 << 20)
            pid = os.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            _, status = os.waitpid(pid, 0)
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        let run = try Tools.run(python, ["-c", script, Tools.rtcshare, "--output", "/dev/null", "--size", "320x180",
                                         "--duration", "1"], timeout: 60)
        #expect(run.status == 0, "\(run.stderr)")
        let reported = run.stderr.range(of: #"peak RSS (\d+) MiB"#, options: .regularExpression)
            .flatMap { Int(run.stderr[$0].split(separator: " ")[2]) }
        let mib = try #require(reported, "no peak in the summary: \(run.stderr)")
        #expect(mib > 0 && mib < 128, "a 320x180 share reported \(mib) MiB: \(run.stderr)")
    }
}
