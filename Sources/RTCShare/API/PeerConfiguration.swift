import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP

/// How `--peer host:port` sends: where to, how protected, which RTP features.
public struct PeerConfiguration: Sendable {
    /// Video RTP (and muxed RTCP) goes here.
    public var videoPeer: SocketAddress
    /// Audio RTP goes here (default: the video port + 2; SDP receivers bind port and port+1 per
    /// media section, so sections must be at least two ports apart).
    public var audioPeer: SocketAddress
    /// Largest UDP payload, SRTP trailer and header extensions included.
    public var mtu = 1200
    /// nil: plain RTP (`--insecure`).
    public var protection: SRTPMasterKey?
    /// Send the orientation in a header extension (CVO) instead of turning the pixels.
    public var signalsOrientation = false
    /// Retransmit on an RFC 4588 RTX stream instead of resending the packet as it was.
    public var usesRTX = false
    /// RTCP to port+1 of each peer (from a socket of its own), instead of on the RTP ports.
    public var separateRTCPPorts = false
    /// Bytes of sent video kept for retransmission.
    public var historyBytes = 512 << 10
    /// Whether audio is sent (an audio section in the SDP, an Opus stream).
    public var sendsAudio = false
    public var audioChannels = 2
    /// The share's frame rate, for `a=framerate` (receivers that write files use it).
    public var framesPerSecond: Int?
    /// The video codec sent (one per share: the SDP names only it).
    public var videoCodec = VideoCodec.vp8

    /// Payload types and header extension ids rtcshare uses (dynamic range, what WebRTC peers use).
    public static let vp8PayloadType: UInt8 = 96
    public static let rtxPayloadType: UInt8 = 97
    /// H.264 and its RTX, the numbers the WHIP offer gives them too.
    public static let h264PayloadType: UInt8 = 102
    public static let h264RTXPayloadType: UInt8 = 103
    public static let opusPayloadType: UInt8 = 111
    public static let absSendTimeID: UInt8 = 2
    public static let transportSequenceID: UInt8 = 3
    public static let videoOrientationID: UInt8 = 4

    /// The video payload type of the codec sent, and its RTX payload type.
    public var videoPayloadType: UInt8 { videoCodec == .h264 ? Self.h264PayloadType : Self.vp8PayloadType }
    public var videoRTXPayloadType: UInt8 { videoCodec == .h264 ? Self.h264RTXPayloadType : Self.rtxPayloadType }

    /// RFC 6184 §8.1 for what rtcshare sends: constrained baseline (42 e0), level 3.1 (1f),
    /// non-interleaved mode; level-asymmetry-allowed lets a receiver that decodes a higher level
    /// answer with it (RFC 6184 §8.2.2).
    /// The H.264 level the SDP announces: that of the share's output size and rate.
    public var h264LevelIDC = 31

    /// Once the first video frame is sent, the pages of code and read-only data only the start
    /// touched are dropped (`StartupCodePages`): process-wide, so an embedder with its own use
    /// for them may leave it off. The CLI turns it on.
    public var releasesStartupCodePages = false

    public init(videoPeer: SocketAddress, audioPeer: SocketAddress? = nil) {
        self.videoPeer = videoPeer
        self.audioPeer = audioPeer ?? videoPeer.with(port: videoPeer.port <= 65_533 ? videoPeer.port + 2 : videoPeer.port - 2)
    }
}
