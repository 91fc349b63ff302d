import RTCShareCore
import Testing

@testable import RTCShareMedia

/// What `errorResilient` is kept on for: a receiver that decodes on past a frame lost for good
/// (GStreamer's rtpvp8depay by default) shows a drifting picture, not a broken one, until the
/// next keyframe.
@Suite struct VP8ErrorResilienceTests {
    /// Encodes 40 frames of busy content, then decodes them twice: whole, and without frame 10.
    /// Returns the damaged decode's worst PSNR against the source over frames 11..39; a frame
    /// there that the decoder refuses or gives no picture for counts as 0 dB.
    static func worstPSNRAfterALostFrame(errorResilient: Bool) throws -> Double {
        let rig = try EncodeRig(width: 640, height: 360, busy: true)
        var config = VP8Encoder.Configuration(width: 640, height: 360, bitrateKbps: 1500)
        config.errorResilient = errorResilient
        var encoder = try VP8Encoder(config)
        let output = OutputBuffer(count: encoder.maximumFrameBytes)
        var frames: [(index: Int, bytes: [UInt8], key: Bool)] = []
        for i in 0..<40 {
            let slot = try rig.frame(i)
            guard let info = try encoder.encode(slot, into: output.bytes) else { continue }
            frames.append((i, Array(output.prefix(info.byteCount)), info.isKeyframe))
        }
        let lost = 10
        #expect(frames.contains { $0.index == lost && !$0.key }, "frame \(lost) was coded, as an inter frame")
        #expect(frames.filter(\.key).count == 1, "no keyframe after the first: the loss is not repaired")
        let decoder = try VP8Decoder()
        var worst = Double.infinity
        for frame in frames where frame.index != lost {
            let source = try rig.frame(frame.index)
            output.bytes.copyBytes(from: frame.bytes)
            let psnr = try? decoder.decode(output.prefix(frame.bytes.count)) { picture in
                source.withPixels { PictureCompare.psnr($0, picture) }
            }
            if frame.index > lost { worst = min(worst, psnr ?? 0) }
        }
        return worst
    }

    @Test func aFrameLostForGoodLeavesTheFramesAfterItDriftingNotBroken() throws {
        #expect(VP8Encoder.Configuration(width: 64, height: 64, bitrateKbps: 100).errorResilient,
                "on by default")
        let resilient = try Self.worstPSNRAfterALostFrame(errorResilient: true)
        let plain = try Self.worstPSNRAfterALostFrame(errorResilient: false)
        print("VP8ErrorResilienceTests: worst PSNR after a lost frame: resilient \(resilient) dB, not \(plain) dB")
        #expect(resilient > 20, "resilient: \(resilient) dB")
        #expect(resilient > plain, "resilient \(resilient) dB, not resilient \(plain) dB")
    }
}
