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
            // WHIP 1080p VP8 was 1.3-1.9 over at 51.5-51.6 planned, and is now planned under the
            // cap, 49.8 against 49.4 measured); under-planning never is.
            let overCap = (row.planned_mib ?? 0) > 50
            let difference = row.planned_minus_measured_mib ?? -99
            #expect(row.within || (overCap && difference >= -1 && difference <= 3),
                    "\(row.configuration): planned \(row.planned_mib ?? -1) MiB, measured \(row.measured_mib) MiB")
        }
    }
}
