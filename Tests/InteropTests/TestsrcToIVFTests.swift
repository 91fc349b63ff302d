import Foundation
import RTCShareMedia
import TestSupport
import Testing

/// `rtcshare --source testsrc --output x.ivf`: what ffmpeg (a decoder nobody here wrote) makes
/// of the file. The frame marker must read back upright in every decoded frame, whatever
/// orientation the source simulated.
@Suite(.serialized) struct TestsrcToIVFTests {
    static let width = 640, height = 360

    /// Markers of decoded luma frames; nil where a frame's marker does not read.
    private func markers(_ frames: [Data]) -> [(counter: UInt32, captureMicrosLow: UInt32)?] {
        frames.map { frame in
            frame.withUnsafeBytes { raw in
                FrameMarker.read(luma: raw.bindMemory(to: UInt8.self).baseAddress!, stride: Self.width,
                                 width: Self.width, rows: Self.height)
            }
        }
    }

    @Test(arguments: 1...8)
    func everyOrientationComesOutUprightAndInOrder(orientation: Int) throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("x.ivf").path
        let run = try Tools.run(Tools.rtcshare, [
            "--source", "testsrc", "--simulate-orientation", "\(orientation)", "--size", "\(Self.width)x\(Self.height)",
            "--output", ivf, "--duration", "3", "--quiet",
        ])
        #expect(run.status == 0, "rtcshare failed: \(run.stderr)")

        let frames = try Tools.decodeLuma(ivf, width: Self.width, height: Self.height)
        // Orientation and order are under test here, not the frame rate (a loaded machine
        // misses ticks): never more than 3 s at 20 fps allow (62), at least a second's worth
        // (20) to read, and their capture times span the share (2.5 s of its 3).
        #expect(frames.count >= 20 && frames.count <= 62, "decoded \(frames.count) frames")
        let read = markers(frames)
        let unreadable = read.indices.filter { read[$0] == nil }
        #expect(unreadable.isEmpty, "orientation \(orientation): markers unreadable in frames \(unreadable)")
        let counters = read.compactMap { $0?.counter }
        #expect(zip(counters, counters.dropFirst()).allSatisfy { $0 <= $1 }, "counters out of order: \(counters)")
        #expect((counters.last ?? 0) > (counters.first ?? 0))
        let captures = read.compactMap { $0?.captureMicrosLow }
        let span = Double((captures.last ?? 0) &- (captures.first ?? 0)) / 1e6
        #expect(span >= 2.5, "the frames' capture times span \(span) s of the 3 s share")
    }

    @Test func outputSizeIsTheOneAskedFor() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("x.ivf").path
        let run = try Tools.run(Tools.rtcshare, ["--size", "320x180", "--output", ivf, "--duration", "1", "--quiet"])
        #expect(run.status == 0, "\(run.stderr)")
        let ffprobe = try #require(Tools.which("ffprobe"))
        let probe = try Tools.run(ffprobe, ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                            "stream=codec_name,width,height", "-of", "csv=p=0", ivf])
        #expect(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "vp8,320,180")
    }
}

