import RTCShareDTLS
import RTCShareICE
import RTCShareTransport
import RTCShareWHIP

/// Why a WebRTC publication could not be made or ended: typed, so an embedder can act on it
/// (the C ABI gives each kind its own code) while the CLI prints the same one line as ever.
public enum ConnectionFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The WHIP exchange with `url` failed: an HTTP status, no Location, a timeout, an answer
    /// that cannot be used.
    case whip(url: String, WHIPError)
    /// No candidate pair worked (or none was nominated in time).
    case ice(ICEFailure)
    /// The server stopped answering consent checks mid-share (RFC 7675).
    case consentLost
    /// The DTLS handshake failed (the server's certificate not the answer's fingerprint, a
    /// handshake timeout, an alert).
    case dtls(DTLSError)
    /// The server closed the DTLS association.
    case dtlsClosed
    /// The keys DTLS exported could not key SRTP.
    case srtpKeys(String)

    public var description: String {
        switch self {
        case .whip(let url, let error): "WHIP \(url): \(error)"
        case .ice(let failure): "ICE: \(failure)"
        case .consentLost: "ICE consent lost: the server stopped answering (RFC 7675)"
        case .dtls(let error): "DTLS: \(error)"
        case .dtlsClosed: "DTLS: the server closed the association"
        case .srtpKeys(let why): "SRTP keys from DTLS: \(why)"
        }
    }

    /// What the transport said, in the same words.
    public init(_ failure: TransportFailure) {
        switch failure {
        case .ice(let f): self = .ice(f)
        case .consentLost: self = .consentLost
        case .dtls(let e): self = .dtls(e)
        case .dtlsClosed: self = .dtlsClosed
        case .srtpKeys(let why): self = .srtpKeys(why)
        }
    }

    /// The server refused the credentials (HTTP 401 or 403, or the token was unusable).
    public var isUnauthorized: Bool {
        switch self {
        case .whip(_, .httpStatus(let status, _)): status == 401 || status == 403
        case .whip(_, .badToken): true
        default: false
        }
    }
}
