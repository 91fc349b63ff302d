import CCore

/// Turns captured frames into encoder input: convert to I420, correct the orientation and scale
/// to the output size in one fused pass (CCore's `ccore_transform`), using scratch carved once
/// from the budget. One transformer serves one pipeline thread.
public final class FrameTransformer {
    private let scratch: BudgetBlock

    /// Scaling filter.
    public enum Filter: Sendable {
        /// Box for large downscales, bilinear otherwise.
        case automatic, bilinear, box
        var raw: ccore_scale_filter {
            switch self {
            case .automatic: CCORE_FILTER_AUTO
            case .bilinear: CCORE_FILTER_BILINEAR
            case .box: CCORE_FILTER_BOX
            }
        }
    }

    /// Colour range of RGB sources' conversion.
    public enum ColorRange: Sendable {
        /// Studio range (what VP8 decoders assume).
        case limited
        /// Full range.
        case full
    }

    /// Sizes its scratch for sources up to `maxSourceWidth` x `maxSourceHeight` in any format
    /// and orientation, and outputs up to `maxOutputWidth` x `maxOutputHeight`.
    public init(budget: MemoryBudget, maxSourceWidth: Int, maxSourceHeight: Int,
                maxOutputWidth: Int, maxOutputHeight: Int) throws(CoreError) {
        let needed = try Self.scratchBytes(maxSourceWidth: maxSourceWidth, maxSourceHeight: maxSourceHeight,
                                           maxOutputWidth: maxOutputWidth, maxOutputHeight: maxOutputHeight)
        self.scratch = try BudgetBlock(budget: budget, byteCount: max(needed, 64))
    }

    /// Scratch bytes a transformer for these sizes holds (what the memory planner budgets).
    public static func scratchBytes(maxSourceWidth: Int, maxSourceHeight: Int, maxOutputWidth: Int,
                                    maxOutputHeight: Int) throws(CoreError) -> Int {
        guard let sw = Int32(exactly: maxSourceWidth), let sh = Int32(exactly: maxSourceHeight),
              let dw = Int32(exactly: maxOutputWidth), let dh = Int32(exactly: maxOutputHeight),
              sw > 0, sh > 0, dw > 0, dh > 0 else { throw .invalidArgument }
        var needed = 64
        // A source may arrive in either orientation; size for the worst combination.
        for format in PixelFormat.allCases {
            for (w, h) in [(sw, sh), (sh, sw)] {
                for orientation in Orientation.allCases {
                    var src = ccore_image()
                    src.format = format.raw
                    src.width = w
                    src.height = h
                    var dst = ccore_image()
                    dst.format = CCORE_PIXEL_I420
                    dst.width = dw
                    dst.height = dh
                    needed = max(needed, ccore_transform_scratch_size(&src, &dst,
                                                                      Int32(orientation.rawValue)))
                }
            }
        }
        return needed
    }

    /// Bytes of scratch held.
    public var scratchSize: Int { scratch.byteCount }

    /// Writes `source`, corrected for its orientation tag (or `orientation` if given), converted
    /// and scaled, into `output`, which must be an I420 frame. With `letterbox` (the default) a
    /// picture whose upright shape differs from the output's keeps its aspect ratio, centred
    /// between black bars; without it, it is stretched to fill the output.
    public func apply(_ source: borrowing FrameSlot, into output: inout FrameSlot,
                      orientation: Orientation? = nil, filter: Filter = .automatic,
                      range: ColorRange = .limited, letterbox: Bool = true) throws(CoreError) {
        var src = source.image
        var dst = output.image
        let tagged = orientation ?? source.orientation
        if letterbox, dst.format == CCORE_PIXEL_I420 {
            let (uw, uh) = tagged.uprightSize(width: Int(src.width), height: Int(src.height))
            let fit = Self.fittedRect(pictureWidth: uw, pictureHeight: uh,
                                      intoWidth: Int(dst.width), height: Int(dst.height))
            if fit.width != Int(dst.width) || fit.height != Int(dst.height) {
                Self.paintBlack(dst)
                dst = FramePixels(image: dst).region(x: fit.x, y: fit.y, width: fit.width, height: fit.height).image
            }
        }
        let rawRange = range == .limited ? CCORE_RANGE_LIMITED : CCORE_RANGE_FULL
        try CoreError.check(ccore_transform(&src, &dst, Int32(tagged.rawValue), filter.raw, rawRange,
                                            scratch.base, scratch.byteCount))
        output.ptsMicroseconds = source.ptsMicroseconds
        output.orientation = .up
    }

    /// The largest rectangle of the picture's aspect ratio inside the output, centred, with
    /// even origin and size so that 4:2:0 chroma lines up.
    static func fittedRect(pictureWidth pw: Int, pictureHeight ph: Int, intoWidth ow: Int,
                           height oh: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        guard pw > 0, ph > 0, pw * oh != ph * ow else { return (0, 0, ow, oh) }
        var w = ow, h = oh
        if pw * oh > ph * ow { h = max(2, (ow * ph / pw) & ~1) } else { w = max(2, (oh * pw / ph) & ~1) }
        w = min(w, ow)
        h = min(h, oh)
        return (((ow - w) / 2) & ~1, ((oh - h) / 2) & ~1, w, h)
    }

    /// Black in studio range: Y 16, chroma 128.
    private static func paintBlack(_ image: ccore_image) {
        let cw = (Int(image.width) + 1) / 2, ch = (Int(image.height) + 1) / 2
        fill(image.plane.0, stride: image.stride.0, width: Int(image.width), rows: Int(image.height), 16)
        fill(image.plane.1, stride: image.stride.1, width: cw, rows: ch, 128)
        fill(image.plane.2, stride: image.stride.2, width: cw, rows: ch, 128)
    }

    private static func fill(_ plane: UnsafeMutablePointer<UInt8>?, stride: Int32, width: Int,
                             rows: Int, _ value: UInt8) {
        guard let plane else { return }
        for y in 0..<rows { (plane + y * Int(stride)).update(repeating: value, count: width) }
    }
}
