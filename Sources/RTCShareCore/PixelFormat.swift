import CCore

/// Pixel layouts a frame can hold. Encoder input is always `.i420`.
public enum PixelFormat: Sendable, Equatable, CaseIterable {
    /// Planar Y, U, V with 2x2-subsampled chroma.
    case i420
    /// Y plane and one interleaved UV plane (what many cameras and hardware decoders give).
    case nv12
    /// Packed bytes B, G, R, A (an X11 screen on little-endian).
    case bgra
    /// As `bgra` with the fourth byte ignored.
    case bgrx

    var raw: ccore_pixel_format {
        switch self {
        case .i420: CCORE_PIXEL_I420
        case .nv12: CCORE_PIXEL_NV12
        case .bgra: CCORE_PIXEL_BGRA
        case .bgrx: CCORE_PIXEL_BGRX
        }
    }

    init?(raw: ccore_pixel_format) {
        switch raw {
        case CCORE_PIXEL_I420: self = .i420
        case CCORE_PIXEL_NV12: self = .nv12
        case CCORE_PIXEL_BGRA: self = .bgra
        case CCORE_PIXEL_BGRX: self = .bgrx
        default: return nil
        }
    }

    /// Number of planes.
    public var planeCount: Int { Int(ccore_pixel_format_planes(raw)) }

    /// Bytes a `width` x `height` image of this format takes with 64-byte-aligned rows, or nil
    /// for a size CCore does not accept.
    public func bytes(width: Int, height: Int) -> Int? {
        guard let w = Int32(exactly: width), let h = Int32(exactly: height) else { return nil }
        let n = ccore_image_bytes(raw, w, h)
        return n == 0 ? nil : n
    }
}
