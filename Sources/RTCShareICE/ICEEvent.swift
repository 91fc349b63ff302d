// What the ICE agent tells its owner: events to act on, and datagrams to put on the wire.

import RTCShareCore

/// The pair media flows on once ICE connects: send from `local.base`'s socket to
/// `remote.address`.
public struct ICESelectedPair: Equatable, Sendable, CustomStringConvertible {
    /// The local candidate (host, or the host base of a reflexive one).
    public var local: ICECandidate
    /// Where the local candidate's datagrams leave from.
    public var localBase: ICEAddress
    public var remote: ICECandidate

    public var description: String { "\(localBase) -> \(remote.address) (\(remote.type.rawValue))" }
}

/// Why the agent gave up.
public enum ICEFailure: Equatable, Sendable, CustomStringConvertible {
    /// Every candidate pair failed (timed out, got an error response, or answered from the
    /// wrong address).
    case allPairsFailed(pairs: Int)
    /// No pair was nominated within the connect timeout.
    case timedOut(after: MediaDuration, pairs: Int, succeeded: Int)

    public var description: String {
        switch self {
        case .allPairsFailed(let n): "all \(n) candidate pairs failed"
        case .timedOut(let d, let n, let s):
            n == 0 ? "no candidate pair to check within \(d.iceText) (no usable remote candidate)"
                : "no candidate pair nominated within \(d.iceText) (\(n) pairs, \(s) succeeded)"
        }
    }
}

/// Something the owner acts on.
public enum ICEEvent: Equatable, Sendable {
    /// A STUN server answered: it sees `base` as `mapped` (the same when no NAT is between).
    case serverReflexiveAddress(mapped: ICEAddress, base: ICEAddress, server: ICEAddress)
    /// A server-reflexive candidate was learned: signal it (trickle) or put it in the offer.
    case candidateGathered(ICECandidate)
    /// A STUN server gave `base` no mapped address: an error answer, or none in time.
    case stunServerFailed(server: ICEAddress, base: ICEAddress, reason: String)
    /// Every gathering request is answered, failed or given up (sent once per round, also
    /// with no server).
    case gatheringComplete
    /// A pair is nominated: start DTLS on it. Sent once.
    case connected(ICESelectedPair)
    /// ICE failed; nothing more will be sent.
    case failed(ICEFailure)
    /// The peer stopped answering consent checks (RFC 7675): stop sending media.
    case consentLost
    /// A role conflict (RFC 8445 §7.3.1.1) switched the agent's role.
    case roleChanged(ICERole)
}

/// Where the agent is.
public enum ICEAgentState: Equatable, Sendable {
    /// Not started.
    case new
    /// Checking candidate pairs.
    case checking
    /// A pair is nominated; consent is being kept.
    case connected
    case failed(ICEFailure)
    case consentLost
}

/// One datagram `pollTransmit` wrote.
public struct ICETransmit: Equatable, Sendable {
    /// Bytes written at the start of the caller's buffer.
    public var count: Int
    public var destination: ICEAddress
    /// The local base to send from (matters only with one socket per base).
    public var source: ICEAddress
}
