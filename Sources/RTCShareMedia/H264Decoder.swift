import CShims

/// openh264's H.264 decoder, for the built-in receiver: one access unit (Annex B, as
/// `H264Depacketizer` reassembles it) in, at most one picture out, no reordering delay (the
/// stream is baseline: no B-frames). openh264 allocates its frame buffers itself when the first
/// SPS arrives (budgeted, not pooled, like the VP8 decoder). One thread.
public struct H264Decoder: ~Copyable {
    private let handle: OpaquePointer

    public init() throws(MediaError) {
        var handle: OpaquePointer?
        guard rtcs_openh264_load() == 0 else { throw .library(String(cString: rtcs_openh264_load_error())) }
        let status = rtcs_openh264_decoder_open(&handle)
        guard status == 0, let handle else { throw .openh264(status, "opening the decoder") }
        self.handle = handle
    }

    deinit { rtcs_openh264_decoder_close(handle) }

    /// Decodes one access unit and passes the picture to `body` (openh264's buffer: valid only
    /// inside `body`); nil when the unit made no picture (parameter sets alone). A corrupt unit,
    /// or one that refers to a picture never decoded, throws; the decoder stays usable and
    /// recovers at the next IDR.
    public func decode<R>(_ bytes: UnsafeRawBufferPointer,
                          _ body: (DecodedPicture) throws(MediaError) -> R) throws(MediaError) -> R? {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { throw .malformedInput("empty H.264 access unit") }
        var picture = rtcs_openh264_picture()
        var hasPicture: Int32 = 0
        let status = rtcs_openh264_decoder_decode(handle, base.assumingMemoryBound(to: UInt8.self), bytes.count,
                                                  &picture, &hasPicture)
        guard status == 0 else { throw .openh264(status, "decoding") }
        guard hasPicture != 0, let y = picture.planes.0, let u = picture.planes.1, let v = picture.planes.2 else {
            return nil
        }
        return try body(DecodedPicture(planes: (y, u, v),
                                       strides: (Int(picture.strides.0), Int(picture.strides.1), Int(picture.strides.2)),
                                       width: Int(picture.width), height: Int(picture.height)))
    }
}
