import CShims
import CVPX

/// libvpx's VP8 decoder, for the built-in receiver. It allocates its frame buffers itself when
/// the first frame arrives (budgeted, not pooled, like the encoder), one thread.
public struct VP8Decoder: ~Copyable {
    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>

    public init() throws(MediaError) {
        context = .allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        let status = rtcs_vpx_dec_init(context, 1)
        if let error = MediaError(vpx: status) {
            context.deallocate()
            throw error
        }
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
    }

    /// Decodes one frame and passes the picture to `body` (libvpx's buffer: valid only inside
    /// `body`). A corrupt or undecodable frame throws; the decoder stays usable and recovers at
    /// the next keyframe.
    public func decode<R>(_ bytes: UnsafeRawBufferPointer,
                                   _ body: (DecodedPicture) throws(MediaError) -> R) throws(MediaError) -> R? {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            throw .vpx(.corruptFrame, detail: "empty frame")
        }
        let status = vpx_codec_decode(context, base.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count), nil, 0)
        if let error = MediaError(vpx: status, context: context) { throw error }
        var iterator: vpx_codec_iter_t?
        guard let image = vpx_codec_get_frame(context, &iterator) else { return nil }
        return try body(DecodedPicture(image: image.pointee))
    }
}

/// A decoded I420 picture borrowed from a decoder (libvpx's or openh264's buffers).
public struct DecodedPicture {
    /// Each plane's first byte and stride: Y, U, V.
    let planes: (UnsafePointer<UInt8>, UnsafePointer<UInt8>, UnsafePointer<UInt8>)
    let strides: (Int, Int, Int)
    public let width: Int
    public let height: Int

    init(image: vpx_image_t) {
        planes = (UnsafePointer(image.planes.0!), UnsafePointer(image.planes.1!), UnsafePointer(image.planes.2!))
        strides = (Int(image.stride.0), Int(image.stride.1), Int(image.stride.2))
        width = Int(image.d_w)
        height = Int(image.d_h)
    }

    init(planes: (UnsafePointer<UInt8>, UnsafePointer<UInt8>, UnsafePointer<UInt8>), strides: (Int, Int, Int),
         width: Int, height: Int) {
        self.planes = planes
        self.strides = strides
        self.width = width
        self.height = height
    }

    /// Plane 0 (Y), 1 (U) or 2 (V): its first byte, stride, visible width and rows.
    public func plane(_ index: Int) -> (base: UnsafePointer<UInt8>, stride: Int, width: Int, rows: Int) {
        let chromaW = (width + 1) / 2, chromaH = (height + 1) / 2
        switch index {
        case 0: return (planes.0, strides.0, width, height)
        case 1: return (planes.1, strides.1, chromaW, chromaH)
        default: return (planes.2, strides.2, chromaW, chromaH)
        }
    }

    /// Row `y` of `plane`, its visible width long.
    public func row(plane index: Int, y: Int) -> UnsafeBufferPointer<UInt8> {
        let p = plane(index)
        precondition(y >= 0 && y < p.rows, "row out of range")
        return UnsafeBufferPointer(start: p.base + y * p.stride, count: p.width)
    }

    public func sample(plane index: Int, x: Int, y: Int) -> UInt8 { row(plane: index, y: y)[x] }
}
