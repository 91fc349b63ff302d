import CShims
import CVPX
import Glibc
import RTCShareCore

/// libvpx's own VP8 decoder, the oracle the encoder's output is checked against.
final class VP8TestDecoder {
    struct Failure: Error, CustomStringConvertible {
        let status: vpx_codec_err_t
        var description: String { "libvpx decoder: \(String(cString: vpx_codec_err_to_string(status)))" }
    }

    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>

    init() throws {
        context = .allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        let status = rtcs_vpx_dec_init(context, 1)
        guard status == VPX_CODEC_OK else {
            context.deallocate()
            throw Failure(status: status)
        }
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
    }

    /// Decodes one frame and passes the picture to `body`; the picture is libvpx's buffer,
    /// valid only inside `body`.
    func decode<R>(_ bytes: UnsafeRawBufferPointer, _ body: (DecodedPicture) throws -> R) throws -> R {
        let status = vpx_codec_decode(context, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                      UInt32(bytes.count), nil, 0)
        guard status == VPX_CODEC_OK else { throw Failure(status: status) }
        var iterator: vpx_codec_iter_t?
        guard let image = vpx_codec_get_frame(context, &iterator) else { throw Failure(status: VPX_CODEC_ERROR) }
        return try body(DecodedPicture(image: image.pointee))
    }
}

/// A decoded I420 picture borrowed from the decoder.
struct DecodedPicture {
    let image: vpx_image_t
    var width: Int { Int(image.d_w) }
    var height: Int { Int(image.d_h) }

    func sample(plane: Int, x: Int, y: Int) -> UInt8 {
        let (base, stride) =
            switch plane {
            case 0: (image.planes.0!, image.stride.0)
            case 1: (image.planes.1!, image.stride.1)
            default: (image.planes.2!, image.stride.2)
            }
        return base[y * Int(stride) + x]
    }

    /// Row `y` of `plane` (count: the plane's visible width).
    func row(plane: Int, y: Int) -> UnsafeBufferPointer<UInt8> {
        let (base, stride) =
            switch plane {
            case 0: (image.planes.0!, image.stride.0)
            case 1: (image.planes.1!, image.stride.1)
            default: (image.planes.2!, image.stride.2)
            }
        let w = plane == 0 ? width : (width + 1) / 2
        return UnsafeBufferPointer(start: base + y * Int(stride), count: w)
    }
}

/// Picture comparisons between an encoder input and what the decoder gave back.
enum PictureCompare {
    /// PSNR in dB over all three planes (sum of squared errors over every sample).
    static func psnr(_ original: FramePixels, _ decoded: DecodedPicture) -> Double {
        var sse: UInt64 = 0
        var samples = 0
        for plane in 0..<3 {
            let p = original.plane(plane)
            for y in 0..<p.rows {
                let a = p.row(y), b = decoded.row(plane: plane, y: y)
                for x in 0..<p.rowBytes {
                    let d = Int(a[x]) - Int(b[x])
                    sse &+= UInt64(d * d)
                }
                samples += p.rowBytes
            }
        }
        if sse == 0 { return 99 }
        let mse = Double(sse) / Double(samples)
        return 10 * log10(255 * 255 / mse)
    }

    /// Largest absolute difference between decoded luma and `expected` over a region.
    static func maxLumaDeviation(_ decoded: DecodedPicture, from expected: UInt8,
                                 x: Range<Int>, y: Range<Int>) -> Int {
        var worst = 0
        for row in y {
            let r = decoded.row(plane: 0, y: row)
            for col in x { worst = max(worst, abs(Int(r[col]) - Int(expected))) }
        }
        return worst
    }
}
