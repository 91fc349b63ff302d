import RTCShareCore
import RTCShareWHIP

/// When and how a lost WebRTC publication is made again: the back-off between attempts, the
/// server's `Retry-After`, when to give up, and whether an attempt restarts ICE on the session
/// the server still holds or publishes a new one.
///
/// - Delays: `firstDelay` doubling per failed attempt up to `maximumDelay`, each drawn within
///   ±`jitterFraction` of its nominal value so boards that lost the same server do not all come
///   back in the same second. A delay counts from when the failed attempt began: an attempt
///   that took its whole timeout (no answer: the path is down) has waited already, so while a
///   path is down a new attempt follows at once until the delay outgrows the timeout, and the
///   path's return is found within a TCP retransmission or two. A `Retry-After` longer than the delay replaces it (capped at
///   `maximumRetryAfter`: a server's hour-long pause is not taken on trust).
/// - Give up: on a permanent failure (the server refused the request or the answer cannot be
///   used: retrying cannot help), or when `limit` attempts have failed in a row.
/// - A connection that comes up resets the count and the delay; one that is lost again within
///   `stableAfter` of coming up keeps them, so a server that accepts and drops at once is not
///   hammered every second.
/// - ICE restart (a PATCH of the session with new ICE credentials, RFC 9725 §4.3) is tried when
///   the server still holds the session and the path was what failed (consent lost, ICE failed,
///   an address change) and the server has not refused a PATCH; otherwise — the server closed
///   DTLS (it restarted, its session is gone), an HTTP exchange failed, an ICE restart failed —
///   a new POST.
///
/// Sans-IO: times come in as `MediaTime`, jitter from the caller's generator; no allocation.
public struct ReconnectPolicy: Sendable {
    /// How many attempts in a row before giving up.
    public enum Limit: Sendable, Equatable, CustomStringConvertible {
        /// Never reconnect: a lost connection ends the share.
        case off
        case attempts(Int)
        case forever

        public var description: String {
            switch self {
            case .off: "off"
            case .attempts(let n): "\(n)"
            case .forever: "forever"
            }
        }
    }

    public struct Configuration: Sendable, Equatable {
        public var limit: Limit = .forever
        public var firstDelay: MediaDuration = .seconds(1)
        public var maximumDelay: MediaDuration = .seconds(30)
        /// Each delay is drawn from nominal × (1 ± this).
        public var jitterFraction = 0.2
        public var maximumRetryAfter: MediaDuration = .seconds(300)
        /// A connection that held this long resets the back-off.
        public var stableAfter: MediaDuration = .seconds(10)

        public init() {}
    }

    /// What failed, as far as the choice of the next attempt goes.
    public enum Loss: Sendable, Equatable {
        /// The path went away while the server may still hold the session: consent lost, ICE
        /// failed, the host's address changed.
        case path
        /// The server ended the session (DTLS closed or alerted): it restarted, or dropped us.
        case session
        /// An HTTP exchange (POST or PATCH) failed: no session to restart.
        case signalling
        /// An ICE restart was tried and did not bring the path back.
        case iceRestart
    }

    /// How the next attempt publishes.
    public enum Way: Sendable, Equatable {
        /// PATCH the session with new ICE credentials; DTLS and the RTP session go on.
        case iceRestart
        /// DELETE what is left of the old session, POST a new offer.
        case newSession
    }

    public enum Decision: Sendable, Equatable {
        case retry(at: MediaTime, attempt: Int, way: Way)
        case giveUp
    }

    public let configuration: Configuration
    /// Failed attempts since the connection last held (the first loss counts as none).
    public private(set) var failedAttempts = 0
    /// Attempts made since the connection was lost.
    public private(set) var attempt = 0
    /// Whether the server took a PATCH of the session (nil: not tried yet).
    public private(set) var serverTakesICERestart: Bool?
    private var nominalDelay: MediaDuration
    private var connectedAt: MediaTime?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        nominalDelay = configuration.firstDelay
    }

    /// The server answered a PATCH of the session: `taken` false for 405/501 (it does not
    /// restart ICE that way), true for a 2xx.
    public mutating func iceRestartAnswered(taken: Bool) {
        serverTakesICERestart = taken
    }

    /// The connection came up (media flows again).
    public mutating func connected(at now: MediaTime) {
        connectedAt = now
        attempt = 0
    }

    /// A connection was lost, or an attempt failed: when to try again and how, or give up.
    /// `retry`: what the failure allows (`FailureClass.retry`: permanent, or temporary with the
    /// server's `Retry-After`). `sessionHeld`: the server's session resource is still there to
    /// PATCH.
    public mutating func failed(_ retry: Retry, loss: Loss, sessionHeld: Bool, at now: MediaTime,
                                attemptStartedAt: MediaTime? = nil,
                                random: inout some RandomNumberGenerator) -> Decision {
        if let since = connectedAt {
            connectedAt = nil
            if now - since >= configuration.stableAfter {
                failedAttempts = 0
                nominalDelay = configuration.firstDelay
            }
        }
        guard case .temporary(let afterSeconds) = retry else { return .giveUp }
        switch configuration.limit {
        case .off: return .giveUp
        case .attempts(let n) where attempt >= n: return .giveUp
        default: break
        }
        attempt += 1
        var delay = jittered(failedAttempts == 0 && loss == .path ? .zero : nominalDelay, &random)
        if failedAttempts > 0 || loss != .path {
            nominalDelay = min(nominalDelay + nominalDelay, configuration.maximumDelay)
        }
        failedAttempts += 1
        if let afterSeconds {
            let asked = min(MediaDuration.seconds(Int64(max(afterSeconds, 0))), configuration.maximumRetryAfter)
            if asked > delay { delay = asked }
        }
        let at = max(now, (attemptStartedAt ?? now) + delay)
        return .retry(at: at, attempt: attempt, way: way(after: loss, sessionHeld: sessionHeld))
    }

    private func way(after loss: Loss, sessionHeld: Bool) -> Way {
        guard sessionHeld, loss == .path, serverTakesICERestart != false else { return .newSession }
        return .iceRestart
    }

    private func jittered(_ nominal: MediaDuration, _ random: inout some RandomNumberGenerator) -> MediaDuration {
        let spread = Int64(Double(nominal.microseconds) * configuration.jitterFraction)
        guard spread > 0 else { return nominal }
        return .microseconds(nominal.microseconds - spread + Int64.random(in: 0...(2 * spread), using: &random))
    }
}
