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
