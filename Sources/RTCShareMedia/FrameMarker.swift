/// The test source's frame stamp (see DESIGN.md): in the top-left of the upright picture, two rows
/// of 32 blocks, each 8 px wide and 16 px tall. Row 1 (y 0..15) holds the frame counter, row 2
/// (y 16..31) the low 32 bits of the capture time (CLOCK_MONOTONIC, microseconds), most
/// significant bit first; white (Y 235) is 1, black (Y 16) is 0. A receiver reads the mean luma
/// of each block and thresholds at 128, so the stamp survives lossy coding but not a wrong
/// rotation or mirror — which is what makes it a test of orientation handling.
public enum FrameMarker {
    public static let blockWidth = 8
    public static let blockHeight = 16
    public static let bits = 32
    /// Width and height of the stamped area.
    public static let width = blockWidth * bits
    public static let height = blockHeight * 2

    static let one: UInt8 = 235
    static let zero: UInt8 = 16

    /// Stamps `counter` and `captureMicros` into a luma plane (`rows` rows of at least
    /// `FrameMarker.width` bytes, `stride` apart); a picture smaller than the stamp is left alone.
    public static func stamp(counter: UInt32, captureMicros: UInt64,
                             luma: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, rows: Int) {
        guard width >= Self.width, rows >= Self.height else { return }
        stampBand(0, value: counter, luma: luma, stride: stride)
        stampBand(1, value: UInt32(truncatingIfNeeded: captureMicros), luma: luma, stride: stride)
    }

    private static func stampBand(_ band: Int, value: UInt32, luma: UnsafeMutablePointer<UInt8>,
                                  stride: Int) {
        for y in band * blockHeight..<(band + 1) * blockHeight {
            let row = luma + y * stride
            for bit in 0..<bits {
                let on = (value >> UInt32(bits - 1 - bit)) & 1 == 1
                (row + bit * blockWidth).update(repeating: on ? one : zero, count: blockWidth)
            }
        }
    }

    /// What a stamp reads back as: nil if the picture is too small or a block is ambiguous
    /// (mean luma within `margin` of the threshold), which is what a turned or mirrored picture
    /// gives.
    public static func read(luma: UnsafePointer<UInt8>, stride: Int, width: Int, rows: Int,
                            margin: Int = 40) -> (counter: UInt32, captureMicrosLow: UInt32)? {
        guard width >= Self.width, rows >= Self.height else { return nil }
        var values: (UInt32, UInt32) = (0, 0)
        for band in 0..<2 {
            var value: UInt32 = 0
            for bit in 0..<bits {
                // Inner 6x12 of each block: the edges blur into neighbours after coding.
                var sum = 0
                for y in band * blockHeight + 2..<(band + 1) * blockHeight - 2 {
                    let row = luma + y * stride + bit * blockWidth
                    for x in 1..<blockWidth - 1 { sum += Int(row[x]) }
                }
                let mean = sum / ((blockHeight - 4) * (blockWidth - 2))
                if abs(mean - 128) < margin { return nil }
                value = value << 1 | (mean > 128 ? 1 : 0)
            }
            if band == 0 { values.0 = value } else { values.1 = value }
        }
        return values
    }
}
