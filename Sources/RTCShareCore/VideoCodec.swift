/// The video codecs a share can send. The pipeline, the RTP packetizer, the SDP and the memory
/// plan each pick their part by this one value.
public enum VideoCodec: String, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    /// VP8 (libvpx), RFC 7741 on the wire.
    case vp8
    /// H.264 constrained baseline (openh264), RFC 6184 packetization-mode 1 on the wire.
    case h264

    /// The name SDP gives it (`a=rtpmap:<pt> VP8/90000`, `H264/90000`).
    public var encodingName: String {
        switch self {
        case .vp8: "VP8"
        case .h264: "H264"
        }
    }

    /// The name people read (status lines, the plan).
    public var description: String {
        switch self {
        case .vp8: "VP8"
        case .h264: "H.264"
        }
    }
}

/// Which codec a share should use: one of them, or `auto` (VP8 where rtcshare decides alone,
/// as with `--peer`; with WHIP both are offered and the server's answer decides).
public enum VideoCodecChoice: String, Sendable, Equatable, CaseIterable {
    case vp8, h264, auto

    /// The codec when nobody else has a say (`--peer`, files): `auto` is VP8.
    public var resolvedAlone: VideoCodec {
        switch self {
        case .vp8, .auto: .vp8
        case .h264: .h264
        }
    }

    /// The codecs to offer a WebRTC server, in order of preference.
    public var offered: [VideoCodec] {
        switch self {
        case .vp8: [.vp8]
        case .h264: [.h264]
        case .auto: [.vp8, .h264]
        }
    }
}
