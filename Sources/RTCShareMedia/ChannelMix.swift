/// Up- and down-mixing of interleaved 16-bit PCM between mono and stereo, to the channel count
/// the Opus encoder was opened with: mono is copied to both sides; stereo is averaged to mono
/// (the average cannot clip, unlike a sum).
public enum ChannelMix {
    /// Converts whole frames of `input` (`from` channels) into `output` (`to` channels, 1 or
    /// 2), as many as fit; returns the frames converted.
    @discardableResult
    public static func convert(_ input: UnsafeBufferPointer<Int16>, channels from: Int,
                               into output: UnsafeMutableBufferPointer<Int16>, channels to: Int) -> Int {
        guard (from == 1 || from == 2), (to == 1 || to == 2) else { return 0 }
        let frames = min(input.count / from, output.count / to)
        guard frames > 0, let src = input.baseAddress, let dst = output.baseAddress else { return 0 }
        switch (from, to) {
        case (1, 2):
            for i in 0..<frames {
                dst[2 * i] = src[i]
                dst[2 * i + 1] = src[i]
            }
        case (2, 1):
            for i in 0..<frames {
                dst[i] = Int16(truncatingIfNeeded: (Int32(src[2 * i]) + Int32(src[2 * i + 1])) >> 1)
            }
        default:
            dst.update(from: src, count: frames * to)
        }
        return frames
    }
}
