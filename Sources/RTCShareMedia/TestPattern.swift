import RTCShareCore

/// The picture of the `testsrc` source: deterministic and screen-like, so encoder and pacer see
/// what a shared desktop gives them — flat areas, sharp one-pixel text strokes, a window whose
/// text grows as if typed, a moving element — plus the frame marker in the top-left corner.
/// The mid-grey background makes a turned or mirrored picture's top-left unreadable as a marker.
public struct TestPattern: Sendable {
    public let width: Int
    public let height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Renders the upright picture at `elapsedMicros` since the source started into an I420 frame
    /// of this pattern's size, stamped with `counter` and `captureMicros`.
    public func render(into pixels: FramePixels, counter: UInt32, captureMicros: UInt64,
                       elapsedMicros: Int64) {
        precondition(pixels.format == .i420 && pixels.width == width && pixels.height == height)
        let y = pixels.plane(0), u = pixels.plane(1), v = pixels.plane(2)
        fill(y, u, v, x0: 0, y0: 0, w: width, h: height, color: Self.desktop)

        // A document window with a title bar; its text grows by one glyph every 40 ms.
        let win = (x: width / 12, y: height / 7, w: width * 55 / 100, h: height * 3 / 4)
        fill(y, u, v, x0: win.x, y0: win.y, w: win.w, h: max(win.h / 14, 4), color: Self.titleBar)
        let bodyTop = win.y + max(win.h / 14, 4)
        fill(y, u, v, x0: win.x, y0: bodyTop, w: win.w, h: win.h - (bodyTop - win.y), color: Self.paper)
        let typed = Int(elapsedMicros / 40_000)
        drawText(y, x0: win.x + 8, y0: bodyTop + 8, w: win.w - 16, h: win.h - (bodyTop - win.y) - 16,
                 glyphs: typed)

        // Side panel of flat coloured tiles.
        let panel = (x: width * 70 / 100, y: height / 7, w: width * 25 / 100, h: height / 2)
        let tile = max(panel.h / 4, 2)
        for (i, color) in Self.tiles.enumerated() {
            fill(y, u, v, x0: panel.x, y0: panel.y + i * (tile + tile / 4), w: panel.w, h: tile,
                 color: color)
        }

        // A square gliding back and forth along a track, one sweep every 2 s.
        let side = max(height / 15, 4)
        let track = (x: width * 70 / 100, y: height * 78 / 100, w: width * 25 / 100 - side)
        let phase = Double(elapsedMicros % 4_000_000) / 2_000_000  // 0..2
        let along = phase <= 1 ? phase : 2 - phase
        fill(y, u, v, x0: track.x + Int(Double(max(track.w, 0)) * along), y0: track.y, w: side,
             h: side, color: Self.red)

        FrameMarker.stamp(counter: counter, captureMicros: captureMicros, luma: y.row(0).baseAddress!,
                          stride: y.stride, width: y.rowBytes, rows: y.rows)
    }

    // MARK: drawing

    struct Color { var y: UInt8, u: UInt8, v: UInt8 }
    static let desktop = Color(y: 128, u: 128, v: 128)
    static let titleBar = Color(y: 90, u: 150, v: 110)
    static let paper = Color(y: 235, u: 128, v: 128)
    static let ink = Color(y: 16, u: 128, v: 128)
    static let blue = Color(y: 60, u: 200, v: 110)
    static let orange = Color(y: 160, u: 70, v: 190)
    static let green = Color(y: 140, u: 80, v: 70)
    static let red = Color(y: 82, u: 90, v: 240)
    static let tiles = [blue, orange, green]

    /// A clipped rectangle in all three planes (chroma at half resolution).
    private func fill(_ yp: PixelPlane, _ up: PixelPlane, _ vp: PixelPlane, x0: Int, y0: Int,
                      w: Int, h: Int, color: Color) {
        let x1 = min(x0 + w, width), y1 = min(y0 + h, height)
        let xs = max(x0, 0), ys = max(y0, 0)
        guard x1 > xs, y1 > ys else { return }
        for row in ys..<y1 {
            (yp.row(row).baseAddress! + xs).update(repeating: color.y, count: x1 - xs)
        }
        let cx0 = xs / 2, cx1 = (x1 + 1) / 2
        for row in ys / 2..<(y1 + 1) / 2 {
            (up.row(row).baseAddress! + cx0).update(repeating: color.u, count: cx1 - cx0)
            (vp.row(row).baseAddress! + cx0).update(repeating: color.v, count: cx1 - cx0)
        }
    }

    /// Up to `glyphs` 5x9 pseudo-glyphs of one-pixel strokes on a 7x14 grid, in reading order:
    /// the sharp, high-contrast detail of text, which is what screen content is mostly made of.
    private func drawText(_ yp: PixelPlane, x0: Int, y0: Int, w: Int, h: Int, glyphs: Int) {
        let cellW = 7, cellH = 14
        let columns = max(w / cellW, 0), lines = max(h / cellH, 0)
        guard columns > 0, lines > 0 else { return }
        let shown = glyphs % (columns * lines * 2)  // the page fills, then starts over
        var n = 0
        for line in 0..<lines {
            for column in 0..<columns {
                if n >= min(shown, columns * lines) { return }
                n += 1
                var bits = Self.hash(UInt32(line * 131 + column))
                if bits & 7 == 0 { continue }  // a space
                let gx = x0 + column * cellW, gy = y0 + line * cellH + 2
                // Five strokes: three horizontal, two vertical, each on or off.
                for stroke in 0..<5 where bits & 1 == 1 || stroke == 0 {
                    bits >>= 1
                    switch stroke {
                    case 0, 1, 2:
                        let row = yp.row(gy + stroke * 4).baseAddress! + gx
                        row.update(repeating: Self.ink.y, count: 5)
                    default:
                        let x = gx + (stroke == 3 ? 0 : 4)
                        for r in 0..<9 { yp.row(gy + r)[x] = Self.ink.y }
                    }
                }
            }
        }
    }

    private static func hash(_ x: UInt32) -> UInt32 {
        var h = x &* 0x9E37_79B1
        h ^= h >> 15
        h = h &* 0x85EB_CA77
        h ^= h >> 13
        return h
    }
}
