import Foundation
import TestSupport
import Testing

/// The memory governor in a real share: with its line set far below what a 1280x720 share
/// needs, the share gives way — frame rate, then output size with a smaller encoder — says so,
/// and goes on; the file holds both sizes and the resident memory falls after the size step.
@Suite struct MemoryGovernorInteropTests {
    @Test func underPressureTheShareGivesWayInsteadOfDying() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("g.ivf").path
        let json = dir.appendingPathComponent("g.json").path
        // Orientation 6 gives the share a transform stage, so it can scale to a smaller size.
        let run = try Tools.run(Tools.rtcshare, [
            "--source", "testsrc", "--size", "1280x720", "--fps", "20", "--simulate-orientation", "6",
            "--output", ivf, "--duration", "9", "--mem-soft-limit", "10M", "--stats-json", json,
        ], timeout: 60)
        #expect(run.status == 0, "\(run.stderr)")
        for said in ["frame rate lowered to 10 fps", "frame rate lowered to 5 fps", "output lowered to 960x540"] {
            #expect(run.stderr.contains(said), "not said: \(said)\n\(run.stderr)")
        }
        // The file: 1280x720 frames, then 960x540 ones, all decodable.
        let ffprobe = try #require(Tools.which("ffprobe"), "ffprobe is not installed (scripts/setup installs ffmpeg)")
        let probe = try Tools.run(ffprobe, ["-v", "error", "-select_streams", "v", "-show_entries", "frame=width,height",
                                            "-of", "csv=p=0", ivf])
        #expect(probe.status == 0, "\(probe.stderr)")
        let sizes = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(sizes.first == "1280,720", "\(sizes.prefix(3))")
        #expect(sizes.contains("960,540"), "no 960x540 frame: \(Set(sizes))")
        // Resident memory, once a second: lower after the first size step than before it.
        let lines = try String(contentsOfFile: json, encoding: .utf8).split(separator: "\n")
        let rss = lines.compactMap { line -> (fps: Int, rss: Int)? in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let r = o["rss_bytes"] as? Int, let f = o["target_fps"] as? Int else { return nil }
            return (f, r)
        }
        let before = rss.prefix(3).map(\.rss).max() ?? 0
        let after = rss.suffix(2).map(\.rss).min() ?? Int.max
        #expect(after < before, "resident memory did not fall: \(rss.map(\.rss))")
        #expect(rss.last?.fps == 5, "\(rss.map(\.fps))")
    }
}
