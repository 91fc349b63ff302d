import RTCShareCore
import RTCShareDTLS
import RTCShareRTP

/// What goes into rtcshare's WebRTC offer: the transport (ICE credentials, DTLS fingerprint,
/// host, server-reflexive and relayed candidates), the streams (SSRCs, CNAME, msid), and the numbers (payload types,
/// header extension IDs). The answer is read against the same value, so what was offered and
/// what is accepted cannot drift apart.
///
/// Defaults are the numbers `--peer` uses (VP8 96, RTX 97, Opus 111, abs-send-time 2,
/// transport-wide-cc 3, CVO 4), with the MID extension on 1.
public struct WebRTCOfferConfiguration: Sendable, Equatable {
    /// A candidate of ours (RFC 8839 §5.1), UDP, component 1 (RTP and RTCP are muxed): a host
    /// address, a server-reflexive one with the host address it maps (`raddr`/`rport`), or a
    /// TURN relay's address with the address the TURN server saw.
    public struct Candidate: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case host
            case serverReflexive = "srflx"
            case relayed = "relay"
        }

        public var foundation: String
        public var priority: UInt32
        /// A numeric IPv4 or IPv6 address.
        public var address: String
        public var port: Int
        public var kind: Kind
        /// The base of a server-reflexive candidate (numeric address, port); nil for host.
        public var related: (address: String, port: Int)?

        public init(address: String, port: Int, priority: UInt32, foundation: String) {
            self.address = address
            self.port = port
            self.priority = priority
            self.foundation = foundation
            kind = .host
        }

        /// A server-reflexive candidate: `address:port` as a STUN server saw our
        /// `relatedAddress:relatedPort`.
        public init(serverReflexive address: String, port: Int, priority: UInt32, foundation: String,
                    relatedAddress: String, relatedPort: Int) {
            self.init(address: address, port: port, priority: priority, foundation: foundation)
            kind = .serverReflexive
            related = (relatedAddress, relatedPort)
        }

        /// A relayed candidate: `address:port` on a TURN server, which sees us as
        /// `relatedAddress:relatedPort`.
        public init(relayed address: String, port: Int, priority: UInt32, foundation: String,
                    relatedAddress: String, relatedPort: Int) {
            self.init(address: address, port: port, priority: priority, foundation: foundation)
            kind = .relayed
            related = (relatedAddress, relatedPort)
        }

        /// `1 1 udp 2130706431 192.0.2.1 50000 typ host`, or
        /// `2 1 udp 1694498815 198.51.100.7 40000 typ srflx raddr 192.0.2.1 rport 50000`
        public var sdpValue: String {
            var s = "\(foundation) 1 udp \(priority) \(address) \(port) typ \(kind.rawValue)"
            if let related { s += " raddr \(related.address) rport \(related.port)" }
            return s
        }

        public static func == (a: Candidate, b: Candidate) -> Bool {
            a.foundation == b.foundation && a.priority == b.priority && a.address == b.address && a.port == b.port
                && a.kind == b.kind && a.related?.address == b.related?.address && a.related?.port == b.related?.port
        }
    }

    /// A video codec offered, in order of preference: VP8, and H.264 with its `a=fmtp`
    /// (constrained baseline, packetization-mode 1).
    public struct VideoCodec: Sendable, Equatable {
        public enum Name: String, Sendable {
            case vp8 = "VP8"
            case h264 = "H264"
        }

        public var name: Name
        public var payloadType: Int
        /// The RFC 4588 retransmission payload type for this codec, nil for none.
        public var rtxPayloadType: Int?
        /// H.264: the level announced, that of the size and rate sent (`H264Level`).
        public var h264LevelIDC = 31

        public init(_ name: Name, payloadType: Int, rtxPayloadType: Int?) {
            self.name = name
            self.payloadType = payloadType
            self.rtxPayloadType = rtxPayloadType
        }

        public static let vp8 = VideoCodec(.vp8, payloadType: 96, rtxPayloadType: 97)
        /// The numbers `--peer` uses for H.264 too.
        public static let h264 = VideoCodec(.h264, payloadType: 102, rtxPayloadType: 103)

        public var clockRate: Int { 90_000 }
        /// `a=fmtp` parameters, if the codec has any (VP8 has none). H.264: what rtcshare sends
        /// (RFC 6184 §8.1): constrained baseline level 3.1, non-interleaved, and a receiver may
        /// answer with another level.
        public var formatParameters: String? {
            switch name {
            case .vp8: nil
            case .h264: H264Level.formatParameters(idc: h264LevelIDC)
            }
        }
    }

    /// The Opus stream, if audio is sent.
    public struct Audio: Sendable, Equatable {
        public var ssrc: UInt32
        public var payloadType = 111
        /// Sent as stereo (`stereo=1;sprop-stereo=1`); Opus is declared 48000/2 either way.
        public var stereo = false
        public var trackID = "audio"

        public init(ssrc: UInt32) { self.ssrc = ssrc }
    }

    /// Header extension IDs (one-byte form, 1...14), the same in both sections (BUNDLE
    /// requires one mapping per ID, RFC 8843 §9.1).
    public struct ExtensionIDs: Sendable, Equatable {
        public var mid = 1
        public var absSendTime = 2
        public var transportWideCC = 3
        public var videoOrientation = 4

        public init() {}
    }

    public var sessionID: UInt64
    public var iceUfrag: String
    public var icePwd: String
    public var fingerprint: DTLSFingerprint
    /// Every candidate goes into the offer (no trickle needed). The default, the one `m=` and
    /// `c=` name, is the first server-reflexive one, else the first (RFC 8839 §4.2.1.2: the
    /// candidate most likely to work from anywhere).
    public var candidates: [Candidate]

    /// The candidate `m=` and `c=` name.
    public var defaultCandidate: Candidate? {
        candidates.first { $0.kind == .serverReflexive } ?? candidates.first
    }
    public var cname: String
    /// The msid stream id both tracks belong to.
    public var streamID = "rtcshare"
    public var videoTrackID = "screen"
    public var videoCodecs: [VideoCodec] = [.vp8]
    public var videoSSRC: UInt32
    /// The RTX stream's SSRC; nil: RTX is not offered.
    public var rtxSSRC: UInt32?
    public var audio: Audio?
    public var extensionIDs = ExtensionIDs()
    /// `a=rtcp-rsize` (RFC 5506): feedback may be sent as reduced-size RTCP.
    public var reducedSizeRTCP = true
    /// `a=content:slides` (RFC 4796) on the video: tells the server this is a screen share.
    public var signalsSlides = true

    public init(sessionID: UInt64, iceUfrag: String, icePwd: String, fingerprint: DTLSFingerprint,
                candidates: [Candidate], cname: String, videoSSRC: UInt32, rtxSSRC: UInt32?) {
        self.sessionID = sessionID
        self.iceUfrag = iceUfrag
        self.icePwd = icePwd
        self.fingerprint = fingerprint
        self.candidates = candidates
        self.cname = cname
        self.videoSSRC = videoSSRC
        self.rtxSSRC = rtxSSRC
    }

    /// The media identification tags (`a=mid`) of the sections, in order.
    public static let videoMID = "0"
    public static let audioMID = "1"

    /// RTCP feedback offered for video, and for audio.
    public static let videoFeedback = ["goog-remb", "transport-cc", "ccm fir", "nack", "nack pli"]
    public static let audioFeedback = ["transport-cc"]

    /// RFC 9143's MID header extension: which m-line an RTP packet belongs to under BUNDLE.
    public static let midURI = "urn:ietf:params:rtp-hdrext:sdes:mid"

    /// The header extensions offered for video and for audio, as (id, uri).
    public var videoExtensions: [(id: Int, uri: String)] {
        [(extensionIDs.mid, Self.midURI), (extensionIDs.absSendTime, AbsSendTime.uri),
         (extensionIDs.transportWideCC, TransportSequenceNumber.uri),
         (extensionIDs.videoOrientation, RTPVideoOrientation.uri)]
    }

    public var audioExtensions: [(id: Int, uri: String)] {
        [(extensionIDs.mid, Self.midURI), (extensionIDs.absSendTime, AbsSendTime.uri),
         (extensionIDs.transportWideCC, TransportSequenceNumber.uri)]
    }
}
