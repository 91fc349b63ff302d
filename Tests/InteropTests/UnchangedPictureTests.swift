import Foundation
import TestSupport
import Testing

/// Zero-hertz for a source that cannot say its picture is unchanged (`y4m:-`): a picture that
/// stops changing is coded for a while (the frames after a change refine it), then once a second
/// only; ffmpeg decodes the file to the still picture.
@Suite struct UnchangedPictureTests {
    @Test func aStillPictureFromStandardInputIsEncodedOnceASecond() throws {
        // 64x48 at 20 fps: 10 frames with a moving bright column, then 100 identical ones (5 s).
        let (w, h) = (64, 48)
        var stream = Data("YUV4MPEG2 W\(w) H\(h) F20:1 Ip A1:1 C420jpeg\n".utf8)
        for i in 0..<110 {
            stream += Data("FRAME\n".utf8)
            var y = [UInt8](repeating: 100, count: w * h)
            for row in 0..<h { y[row * w + min(i, 9) * 4] = 230 }
            stream += Data(y) + Data(repeating: 128, count: 2 * (w / 2) * (h / 2))
        }
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("o.ivf").path
        let run = try Tools.run(Tools.rtcshare, ["--source", "y4m:-", "--size", "\(w)x\(h)", "--fps", "20",
                                                 "--output", ivf, "--quiet"], input: stream)
        #expect(run.status == 0, "\(run.stderr)")
        let times = try Tools.ivfFrameTimes(ivf)
        // Coded: the 10 moving frames and the 30 pictures after the last change (they refine
        // it), then one a second through the remaining ~3.5 s; all 110 without zero-hertz. A
        // file read in real time may lose a few frames on a loaded machine.
        #expect(times.count >= 30 && times.count <= 48, "\(times.count) frames coded of 110")
        let still = zip(times, times.dropFirst()).map { $1 - $0 }.suffix(3)
        #expect(still.allSatisfy { $0 >= 0.9 && $0 <= 1.2 }, "the last gaps: \(Array(still))")
        let frames = try Tools.decodeLuma(ivf, width: w, height: h)
        #expect(frames.count == times.count)
        if let last = frames.last {
            #expect(last[10 * w + 36] > 180 && last[10 * w + 10] < 130, "the still picture's column")
        }
    }
}
