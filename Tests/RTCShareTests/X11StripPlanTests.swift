import RTCShareCore
import RTCShareMedia
import Testing
@testable import RTCShare

/// The X11 source reads the screen in strips and scales each strip on its own; these check
/// that the strips line up so that this gives exactly the bytes of scaling the whole picture.
@Suite struct X11StripPlanTests {
    /// Screens and output boxes boards meet, and awkward ones.
    static let cases: [(screen: PictureSize, box: PictureSize)] = [
        (.init(width: 1920, height: 1080), .init(width: 1280, height: 720)),
        (.init(width: 1920, height: 1080), .init(width: 1920, height: 1080)),
        (.init(width: 1366, height: 768), .init(width: 1280, height: 720)),
        (.init(width: 1280, height: 1024), .init(width: 1280, height: 720)),
        (.init(width: 1680, height: 1050), .init(width: 1280, height: 720)),
        (.init(width: 2560, height: 1440), .init(width: 640, height: 360)),
        (.init(width: 3840, height: 2160), .init(width: 1280, height: 720)),
        (.init(width: 1920, height: 1081), .init(width: 1280, height: 720)),
        (.init(width: 1001, height: 757), .init(width: 426, height: 240)),
        (.init(width: 640, height: 480), .init(width: 320, height: 240)),
        (.init(width: 640, height: 480), .init(width: 1280, height: 720)),
        (.init(width: 100, height: 60), .init(width: 64, height: 36)),
    ]

    private func plan(_ c: (screen: PictureSize, box: PictureSize)) -> X11StripPlan {
        let frame = X11StripPlan.fittedSize(screenWidth: c.screen.width, screenHeight: c.screen.height, into: c.box)
        return X11StripPlan.make(screenWidth: c.screen.width, screenHeight: c.screen.height, frame: frame)
    }

    @Test func aFullHDScreenAt720pIsReadIn66RowStripsOf480KiB() {
        let p = plan(Self.cases[0])
        #expect(p.frameWidth == 1280 && p.frameHeight == 720 && p.capturedHeight == 1080)
        #expect(p.screenRows == 66 && p.frameRows == 44 && p.stripCount == 17)
        #expect(p.segmentBytes == 1920 * 66 * 4)
    }

