import Testing
@testable import RTCShareCore

@Suite struct FrameTransformerTests {
    /// Stored pixels of a phone held so the picture needs turning: a white square sits where the
    /// tag says the upright top-left corner is. After the transform it must be at the top-left.
    @Test(arguments: Orientation.allCases)
    func taggedFrameComesOutUpright(orientation: Orientation) throws {
        let budget = try MemoryBudget(capBytes: 8 << 20)
        let (sw, sh) = orientation.swapsAxes ? (90, 160) : (160, 90)
        let source = try FramePool(budget: budget, format: .bgra, maxWidth: 160, maxHeight: 160, count: 1)
        let output = try FramePool(budget: budget, format: .i420, maxWidth: 160, maxHeight: 160, count: 1)
        let transformer = try FrameTransformer(budget: budget, maxSourceWidth: 160, maxSourceHeight: 90,
                                               maxOutputWidth: 160, maxOutputHeight: 90)
        var src = try source.acquire(format: .bgra, width: sw, height: sh)
        src.orientation = orientation
        src.ptsMicroseconds = 42
        src.withMutablePixels { pixels in
            let plane = pixels.plane(0)
            plane.fill(0)
            for y in 0..<sh {
                let row = plane.row(y)
                for x in 0..<sw where isUprightTopLeft(x: x, y: y, w: sw, h: sh, orientation) {
                    for c in 0..<4 { row[x * 4 + c] = 255 }
                }
            }
        }
        var out = try output.acquire(format: .i420, width: 160, height: 90)
        try transformer.apply(src, into: &out)
        #expect(out.ptsMicroseconds == 42)
        #expect(out.orientation == .up)
        out.withPixels { pixels in
            let y = pixels.plane(0)
            #expect(y.row(2)[2] > 200)          // white inside the top-left square
            #expect(y.row(2)[150] < 40)         // black at the top-right
            #expect(y.row(85)[2] < 40)          // black at the bottom-left
        }
    }

    /// Whether stored pixel (x, y) of a w x h buffer tagged `o` lands in the 16x16 top-left
    /// square of the upright picture (EXIF semantics).
    private func isUprightTopLeft(x: Int, y: Int, w: Int, h: Int, _ o: Orientation) -> Bool {
        let (ux, uy): (Int, Int) =
            switch o {
            case .up: (x, y)
            case .upMirrored: (w - 1 - x, y)
            case .down: (w - 1 - x, h - 1 - y)
            case .downMirrored: (x, h - 1 - y)
            case .leftMirrored: (y, x)
            case .right: (h - 1 - y, x)
            case .rightMirrored: (h - 1 - y, w - 1 - x)
            case .left: (y, w - 1 - x)
            }
        return ux < 16 && uy < 16
    }

    @Test func outputOfTheWrongFormatIsRefused() throws {
        let budget = try MemoryBudget(capBytes: 4 << 20)
        let pool = try FramePool(budget: budget, format: .bgra, maxWidth: 64, maxHeight: 64, count: 2)
        let transformer = try FrameTransformer(budget: budget, maxSourceWidth: 64, maxSourceHeight: 64,
                                               maxOutputWidth: 64, maxOutputHeight: 64)
        let src = try pool.acquire(format: .i420, width: 64, height: 64)
        var dst = try pool.acquire(format: .bgra, width: 64, height: 64)
        #expect(throws: CoreError.invalidArgument) { try transformer.apply(src, into: &dst) }
    }
}
