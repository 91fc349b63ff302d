import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareWHIP

/// How `--whip URL` publishes: where, with which credentials, which RTP features it offers.
public struct WHIPConfiguration: Sendable {
    /// The WHIP endpoint (http:// or https://).
    public var url: String
    /// The bearer token, if the endpoint wants one (never logged).
    public var token: WHIPToken?
    /// The local address the session's one UDP socket binds (nil: every IPv4 interface, each
    /// offered as a host candidate).
    public var bindAddress: SocketAddress?
    /// STUN servers (numeric IPv4 addresses) asked for our mapped address before the offer is
    /// written, from the session's socket: their answers become server-reflexive candidates.
    public var stunServers: [SocketAddress] = []
    /// How long gathering may hold the offer back (RFC 8489 retransmissions within it); what
    /// has not answered by then is given up and the offer carries host candidates only.
    public var gatheringTimeoutMilliseconds = 1_000
    /// TURN servers (RFC 8656) to allocate a relayed candidate on before the offer: each is
    /// tried at once, the best that allocates is kept (UDP before TCP before TLS). Those a WHIP
    /// answer names in `Link` headers are added to these (`usesAnswerICEServers`).
    public var turnServers: [TURNServerConfiguration] = []
    /// `.relay`: only the relayed candidate is offered and checked (no host or server-reflexive
    /// one), so nothing leaves except toward the TURN server.
    public var iceTransportPolicy: ICETransportPolicy = .all
    /// Whether the TURN servers a POST's answer names (RFC 9725 §4.6) are used: at once when the
    /// offer had no relayed candidate, and in every later offer.
    public var usesAnswerICEServers = true
    /// The allocation lifetime asked of TURN servers (they may grant another; refreshes keep it).
    public var turnLifetimeSeconds = 600
    /// How long allocating on the TURN servers may hold the offer back.
    public var relayGatheringTimeoutMilliseconds = 3_000
    /// PEM file of the certificate authorities a `turns:` server's certificate must chain to
    /// (nil: the system's store).
    public var iceCAFile: String?
    /// Largest UDP payload, SRTP, DTLS and extensions included.
    public var mtu = 1200
    /// Bytes of sent video kept for retransmission.
    public var historyBytes = 512 << 10
    /// The video codecs offered, in order of preference (each with its RTX); the answer picks.
    /// `ShareAgent` sets them from the share's codec choice.
    public var videoCodecs: [VideoCodec] = [.vp8]
    /// The H.264 level the offer announces: that of the share's output size and rate.
    public var h264LevelIDC = 31
    /// Whether an audio section is offered (an Opus stream).
    public var sendsAudio = false
    /// The share's frame rate (for the status line; the offer does not carry it).
    public var framesPerSecond: Int?
    /// ICE: no usable pair within this long ends the share with a clear error.
    public var connectTimeoutSeconds = 10
    /// ICE consent (RFC 7675): the server's silence for this long ends the share (30 s is the
    /// RFC's figure; consent is asked for every 5 s, or a quarter of a shorter timeout).
    public var consentTimeoutSeconds = 30
    /// The HTTP exchange: connect and total timeouts.
    public var httpConnectTimeoutSeconds = 5.0
    public var httpTotalTimeoutSeconds = 10.0
    /// A lost connection or a failed POST is tried again with back-off (`ReconnectPolicy`);
    /// `limit` `.off` ends the share at the first failure instead.
    public var reconnect = ReconnectPolicy.Configuration()
    /// Raised (from any thread): the POST in flight is given up at once and the share is not
    /// made (`WHIPError.stopped`); the DELETE of a session already made still goes out.
    public var stop: WHIPStop?
    /// Once the share first connects, the pages of code and read-only data only its start and
    /// the handshake touched are dropped (`StartupCodePages`): process-wide, so an embedder
    /// with its own use for them may leave it off. The CLI turns it on.
    public var releasesStartupCodePages = false

    public init(url: String, token: WHIPToken? = nil) {
        self.url = url
        self.token = token
    }
}

/// Which candidates ICE may use (the W3C `iceTransportPolicy`).
public enum ICETransportPolicy: String, Sendable, CaseIterable {
    /// Host, server-reflexive and relayed.
    case all
    /// Relayed only: the path always runs through the TURN server.
    case relay
}

/// A TURN server and its long-term credentials.
public struct TURNServerConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// `turn:` or `turns:` (RFC 7065), with its transport.
    public var uri: ICEServerURI
    public var credentials: TURNCredentials

    public init(uri: ICEServerURI, credentials: TURNCredentials) {
        self.uri = uri
        self.credentials = credentials
    }

    public var description: String { "\(uri) (\(credentials.username))" }
}
