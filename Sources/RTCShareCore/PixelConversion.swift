import CCore

/// Conversions between pictures the caller holds (see `FramePixels(packed:...)` and
/// `FramePixels.region`), for sources that write captured pixels straight into a frame's rows
/// band by band instead of through a `FrameTransformer` and its own scratch. Always upright and
/// in studio range: what the encoders assume of a screen.
public enum PixelConversion {
    /// BGRA/BGRX into I420 of the same size (BT.601, studio range).
    public static func packedToI420(_ source: FramePixels, into output: FramePixels) throws(CoreError) {
        var src = source.image
        var dst = output.image
        try CoreError.check(ccore_bgra_to_i420(&src, &dst, CCORE_RANGE_LIMITED))
    }

    /// Scratch bytes `transform` needs to turn a `width` x `height` picture of `format` into an
    /// I420 picture of `outputWidth` x `outputHeight` (its upright size when `orientation` turns it).
    public static func transformScratchBytes(from format: PixelFormat, width: Int, height: Int,
                                             toWidth outputWidth: Int, height outputHeight: Int,
                                             orientation: Orientation = .up) -> Int {
        var src = ccore_image()
        src.format = format.raw
        src.width = Int32(width)
        src.height = Int32(height)
        var dst = ccore_image()
        dst.format = CCORE_PIXEL_I420
        dst.width = Int32(outputWidth)
        dst.height = Int32(outputHeight)
        return ccore_transform_scratch_size(&src, &dst, Int32(orientation.rawValue))
    }

    /// Converts `source` to I420 and scales it to `output`'s size in one pass (CCore's fused
    /// transform, box or bilinear as the ratio asks), in `scratch` of at least
    /// `transformScratchBytes` bytes; `orientation` says how the source is stored (a screen whose
    /// output is turned), `output` has the upright size.
    public static func transform(_ source: FramePixels, into output: FramePixels, orientation: Orientation = .up,
                                 scratch: UnsafeMutableRawPointer?, scratchBytes: Int) throws(CoreError) {
        var src = source.image
        var dst = output.image
        try CoreError.check(ccore_transform(&src, &dst, Int32(orientation.rawValue), CCORE_FILTER_AUTO,
                                            CCORE_RANGE_LIMITED, scratch, scratchBytes))
    }
}