/// openh264 is loaded only by a share that encodes H.264: a VP8 share never maps it (its ~0.3 MiB
/// resident stay out), an H.264 share loads it and its file plays.
@Suite struct LazyOpenH264Tests {
    /// The share's memory maps, read every 50 ms while it runs, and how it ended.
    private func mapsWhileRunning(codec: String, output: String) throws -> (samples: [String], status: Int32?, stderr: String) {
        let share = try BackgroundProcess(Tools.rtcshare, [
            "--size", "320x180", "--codec", codec, "--output", output, "--duration", "2",
        ], in: URL(fileURLWithPath: output).deletingLastPathComponent(), name: "rtcshare")
        let path = "/proc/\(share.process.processIdentifier)/maps"
        var samples: [String] = []
        // Read to the end of file: /proc files say they are empty, and one read gives a page.
        _ = waitUntil(timeout: 20, interval: 0.05) {
            let maps = String(decoding: FileHandle(forReadingAtPath: path)?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            if !maps.isEmpty { samples.append(maps) }
            return !share.isRunning
        }
        return (samples, share.wait(timeout: 30), share.stderr)
    }

    @Test func aVP8ShareNeverMapsOpenH264AndAnH264ShareLoadsIt() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let vp8 = try mapsWhileRunning(codec: "vp8", output: dir.appendingPathComponent("v.ivf").path)
        #expect(vp8.status == 0, "\(vp8.stderr)")
        #expect(vp8.samples.count >= 10, "the maps were read all through the 2 s share: \(vp8.samples.count) times")
        #expect(vp8.samples.allSatisfy { !$0.contains("libopenh264") }, "a VP8 share mapped openh264")
        let h264File = dir.appendingPathComponent("h.ivf").path
        let h264 = try mapsWhileRunning(codec: "h264", output: h264File)
        #expect(h264.status == 0, "\(h264.stderr)")
        #expect(h264.samples.contains { $0.contains("libopenh264") }, "the H.264 share runs openh264, loaded on first use")
        let ffprobe = try #require(Tools.which("ffprobe"))
        let probe = try Tools.run(ffprobe, ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                            "stream=codec_name,nb_read_frames", "-of", "csv=p=0", h264File])
        let fields = String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            .split(separator: ",")
        #expect(fields.first == "h264", "\(fields)")
        // The file plays: every frame written decodes (not the rate, which a loaded machine
        // lowers), and there are at least half a second's worth of them.
        let written = try Tools.ivfFrameTimes(h264File).count
        let decoded = fields.last.flatMap { Int($0) } ?? 0
        #expect(decoded >= 10 && decoded == written, "\(decoded) decoded of \(written) frames written: \(fields)")
    }
}

/// A capture that stops answering is restarted by the watchdog while the filler holds the rate.
@Suite struct StallRecoveryTests {
    @Test func stalledSourceIsRestartedAndTheRateHeld() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("x.ivf").path
        // Stall from 0.5 s to 3 s of a 6 s run (testsrc itself is static from 4 s to 6 s).
        let run = try Tools.run(Tools.rtcshare, [
            "--size", "320x180", "--output", ivf, "--duration", "6", "--testsrc-stall", "0.5:2.5",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let restarts = run.stderr.components(separatedBy: "\n").filter { $0.contains("source stalled; restarting") }
        // Stall noticed after 1 s (t≈1.5 s), the next restart not before 2 s later: one or two.
        #expect((1...2).contains(restarts.count), "\(run.stderr)")
        #expect(run.stderr.contains("source recovered"))
        let frames = try Tools.decodeLuma(ivf, width: 320, height: 180)
        let times = try Tools.ivfFrameTimes(ivf)
        #expect(times.count == frames.count, "\(times.count) frames in the file, \(frames.count) decoded")
        // The rate held is judged by the gaps, not the count (a loaded machine misses ticks):
        // no more than 6 s at 20 fps allow (122), at least half of them (60), and no gap over
        // 0.5 s (ten frame intervals) anywhere, the stall included, across the whole 6 s.
        #expect(frames.count >= 60 && frames.count <= 122, "decoded \(frames.count) frames over 6 s")
        #expect(Tools.longestGap(times) < 0.5, "longest gap between frames \(Tools.longestGap(times)) s")
        let span = (times.last ?? 0) - (times.first ?? 0)  // outside #expect: Swift 6.0's type checker gave up on it
        #expect(span >= 5.5, "frames over \(span) s")
        let counters = frames.compactMap { frame in
            frame.withUnsafeBytes { raw in
                FrameMarker.read(luma: raw.bindMemory(to: UInt8.self).baseAddress!, stride: 320, width: 320, rows: 180)?.counter
            }
        }
        #expect(counters.count == frames.count)
        // During the stall the last frame is repeated: a run of identical counters ≈ 2.5 s long,
        // timed by the frames' times (at least 44 intervals of 50 ms: 2.2 s).
        var longest = 0.0, runStart = 0
        for i in counters.indices.dropFirst() where counters.count == times.count {
            if counters[i] != counters[i - 1] { runStart = i }
            longest = max(longest, times[i] - times[runStart])
        }
        #expect(longest >= 2.2, "longest repeat run \(longest) s")
        // And new frames come after it.
        #expect(counters.last! > counters[counters.count / 2])
    }
}
