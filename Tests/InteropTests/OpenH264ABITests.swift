import Foundation
import TestSupport
import Testing

/// openh264 as the boards' distributions ship it: Debian 12's libopenh264.so.7 (ABI 7, openh264
/// 2.3) and Debian 13's .so.8 (ABI 8, 2.6, whose bitstream info has a wider layer entry), or any
/// build RTCSHARE_OPENH264 names. An H.264 share through each must play with every frame's
/// marker readable, and it must be that library the share ran.
@Suite(.serialized) struct OpenH264ABITests {
    /// Debian 13's amd64 libopenh264.so.8, which `scripts/build-aarch64 --setup-only` downloads
    /// (.ci/run passes it on); without it that test is skipped and says so.
    static let abi8 = ProcessInfo.processInfo.environment["RTCSHARE_TEST_OPENH264_ABI8"]
    static let abi8Missing: String? = {
        guard let abi8 else {
            return "set RTCSHARE_TEST_OPENH264_ABI8 to a libopenh264.so.8 (scripts/build-aarch64 --setup-only fetches one)"
        }
        return FileManager.default.fileExists(atPath: abi8) ? nil : "no \(abi8)"
    }()

    static let width = 320, height = 180

    /// A 2 s H.264 share to IVF with RTCSHARE_OPENH264 set to `library`: how it ended, what it
    /// said, the decoded pictures and whether `library` was mapped while it ran.
    private func share(library: String, in dir: URL) throws -> (status: Int32?, stderr: String, frames: [Data], mapped: Bool) {
        let ivf = dir.appendingPathComponent("h264.ivf").path
        try? FileManager.default.removeItem(atPath: ivf)
        // env execs rtcshare in its own process, so the pid's maps are rtcshare's.
        let run = try BackgroundProcess("/usr/bin/env", [
            "RTCSHARE_OPENH264=\(library)", Tools.rtcshare, "--size", "\(Self.width)x\(Self.height)", "--fps", "10",
            "--codec", "h264", "--output", ivf, "--duration", "2", "--quiet",
        ], in: dir, name: "rtcshare")
        let real = URL(fileURLWithPath: library).resolvingSymlinksInPath().path
        var mapped = false
        _ = waitUntil(timeout: 30, interval: 0.05) {
            let maps = FileHandle(forReadingAtPath: "/proc/\(run.process.processIdentifier)/maps")?.readDataToEndOfFile()
            if let maps, String(decoding: maps, as: UTF8.self).contains(real) { mapped = true }
            return !run.isRunning
        }
        let status = run.wait(timeout: 30)
        let frames = status == 0 ? try Tools.decodeLuma(ivf, width: Self.width, height: Self.height) : []
        return (status, run.stderr, frames, mapped)
    }

    private func expectPlays(_ result: (status: Int32?, stderr: String, frames: [Data], mapped: Bool), _ library: String) {
        #expect(result.status == 0, "\(library): \(result.stderr)")
        #expect(result.mapped, "\(library) was not the library the share loaded")
        let markers = Tools.markers(result.frames, width: Self.width, height: Self.height)
        let read = markers.compactMap { $0 }
        #expect(result.frames.count >= 10, "\(library): \(result.frames.count) frames decoded")
        #expect(read.count == result.frames.count, "\(library): \(read.count) of \(result.frames.count) markers read")
        #expect(zip(read, read.dropFirst()).allSatisfy { $0 < $1 }, "\(library): markers out of order \(read)")
    }

    @Test func debian12sLibraryNamedByPathPlays() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let library = try #require(["/usr/lib/x86_64-linux-gnu/libopenh264.so.7", "/usr/lib/aarch64-linux-gnu/libopenh264.so.7"]
            .first { FileManager.default.fileExists(atPath: $0) }, "libopenh264-7 is not installed (scripts/setup installs it)")
        expectPlays(try share(library: library, in: dir), library)
    }

    @Test(.enabled(if: abi8Missing == nil, Comment(rawValue: abi8Missing ?? "")))
    func debian13sABI8LibraryPlays() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let library = try #require(Self.abi8)
        expectPlays(try share(library: library, in: dir), library)
    }

    /// A path that is no library, and a library that is not openh264: one line naming it, and
    /// exit 71 (a library cannot load), before anything is sent.
    @Test(arguments: ["/nonexistent/libopenh264.so", "libvpx.so.7"])
    func aLibraryThatCannotServeIsOneLineAndExit71(library: String) throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try share(library: library, in: dir)
        #expect(result.status == 71, "\(library): exit \(String(describing: result.status)): \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("rtcshare: error:") && lines[0].contains(library), "\(result.stderr)")
    }
}
