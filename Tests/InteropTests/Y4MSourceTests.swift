import Foundation
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

    @Test func unreadableFileIsOneClearErrorLine() throws {
        let run = try Tools.run(Tools.rtcshare, ["--source", "y4m:/nonexistent/clip.y4m", "--output", "/tmp/never.ivf"])
        #expect(run.status != 0)
        #expect(run.stderr.split(separator: "\n").count == 1, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("/nonexistent/clip.y4m") && run.stderr.contains("No such file"))
    }

    @Test func y4mFromStandardInputIsEncoded() throws {
        // 10 frames of 64x48 grey with a moving bright column, at 10 fps.
        let (w, h) = (64, 48)
        var stream = Data("YUV4MPEG2 W\(w) H\(h) F10:1 Ip A1:1 C420jpeg\n".utf8)
        for i in 0..<10 {
            stream += Data("FRAME\n".utf8)
            var y = [UInt8](repeating: 100, count: w * h)
            for row in 0..<h { y[row * w + i * 4] = 230 }
            stream += Data(y) + Data(repeating: 128, count: 2 * (w / 2) * (h / 2))
        }
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("o.ivf").path
        let run = try Tools.run(Tools.rtcshare, ["--source", "y4m:-", "--size", "\(w)x\(h)", "--fps", "10", "--output", ivf, "--quiet"],
                                input: stream)
        #expect(run.status == 0, "\(run.stderr)")
        let frames = try Tools.decodeLuma(ivf, width: w, height: h)
        #expect(frames.count >= 9 && frames.count <= 11, "decoded \(frames.count)")
        // The bright column of the last frame is where the source put it (within coding error).
        if let last = frames.last {
            #expect(last[10 * w + 36] > 180 && last[10 * w + 10] < 130)
        }
    }
}
