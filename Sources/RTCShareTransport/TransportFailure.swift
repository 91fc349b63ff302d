import RTCShareDTLS
import RTCShareICE

/// Why a transport's connection ended or could not be made: ICE, consent, DTLS, or the keys.
public enum TransportFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// No candidate pair worked (or none was nominated in time).
    case ice(ICEFailure)
    /// The peer stopped answering consent checks (RFC 7675).
    case consentLost
    /// The DTLS handshake failed (a certificate not the one the fingerprint names, a timeout,
    /// an alert).
    case dtls(DTLSError)
    /// The peer closed the DTLS association.
    case dtlsClosed
    /// The keys DTLS exported could not key SRTP.
    case srtpKeys(String)
    /// The peer's port answered ICMP "port unreachable": nothing listens there any more (the
    /// server restarted or dropped the session).
    case peerUnreachable
    /// The host no longer has the address the connection's path left from (an interface went
    /// down, a new DHCP lease, a network change).
    case localAddressGone(String)
    /// The host has no IPv4 address to offer a candidate on (every interface down or without
    /// an address: an outage, not a configuration).
    case noLocalAddress
    /// The TURN allocation the path ran through (or the stream to its server) was lost.
    case relay(TURNFailure)

    public var description: String {
        switch self {
        case .ice(let failure): "ICE: \(failure)"
        case .consentLost: "ICE consent lost: the server stopped answering (RFC 7675)"
        case .dtls(let error): "DTLS: \(error)"
        case .dtlsClosed: "DTLS: the server closed the association"
        case .srtpKeys(let why): "SRTP keys from DTLS: \(why)"
        case .peerUnreachable: "the server's port is closed (ICMP port unreachable): its session is gone"
        case .localAddressGone(let address): "the host's address \(address) went away"
        case .noLocalAddress: "the host has no IPv4 address to send from"
        case .relay(let failure): "\(failure)"
        }
    }
}

/// Where a transport stands.
public enum TransportState: Sendable, Equatable {
    /// ICE checks, then the DTLS handshake (a plain `--peer` transport never is).
    case connecting
    /// Keys installed: media flows.
    case connected
    case failed(TransportFailure)
}
