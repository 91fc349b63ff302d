import CCore

/// 16-bit PCM helpers over CCore: the byte-order fix app audio needs (some producers hand
/// big-endian samples) and (de)interleaving for encoders that want one layout or the other.
public enum PCM {
    /// Reverses the byte order of every sample in place.
    public static func byteSwap(_ samples: UnsafeMutableBufferPointer<Int16>) {
        guard let base = samples.baseAddress else { return }
        base.withMemoryRebound(to: UInt16.self, capacity: samples.count) { p in
            ccore_pcm_s16_byteswap(p, p, samples.count)
        }
    }

    /// Reads big-endian samples from `bytes` into `output`; returns how many were written
    /// (`min(bytes.count / 2, output.count)`).
    @discardableResult
    public static func bigEndianToNative(_ bytes: UnsafeRawBufferPointer,
                                         into output: UnsafeMutableBufferPointer<Int16>) -> Int {
        let count = min(bytes.count / 2, output.count)
        guard count > 0, let src = bytes.baseAddress, let dst = output.baseAddress else { return 0 }
        ccore_pcm_s16be_to_native(src.assumingMemoryBound(to: UInt8.self), dst, count)
        return count
    }

    /// Interleaves two planes (left, right) of equal length into `output` (2 x frames samples).
    public static func interleave(left: UnsafeBufferPointer<Int16>, right: UnsafeBufferPointer<Int16>,
                                  into output: UnsafeMutableBufferPointer<Int16>) {
        let frames = min(left.count, right.count, output.count / 2)
        guard frames > 0, let l = left.baseAddress, let r = right.baseAddress,
              let dst = output.baseAddress else { return }
        withUnsafeTemporaryAllocation(of: UnsafePointer<Int16>?.self, capacity: 2) { planes in
            planes[0] = l
            planes[1] = r
            ccore_pcm_s16_interleave(planes.baseAddress, 2, frames, dst)
        }
    }

    /// Splits interleaved stereo `input` into two planes.
    public static func deinterleave(_ input: UnsafeBufferPointer<Int16>,
                                    left: UnsafeMutableBufferPointer<Int16>,
                                    right: UnsafeMutableBufferPointer<Int16>) {
        let frames = min(input.count / 2, left.count, right.count)
        guard frames > 0, let src = input.baseAddress, let l = left.baseAddress,
              let r = right.baseAddress else { return }
        withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<Int16>?.self, capacity: 2) { planes in
            planes[0] = l
            planes[1] = r
            ccore_pcm_s16_deinterleave(src, 2, frames, planes.baseAddress)
        }
    }
}
