import RTCShareCore
import Testing

@testable import RTCShareMedia

/// libvpx's active map as `VP8Encoder` hands it over: a macroblock marked inactive keeps the
/// last decoded picture whatever the input holds there, an active one is coded, and a keyframe
/// codes every macroblock whatever the map says.
@Suite struct VP8EncoderActiveMapTests {
    static let width = 320, height = 176  // 20 x 11 macroblocks
    static let cols = 20, rows = 11

    /// The luma of a 16x16 macroblock of a decoded picture.
    static func block(_ picture: DecodedPicture, col: Int, row: Int) -> [UInt8] {
        (0..<16).flatMap { y in Array(picture.row(plane: 0, y: row * 16 + y)[(col * 16)..<(col * 16 + 16)]) }
    }

    /// Paints macroblock (col, row) of `slot` white.
    static func paint(_ slot: inout FrameSlot, col: Int, row: Int) {
        slot.withMutablePixels { pixels in
            let y = pixels.plane(0)
            for r in 0..<16 { for x in 0..<16 { y.row(row * 16 + r)[col * 16 + x] = 235 } }
        }
    }

    @Test func inactiveMacroblocksKeepTheLastPictureAndKeyframesCodeAll() throws {
        let rig = try EncodeRig(width: Self.width, height: Self.height)
        var encoder = try VP8Encoder(.init(width: Self.width, height: Self.height, bitrateKbps: 1500))
        let decoder = try VP8Decoder()
        let output = OutputBuffer(count: encoder.maximumFrameBytes)
        var map = [UInt8](repeating: 0, count: Self.cols * Self.rows)
        map[2 * Self.cols + 2] = 1  // (2, 2) active; (10, 5) not

        var before: [UInt8] = []
        var first = try rig.frame(0)
        first.ptsMicroseconds = 0
        let key = try #require(try encoder.encode(first, into: output.bytes))
        try decoder.decode(output.prefix(key.byteCount)) { before = Self.block($0, col: 10, row: 5) }

        // The same picture with two macroblocks painted white; only one of them is active.
        for (i, keyframe) in [(1, false), (2, true)] {
            var slot = try rig.frame(0)
            slot.ptsMicroseconds = Int64(i) * EncodeRig.frameInterval
            Self.paint(&slot, col: 2, row: 2)
            Self.paint(&slot, col: 10, row: 5)
            if keyframe { encoder.forceKeyframe(nowMicroseconds: slot.ptsMicroseconds) }
            let info = try map.withUnsafeBufferPointer { activity in
                try #require(try encoder.encode(slot, activeMap: ActiveMap(activity: activity, rows: Self.rows,
                                                                           cols: Self.cols), into: output.bytes))
            }
            #expect(info.isKeyframe == keyframe)
            try decoder.decode(output.prefix(info.byteCount)) { picture in
                let active = Self.block(picture, col: 2, row: 2), inactive = Self.block(picture, col: 10, row: 5)
                #expect(active.allSatisfy { $0 >= 225 }, "the active macroblock is coded: \(active.min()!)")
                if keyframe {
                    #expect(inactive.allSatisfy { $0 >= 225 }, "a keyframe codes every macroblock")
                } else {
                    #expect(inactive == before, "the inactive macroblock keeps the last picture")
                }
            }
        }
        #expect(encoder.activeMapFrames == 1, "the keyframe went without the map")
    }

    @Test func aMapOfAnotherSizeIsRefused() throws {
        let rig = try EncodeRig(width: Self.width, height: Self.height)
        var encoder = try VP8Encoder(.init(width: Self.width, height: Self.height, bitrateKbps: 1500))
        let output = OutputBuffer(count: encoder.maximumFrameBytes)
        _ = try encoder.encode(try rig.frame(0), into: output.bytes)
        let map = [UInt8](repeating: 1, count: 10 * 10)
        let slot = try rig.frame(1)
        #expect(throws: MediaError.self) {
            try map.withUnsafeBufferPointer { activity in
                _ = try encoder.encode(slot, activeMap: ActiveMap(activity: activity, rows: 10, cols: 10), into: output.bytes)
            }
        }
    }
}