    @Test(arguments: 0..<cases.count)
    func stripsAreAlignedEvenAndCoverTheScreen(index: Int) {
        let c = Self.cases[index]
        let p = plan(c)
        #expect(p.frameWidth <= c.screen.width && p.frameHeight <= c.screen.height)
        #expect(p.frameWidth <= c.box.width || p.frameWidth == c.screen.width)
        #expect(p.capturedHeight <= c.screen.height && p.capturedHeight >= c.screen.height - 8)
        #expect(p.frameHeight >= min(c.box.height, c.screen.height) * 15 / 16)
        // Same ratio in every strip; even rows where a next strip starts.
        #expect(p.screenRows * p.frameHeight == p.frameRows * p.capturedHeight)
        if p.stripCount > 1 { #expect(p.screenRows % 2 == 0 && p.frameRows % 2 == 0) }
        var screenRows = 0, frameRows = 0
        for i in 0..<p.stripCount {
            let s = p.strip(i)
            #expect(s.screenY == screenRows && s.frameY == frameRows)
            #expect(s.screenRows > 0 && s.frameRows > 0)
            screenRows += s.screenRows
            frameRows += s.frameRows
        }
        #expect(screenRows == p.capturedHeight && frameRows == p.frameHeight)
        #expect(p.segmentBytes <= 1 << 20, "segment \(p.segmentBytes) bytes")
    }

    /// The heart of it: converting and scaling strip by strip into the frame gives the same
    /// bytes as one whole-picture transform (noise is the hardest content for that).
    @Test(arguments: 0..<cases.count)
    func stripByStripScalingEqualsWholePictureScaling(index: Int) throws {
        let p = plan(Self.cases[index])
        let budget = try MemoryBudget(capBytes: 96 << 20, prefault: false)
        let screens = try FramePool(budget: budget, format: .bgrx, maxWidth: p.screenWidth,
                                    maxHeight: p.capturedHeight, count: 1)
        let frames = try FramePool(budget: budget, format: .i420, maxWidth: p.frameWidth,
                                   maxHeight: p.frameHeight, count: 2)
        var screen = try screens.acquire(format: .bgrx, width: p.screenWidth, height: p.capturedHeight)
        var seed: UInt32 = 0x1234_5678 &+ UInt32(index)
        screen.withMutablePixels { pixels in
            let plane = pixels.plane(0)
            for y in 0..<plane.rows {
                let row = plane.row(y)
                for x in 0..<row.count {
                    seed = seed &* 1_664_525 &+ 1_013_904_223
                    row[x] = UInt8(truncatingIfNeeded: seed >> 24)
                }
            }
        }
        var whole = try frames.acquire(format: .i420, width: p.frameWidth, height: p.frameHeight)
        let transformer = try FrameTransformer(budget: budget, maxSourceWidth: p.screenWidth,
                                               maxSourceHeight: p.capturedHeight,
                                               maxOutputWidth: p.frameWidth, maxOutputHeight: p.frameHeight)
        try transformer.apply(screen, into: &whole, letterbox: false)

        var strips = try frames.acquire(format: .i420, width: p.frameWidth, height: p.frameHeight)
        let scratch = try BudgetBlock(budget: budget, byteCount: max(X11Source.transformScratchBytes(p), 64))
        let (base, stride) = screen.withPixels { ($0.plane(0).row(0).baseAddress!, $0.plane(0).stride) }
        strips.withMutablePixels { pixels in
            for i in 0..<p.stripCount {
                #expect(throws: Never.self, "strip \(i)") {
                    try X11Source.convertStrip(i, of: p, from: base + p.strip(i).screenY * stride, stride: stride,
                                               into: pixels, scratch: scratch.base, scratchBytes: scratch.byteCount)
                }
            }
        }
        var mismatches = 0
        whole.withPixels { a in
            strips.withPixels { b in
                for plane in 0..<3 {
                    let pa = a.plane(plane), pb = b.plane(plane)
                    for y in 0..<pa.rows where !pa.row(y).elementsEqual(pb.row(y)) { mismatches += 1 }
                }
            }
        }
        #expect(mismatches == 0, "\(p): \(mismatches) rows differ")
    }

    @Test func fittedSizeKeepsTheShapeAndNeverEnlarges() {
        func fit(_ w: Int, _ h: Int, _ bw: Int, _ bh: Int) -> PictureSize {
            X11StripPlan.fittedSize(screenWidth: w, screenHeight: h, into: PictureSize(width: bw, height: bh))
        }
        #expect(fit(1920, 1080, 1280, 720) == PictureSize(width: 1280, height: 720))
        #expect(fit(1280, 1024, 1280, 720) == PictureSize(width: 900, height: 720))
        #expect(fit(1920, 1080, 720, 1280) == PictureSize(width: 720, height: 404))
        #expect(fit(640, 480, 1280, 720) == PictureSize(width: 640, height: 480))
        #expect(fit(1366, 768, 1280, 720) == PictureSize(width: 1280, height: 720))  // within 1%: no bars
    }

    @Test func theStripHashNoticesAOneByteChange() {
        var rows = [UInt8](repeating: 90, count: 64 * 37)
        rows.withUnsafeMutableBufferPointer { buf in
            let base = buf.baseAddress!
            let before = X11Source.hash(rows: base, stride: 64, width: 61, count: 37, into: 7)
            #expect(X11Source.hash(rows: base, stride: 64, width: 61, count: 37, into: 7) == before)
            for offset in [0, 7, 8, 15, 16, 60, 64 * 20 + 33, 64 * 36 + 60] {
                base[offset] ^= 0x80
                #expect(X11Source.hash(rows: base, stride: 64, width: 61, count: 37, into: 7) != before, "byte \(offset)")
                base[offset] ^= 0x80
            }
            // Bytes past the row width (stride padding) are not part of the picture.
            base[62] = 1
            #expect(X11Source.hash(rows: base, stride: 64, width: 61, count: 37, into: 7) == before)
        }
    }
}
