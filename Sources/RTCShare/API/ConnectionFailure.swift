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
    public var isUnauthorized: Bool {
        switch self {
        case .whip(_, .httpStatus(let status, _)): status == 401 || status == 403
        case .whip(_, .badToken): true
        default: false
        }
    }

    /// Whether trying again can help: not after the server refused the request or the
    /// configuration (a 4xx that says so, an answer rtcshare cannot use), or the token.
    public var retry: ReconnectPolicy.Retry {
        switch self {
        case .transport:
            return .temporary(afterSeconds: nil)
        case .whip(_, let error):
            switch error {
            case .httpStatus(let status, _):
                if [400, 401, 403, 404, 405, 415, 422].contains(status) { return .permanent }
                return (200...299).contains(status) ? .permanent : .temporary(afterSeconds: nil)
            case .timeout, .transport, .responseTooLarge:
                return .temporary(afterSeconds: nil)
            case .missingLocation, .badURL, .wrongContentType, .badToken, .answerSyntax, .noUsableVideoCodec, .badAnswer:
                return .permanent
            }
        }
    }
}
