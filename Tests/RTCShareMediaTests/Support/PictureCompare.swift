import CShims
import CVPX
import Glibc
import RTCShareCore
import RTCShareMedia

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

    /// Macroblocks (16x16 luma) of one value give or take 2: what a flat picture, or the part of
    /// one not coded yet, is made of, and what a page of text has none of.
    static func flatMacroblocks(_ decoded: DecodedPicture) -> Int {
        var flat = 0
        for top in stride(from: 0, to: decoded.height - 15, by: 16) {
            for left in stride(from: 0, to: decoded.width - 15, by: 16) {
                var low = UInt8.max, high = UInt8.min
                for y in top..<top + 16 {
                    let r = decoded.row(plane: 0, y: y)
                    for x in left..<left + 16 {
                        low = min(low, r[x])
                        high = max(high, r[x])
                    }
                }
                if high - low <= 2 { flat += 1 }
            }
        }
        return flat
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
