import RTCShareCore

/// The built-in receiver's decoder, whichever codec the stream is: one switch here, so the
/// receiver decodes and checks pictures the same way for both.
public enum VideoDecoder: ~Copyable {
    case vp8(VP8Decoder)
    case h264(H264Decoder)

    public init(codec: VideoCodec) throws(MediaError) {
        switch codec {
        case .vp8: self = .vp8(try VP8Decoder())
        case .h264: self = .h264(try H264Decoder())
        }
    }

    /// Decodes one frame (a VP8 frame, an H.264 access unit in Annex B) and passes the picture
    /// to `body` (the decoder's buffer: valid only inside it); nil when no picture came out.
    public func decode<R>(_ bytes: UnsafeRawBufferPointer,
                          _ body: (DecodedPicture) throws(MediaError) -> R) throws(MediaError) -> R? {
        switch self {
        case .vp8(let d): try d.decode(bytes, body)
        case .h264(let d): try d.decode(bytes, body)
        }
    }
}
