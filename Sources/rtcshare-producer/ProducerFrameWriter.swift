import RTCShareCore
import RTCShareMedia

/// Formats the producer can write into its shared buffers.
enum ProducerFormat: String {
    case i420, nv12, bgra

    var pixelFormat: PixelFormat {
        switch self {
        case .i420: .i420
        case .nv12: .nv12
        case .bgra: .bgra
        }
    }
}

/// Where each plane of one frame lies inside a buffer, and how big a buffer is: the layout a
/// FRAME message describes. Rows are aligned to `strideAlign` bytes (as capture APIs do).
struct ProducerFrameLayout {
    let format: ProducerFormat
    let width: Int
    let height: Int
    let strides: SIMD3<UInt32>
    let offsets: SIMD3<UInt32>
    /// Bytes of one buffer (64-byte multiple, so buffers stay cache-line aligned back to back).
    let bufferBytes: Int

    init(format: ProducerFormat, width: Int, height: Int, strideAlign: Int) {
        func aligned(_ n: Int) -> Int { (n + strideAlign - 1) / strideAlign * strideAlign }
        self.format = format
        self.width = width
        self.height = height
        let ch = (height + 1) / 2, cw = (width + 1) / 2
        let end: Int
        switch format {
        case .i420:
            let ys = aligned(width), cs = aligned(cw)
            let u = ys * height, v = u + cs * ch
            strides = SIMD3(UInt32(ys), UInt32(cs), UInt32(cs))
            offsets = SIMD3(0, UInt32(u), UInt32(v))
            end = v + cs * ch
        case .nv12:
            let ys = aligned(width), cs = aligned(cw * 2)
            let uv = ys * height
            strides = SIMD3(UInt32(ys), UInt32(cs), 0)
            offsets = SIMD3(0, UInt32(uv), 0)
            end = uv + cs * ch
        case .bgra:
            let s = aligned(width * 4)
            strides = SIMD3(UInt32(s), 0, 0)
            offsets = SIMD3(0, 0, 0)
            end = s * height
        }
        bufferBytes = (end + 63) / 64 * 64
    }

    /// Writes an I420 picture of this layout's size into the buffer at `base`.
    func write(_ pixels: FramePixels, to base: UnsafeMutableRawPointer) {
        precondition(pixels.width == width && pixels.height == height)
        let y = pixels.plane(0), u = pixels.plane(1), v = pixels.plane(2)
        let out = base.assumingMemoryBound(to: UInt8.self)
        switch format {
        case .i420:
            for (p, plane) in [y, u, v].enumerated() {
                let dst = out + Int(offsets[p])
                for r in 0..<plane.rows {
                    (dst + r * Int(strides[p])).update(from: plane.row(r).baseAddress!, count: plane.rowBytes)
                }
            }
        case .nv12:
            for r in 0..<y.rows {
                (out + r * Int(strides[0])).update(from: y.row(r).baseAddress!, count: y.rowBytes)
            }
            let uvBase = out + Int(offsets[1])
            for r in 0..<u.rows {
                let dst = uvBase + r * Int(strides[1])
                let ur = u.row(r).baseAddress!, vr = v.row(r).baseAddress!
                for x in 0..<u.rowBytes {
                    dst[2 * x] = ur[x]
                    dst[2 * x + 1] = vr[x]
                }
            }
        case .bgra:
            writeBGRA(y, u, v, to: out)
        }
    }

    /// BT.601 studio-range YUV to full-range BGRA, the inverse of what rtcshare's conversion
    /// does (so the marker's Y 235 / 16 become white / black and come back as 235 / 16).
    private func writeBGRA(_ y: PixelPlane, _ u: PixelPlane, _ v: PixelPlane, to out: UnsafeMutablePointer<UInt8>) {
        @inline(__always) func clamp(_ x: Int) -> UInt8 { UInt8(truncatingIfNeeded: min(max(x, 0), 255)) }
        let stride = Int(strides[0])
        for r in 0..<height {
            let yr = y.row(r).baseAddress!, ur = u.row(r / 2).baseAddress!, vr = v.row(r / 2).baseAddress!
            let dst = out + r * stride
            var x = 0
            while x < width {
                let d = Int(ur[x >> 1]) - 128, e = Int(vr[x >> 1]) - 128
                let rv = 409 * e + 128, gv = -100 * d - 208 * e + 128, bv = 516 * d + 128
                for k in x..<min(x + 2, width) {
                    let c = 298 * (Int(yr[k]) - 16)
                    let px = dst + 4 * k
                    px[0] = clamp((c + bv) >> 8)
                    px[1] = clamp((c + gv) >> 8)
                    px[2] = clamp((c + rv) >> 8)
                    px[3] = 255
                }
                x += 2
            }
        }
    }
}
