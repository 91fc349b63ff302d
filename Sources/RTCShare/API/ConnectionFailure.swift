import RTCShareTransport
import RTCShareWHIP

/// Why a WebRTC publication could not be made or ended: typed, so an embedder can act on it
/// (the C ABI gives each kind its own code) while the CLI prints the same one line as ever.
public enum ConnectionFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The WHIP exchange with `url` failed: an HTTP status, no Location, a timeout, an answer
    /// that cannot be used.
    case whip(url: String, WHIPError)
    /// The transport's connection failed or ended: ICE found no path, consent was lost, DTLS
    /// failed or was closed, the keys could not key SRTP.
    case transport(TransportFailure)

    public var description: String {
        switch self {
        case .whip(let url, let error): "WHIP \(url): \(error)"
        case .transport(let failure): failure.description
        }
    }

    /// The server refused the credentials (HTTP 401 or 403, or the token was unusable).
    public var isUnauthorized: Bool { failureClass == .unauthorized }
}
