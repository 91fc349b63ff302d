/// The show_frame bit of a VP8 frame's tag (RFC 6386 §9.1), the first three bytes of every frame,
/// key and inter alike:
///
/// ```
///  byte 0:  bit 0    frame type (0 key, 1 inter)
///           bits 1-3 version
///           bit 4    show_frame
///           bits 5-7 first partition size (low bits; bytes 1 and 2 hold the rest)
/// ```
///
/// A decoder decodes a frame whose bit is clear into its reference buffers like any other and
/// outputs no picture for it (libvpx's `vp8dx_get_raw_frame`, ffmpeg's `invisible`), so the
/// viewer keeps the last picture shown. Nothing else in the frame depends on the bit, and RFC 7741
/// carries it as it is (the payload header's H bit is this bit).
public enum VP8FrameTag {
    static let showFrameBit: UInt8 = 0x10

    /// Whether a decoder shows `frame`; nil for fewer than the tag's three bytes.
    public static func isShown(_ frame: UnsafeRawBufferPointer) -> Bool? {
        guard frame.count >= 3 else { return nil }
        return frame[0] & showFrameBit != 0
    }

    /// Sets or clears `frame`'s show_frame bit in place; false (nothing changed) for fewer than
    /// the tag's three bytes.
    @discardableResult
    public static func setShown(_ shown: Bool, in frame: UnsafeMutableRawBufferPointer) -> Bool {
        guard frame.count >= 3 else { return false }
        frame[0] = shown ? frame[0] | showFrameBit : frame[0] & ~showFrameBit
        return true
    }
}
