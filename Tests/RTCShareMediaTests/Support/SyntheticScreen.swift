import RTCShareCore

/// A deterministic screen-like I420 picture for encoder tests: a flat background, a title bar,
/// a page of one-pixel text strokes and a square moving 8 px per frame. `busy` re-draws an
/// eighth of the text lines every frame, so the encoder is limited by its bitrate
/// rather than by the content running out.
struct SyntheticScreen {
    let width: Int
    let height: Int
    var busy = false

    static let background: UInt8 = 180
    static let chromaNeutral: UInt8 = 128

    /// A region of the background nothing is ever drawn on (left quarter, below the title bar
    /// and above the square's track), with an 8 px margin so edge ringing does not count.
    var flatArea: (x: Range<Int>, y: Range<Int>) {
        (8..<(width / 4 - 8), (height / 6 + 8)..<(height * 2 / 3))
    }

    func render(frame index: Int, into pixels: FramePixels) {
        let y = pixels.plane(0), u = pixels.plane(1), v = pixels.plane(2)
        fill(y, u, v, x: 0..<width, y: 0..<height, luma: Self.background, u: 128, v: 128)
        fill(y, u, v, x: 0..<width, y: 0..<(height / 12), luma: 60, u: 150, v: 110)

        // The page: white paper, black 1 px strokes on an 8x16 grid of pseudo-glyphs.
        let page = (x: (width / 3)..<(width * 11 / 12), y: (height / 6)..<(height * 2 / 3))
        fill(y, u, v, x: page.x, y: page.y, luma: 235, u: 128, v: 128)
        let columns = page.x.count / 8, lines = page.y.count / 16
        for line in 0..<lines {
            for column in 0..<columns {
                // Busy: every frame, one line in eight gets new text (fast typing everywhere).
                let epoch = busy ? (index + 7 - line % 8) / 8 : 0
                let seed = UInt32(truncatingIfNeeded: line * 977 + column + epoch * 7919)
                var bits = Self.hash(seed)
                if bits & 7 == 0 { continue }
                let gx = page.x.lowerBound + column * 8 + 1, gy = page.y.lowerBound + line * 16 + 3
                for stroke in 0..<5 {
                    bits >>= 1
                    guard stroke == 0 || bits & 1 == 1 else { continue }
                    if stroke < 3 {
                        y.row(gy + stroke * 4).baseAddress!.advanced(by: gx).update(repeating: 16, count: 5)
                    } else {
                        for r in 0..<9 { y.row(gy + r)[gx + (stroke == 3 ? 0 : 4)] = 16 }
                    }
                }
            }
        }

        // The moving square, on its own track below the page.
        let side = max(height / 12, 8)
        let travel = max(width / 3 - side, 1)
        let sx = 8 + (index * 8) % travel, sy = height * 3 / 4
        fill(y, u, v, x: sx..<(sx + side), y: sy..<(sy + side), luma: 82, u: 90, v: 240)
    }

    private func fill(_ yp: PixelPlane, _ up: PixelPlane, _ vp: PixelPlane, x: Range<Int>,
                      y: Range<Int>, luma: UInt8, u: UInt8, v: UInt8) {
        for row in y { yp.row(row).baseAddress!.advanced(by: x.lowerBound).update(repeating: luma, count: x.count) }
        let cx = (x.lowerBound / 2)..<((x.upperBound + 1) / 2)
        for row in (y.lowerBound / 2)..<((y.upperBound + 1) / 2) {
            up.row(row).baseAddress!.advanced(by: cx.lowerBound).update(repeating: u, count: cx.count)
            vp.row(row).baseAddress!.advanced(by: cx.lowerBound).update(repeating: v, count: cx.count)
        }
    }

    private static func hash(_ x: UInt32) -> UInt32 {
        var h = (x ^ 0x5bd1_e995) &* 0x2c1b_3c6d
        h ^= h >> 12
        h = h &* 0x297a_2d39
        h ^= h >> 15
        return h
    }
}
