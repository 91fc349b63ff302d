import Foundation
import TestSupport
import Testing

/// `--source y4m:…`: bad input is one clear line and a non-zero exit; good input streams.
@Suite struct Y4MSourceTests {
    @Test func badHeaderIsOneClearErrorLine() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = dir.appendingPathComponent("bad.y4m")
        try Data("YUV4MPEG2 W64 C444\nFRAME\n".utf8).write(to: bad)
        let run = try Tools.run(Tools.rtcshare, ["--source", "y4m:\(bad.path)", "--output", dir.appendingPathComponent("o.ivf").path])
        #expect(run.status != 0)
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("bad.y4m") && run.stderr.contains("444"))
    }

    @Test func aHeaderWithNoFramesIsAnErrorNotAnEmptyShare() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = dir.appendingPathComponent("empty.y4m")
        try Data("YUV4MPEG2 W64 H64 F20:1\n".utf8).write(to: empty)
        let run = try Tools.run(Tools.rtcshare, ["--source", "y4m:\(empty.path)", "--output",
                                                 dir.appendingPathComponent("o.ivf").path, "--quiet"])
        #expect(run.status != 0)
        #expect(run.stderr.split(separator: "\n").count == 1 && run.stderr.contains("no frames"), "stderr: \(run.stderr)")
    }

    @Test func planThatDoesNotFitExitsNonZeroAndABadReceiverKeyIsACommandLineError() throws {
        // 1920x1080 fits now (VP8 over no network); the default `auto` plans openh264 too, whose
        // 2560x1440 does not.
        let tooBig = try Tools.run(Tools.rtcshare, ["plan", "--size", "2560x1440"])
        #expect(tooBig.status == 1, "plan printed DOES NOT FIT: \(String(decoding: tooBig.stdout, as: UTF8.self))")
        #expect(try Tools.run(Tools.rtcshare, ["plan", "--size", "640x360"]).status == 0)
        let badKey = try Tools.run(Tools.rtcshare, ["receive", "--listen", "127.0.0.1:5000", "--srtp-key", "bad"])
        #expect(badKey.status == 2, "as the sender's: \(badKey.stderr)")
        let badSettle = try Tools.run(Tools.rtcshare, ["receive", "--listen", "127.0.0.1:5000", "--insecure", "--settle", "0"])
        #expect(badSettle.status == 2 && badSettle.stderr.contains("--settle"), "\(badSettle.stderr)")
    }

    @Test func unreadableFileIsOneClearErrorLine() throws {
        let run = try Tools.run(Tools.rtcshare, ["--source", "y4m:/nonexistent/clip.y4m", "--output", "/tmp/never.ivf"])
        #expect(run.status != 0)
        #expect(run.stderr.split(separator: "\n").count == 1, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("/nonexistent/clip.y4m") && run.stderr.contains("No such file"))
    }

    @Test func y4mFromStandardInputIsEncoded() throws {
        // 30 frames of 64x48 grey with a moving bright column, at 10 fps.
        let (w, h) = (64, 48)
        var stream = Data("YUV4MPEG2 W\(w) H\(h) F10:1 Ip A1:1 C420jpeg\n".utf8)
        for i in 0..<30 {
            stream += Data("FRAME\n".utf8)
            var y = [UInt8](repeating: 100, count: w * h)
            for row in 0..<h { y[row * w + (i % 10) * 4] = 230 }
            stream += Data(y) + Data(repeating: 128, count: 2 * (w / 2) * (h / 2))
        }
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("o.ivf").path
        // Through bash, whose `times` then gives the CPU time rtcshare used.
        let run = try Tools.run("/bin/bash", ["-c", "\"$0\" \"$@\" && times", Tools.rtcshare,
                                              "--source", "y4m:-", "--size", "\(w)x\(h)", "--fps", "10", "--output", ivf, "--quiet"],
                                input: stream)
        #expect(run.status == 0, "\(run.stderr)")
        // A file source paced at 10 fps for 3 s of 64x48 needs about a tenth of a CPU second; a
        // run loop that spins (it once did, on a file source's watchdog past its first second)
        // burns the two seconds after the first.
        let children = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").last ?? ""
        let cpu = children.split(separator: " ").compactMap { field -> Double? in
            let parts = field.dropLast().split(separator: "m")  // "0m0.123s"
            guard parts.count == 2, let m = Double(parts[0]), let s = Double(parts[1]) else { return nil }
            return m * 60 + s
        }
        #expect(cpu.count == 2, "times printed: \(String(decoding: run.stdout, as: UTF8.self))")
        #expect(cpu.reduce(0, +) < 0.8, "rtcshare used \(cpu) s of CPU (user, sys) for 3 s of a 64x48 file")
        let frames = try Tools.decodeLuma(ivf, width: w, height: h)
        // The stream was encoded through to its end (the last frame's column is checked below):
        // no more than its 30 frames and a repeat, at least half of them. Not all: a file is read
        // on its own clock in real time and catches up when late, and on a loaded machine the
        // frames that then come too close together (or find every slot busy) are let go.
        #expect(frames.count >= 15 && frames.count <= 31, "decoded \(frames.count)")
        // The bright column of the last frame is where the source put it (within coding error).
        if let last = frames.last {
            #expect(last[10 * w + 36] > 180 && last[10 * w + 10] < 130)
        }
    }
}
