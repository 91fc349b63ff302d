import Foundation
import Glibc
import Testing
import TestSupport

/// `rtcshare plan` tells the truth: for every configuration `bench/harness/planner_case.py` runs
/// (`--peer` and `--whip` into aiortc, 640x360, 1280x720 and 1600x900, testsrc, a Y4M clip and
/// the X11 screen, audio on and off), the share's measured peak RSS (wait4's ru_maxrss of the
/// sender alone) is within 1 MiB of the peak the plan prints — a share that misses is run twice more
/// and judged by the median of the three (one share's peak moves by up to ~1.3 MiB from run to
/// run; the table prints every run). The planner's figures are measured
/// on the release build as shipped (`scripts/build-release`), so the test runs that binary,
/// named by RTCSHARE_RELEASE_BIN (`.ci/run` builds it); without it the test is skipped and says so.
@Suite struct MemoryPlannerAccuracyTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let binary = ProcessInfo.processInfo.environment["RTCSHARE_RELEASE_BIN"]

    /// Why the test cannot run here, or nil.
    static let unavailable: String? = {
        guard let binary else {
            return "MemoryPlannerAccuracyTests skipped: set RTCSHARE_RELEASE_BIN to rtcshare as shipped "
                + "(RTCSHARE_RELEASE_BIN=$(scripts/build-release --scratch-path .build-release))"
        }
        if access(binary, X_OK) != 0 { return "MemoryPlannerAccuracyTests skipped: \(binary) is not an executable" }
        for tool in ["python3", "ffmpeg"] where Tools.which(tool) == nil {
            return "MemoryPlannerAccuracyTests skipped: \(tool) is not on PATH (scripts/setup installs it)"
        }
        return nil
    }()

    struct Row: Decodable {
        var configuration: String
        var exit: Int
        var planned_mib: Double?
        var measured_mib: Double
        var planned_minus_measured_mib: Double?
        var within: Bool
    }

    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func everyConfigurationIsPlannedWithinOneMiBOfItsPeak() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = dir.appendingPathComponent("rows.json").path
        let harness = Self.repo.appendingPathComponent("bench/harness/planner_case.py").path
        let python = try #require(Tools.which("python3"))
        let result = try Tools.run(python, [harness, try #require(Self.binary), "--seconds", "6", "--json", json],
                                   timeout: 600)
        print(String(decoding: result.stdout, as: UTF8.self))
        try #require(result.status == 0, "planner_case.py failed: \(result.stderr.suffix(2000))")
        let rows = try JSONDecoder().decode([Row].self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        #expect(rows.count >= 10, "peer and WHIP, two sizes, three sources, audio on and off")
        #expect(rows.contains { $0.configuration.hasPrefix("whip") }, "aiortc is installed (scripts/setup): WHIP rows run")
        for row in rows {
            #expect(row.exit == 0, "\(row.configuration): the share exited \(row.exit)")
            #expect(row.planned_mib != nil, "\(row.configuration): `rtcshare plan` printed no total")
            // A share planned over the 50 MiB cap is refused unless the cap is raised (the 1080p
            // rows run with one): for those, over-planning by up to 3 MiB is taken (the
            // loop-filter search's luma plane and the reconnect's pages are counted in full;
            // WHIP 1080p VP8 was 1.3-1.9 over at 51.5-51.6 planned, then 49.8 against 49.4 through
            // its reconnect, and is now planned at its running share, 42.9 against 42.7, the
            // reconnect letting the encoder go); under-planning never is.
            let overCap = (row.planned_mib ?? 0) > 50
            let difference = row.planned_minus_measured_mib ?? -99
            #expect(row.within || (overCap && difference >= -1 && difference <= 3),
                    "\(row.configuration): planned \(row.planned_mib ?? -1) MiB, measured \(row.measured_mib) MiB")
        }
    }

    /// `--size auto` on a 1920x1080 X11 screen over WHIP, VP8 or `auto` (VP8 offered first),
    /// takes the screen at its own size: the running share and the screen's shared memory fit
    /// 50 MiB, and a reconnect, which lets VP8's encoder go, stays well under them.
    @Test(.enabled(if: Tools.which("Xvfb") != nil, "Xvfb is not installed (scripts/setup installs it)"))
    func anX11ScreenOf1080pOverWHIPIsPlannedAtItsOwnSize() throws {
        let xvfb = try Xvfb(width: 1920, height: 1080)
        defer { xvfb.stop() }
        func mib(_ text: String, _ label: String) -> Double? {
            text.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }
                .flatMap { line in line.split(separator: " ").reversed().compactMap { Double($0) }.first }
        }
        for codec in ["vp8", "auto"] {
            let run = try Tools.run(Tools.rtcshare, [
                "plan", "--source", "x11:\(xvfb.display)", "--size", "auto", "--whip", "http://127.0.0.1:9/whip",
                "--codec", codec, "--audio", "testtone", "--fps", "15",
            ])
            let text = String(decoding: run.stdout, as: UTF8.self)
            #expect(run.status == 0, "\(codec): \(run.stderr)")
            #expect(text.split(separator: "\n").first?.hasSuffix("1920x1080, cap 50.0 MiB:") == true, "\(codec): \(text)")
            let total = try #require(mib(text, "total"), "\(codec): \(text)")
            let running = try #require(mib(text, "running"), "\(codec): \(text)")
            let reconnecting = try #require(mib(text, "peak reconnecting"), "\(codec): \(text)")
            #expect(total <= 50 && total == running, "\(codec): \(text)")
            #expect(reconnecting < running, "\(codec): \(text)")
            #expect(text.contains("x11:\(xvfb.display) shared memory"), "the screen's own lines are counted: \(text)")
        }
    }

    /// Why the wayland case cannot run here, or nil.
    static let waylandUnavailable: String? = unavailable
        ?? (Tools.which("sway") == nil ? "MemoryPlannerAccuracyTests (wayland) skipped: sway is not installed (scripts/setup installs it)" : nil)

    /// The peak resident size of `share` (VmHWM, read every 10 ms until it exits), in MiB.
    static func peakMiB(_ share: BackgroundProcess) -> Double {
        let status = "/proc/\(share.process.processIdentifier)/status"
        var peakKiB = 0
        while share.isRunning {
            if let text = try? String(contentsOfFile: status, encoding: .utf8),
               let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
               let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") {
                peakKiB = max(peakKiB, kib)
            }
            usleep(10_000)
        }
        return Double(peakKiB) / 1024
    }

    /// A wayland share as a board runs one: headless sway's 1920x1080 output, the test window
    /// animating, shared at 1280x720@20 over `--peer` with SRTP into `rtcshare receive`. Its peak
    /// is never over its plan, and at most 1 MiB under it; a share that misses is run twice more
    /// and judged by the median of the three, as above.
    @Test(.enabled(if: waylandUnavailable == nil, Comment(rawValue: waylandUnavailable ?? "")))
    func aWaylandShareIsPlannedAtOrJustAboveItsPeak() throws {
        let binary = try #require(Self.binary)
        let sway = try Sway(width: 1920, height: 1080)
        defer { sway.stop() }
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let client = try sway.startClient(in: dir, shareWidth: 1280)
        defer { client.kill() }
        kill(client.process.processIdentifier, SIGUSR1)
        let port = try Tools.freeUDPPorts(count: 4)
        let sdp = dir.appendingPathComponent("w.sdp").path
        let arguments = ["--source", "wayland", "--size", "1280x720", "--fps", "20", "--peer", "127.0.0.1:\(port)", "--sdp", sdp]
        let plan = try Tools.run("/usr/bin/env", sway.environment + [binary, "plan"] + arguments)
        let printed = String(decoding: plan.stdout, as: UTF8.self)
        let total = printed.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("total ") }
        let planned = try #require(total.flatMap { Double($0.split(separator: " ", omittingEmptySubsequences: true)[1]) },
                                   "`rtcshare plan` printed no total: \(printed) \(plan.stderr)")

        func share(_ run: Int) throws -> Double {
            try? FileManager.default.removeItem(atPath: sdp)
            let sender = try sway.background(binary, arguments + ["--duration", "8"], in: dir, name: "share\(run)")
            defer { sender.kill() }
            try #require(Tools.waitForFile(sdp, timeout: 20, while: { sender.isRunning }), "no SDP: \(sender.stderr)")
            let receiver = try BackgroundProcess(Tools.rtcshare, ["receive", "--sdp", sdp, "--idle-timeout", "3"],
                                                 in: dir, name: "receiver\(run)")
            defer { receiver.kill() }
            let peak = Self.peakMiB(sender)
            #expect(sender.wait(timeout: 30) == 0, "share \(run): \(sender.stderr)")
            return peak
        }
        func within(_ measured: Double) -> Bool {
            let over = ((planned - measured) * 10).rounded() / 10
            return over >= 0 && over <= 1.0
        }
        var runs = [try share(1)]
        if !within(runs[0]) { runs += [try share(2), try share(3)] }
        let measured = runs.sorted()[runs.count / 2]
        print("MemoryPlannerAccuracyTests wayland 1920x1080 -> 1280x720 --peer: planned \(planned) MiB, peak "
              + runs.map { String(format: "%.1f", $0) }.joined(separator: ", ") + " MiB")
        #expect(within(measured), "planned \(planned) MiB, measured \(runs) MiB (median \(measured))")
    }
}
