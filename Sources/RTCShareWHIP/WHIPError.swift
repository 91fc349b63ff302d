import RTCShareRTP

/// Everything that can go wrong publishing over WHIP, one line each: the HTTP exchange
/// (RFC 9725), the token, and the strict reading of the SDP answer.
///
/// No case carries the bearer token or a TURN credential, and text that came from the server
/// (a reason, a Location) is sanitised before it is stored: see `WHIPText.sanitised`.
public enum WHIPError: Error, Equatable, Sendable, CustomStringConvertible {
    // ---- HTTP ----
    /// The server answered 4xx/5xx (or another status the step does not accept), with the first
    /// line of its body, sanitised.
    case httpStatus(Int, reason: String)
    /// 201 Created without a `Location` header: there is no resource to PATCH or DELETE.
    case missingLocation
    /// A `Location` (or URL) that does not resolve to an http(s) URL; the text is sanitised.
    case badURL(String)
    /// The connect or total time limit passed.
    case timeout(seconds: Double)
    /// libcurl could not complete the transfer (connection refused, reset, …).
    case transport(String)
    /// The response headers or body were larger than the client reads.
    case responseTooLarge(what: String, limit: Int)
    /// The 201 answer was not `application/sdp`.
    case wrongContentType(String)
    // ---- token ----
    /// The token or token file is unusable (empty, too large, a control character, unreadable).
    case badToken(String)
    // ---- SDP answer ----
    /// The answer is not SDP the parser accepts.
    case answerSyntax(SDPError)
    /// The answer accepts none of the video codecs offered.
    case noUsableVideoCodec(offered: [String])
    /// The answer breaks a rule a WebRTC answer must follow (what and which rule).
    case badAnswer(String)

    public var description: String {
        switch self {
        case let .httpStatus(status, reason):
            return "WHIP server answered HTTP \(status)" + (reason.isEmpty ? "" : ": \(reason)")
        case .missingLocation:
            return "WHIP server answered 201 without a Location header (no resource to end the session with)"
        case let .badURL(text):
            return "WHIP URL is not a usable http(s) URL: '\(text)'"
        case let .timeout(seconds):
            return "WHIP request timed out after \(WHIPText.seconds(seconds)) s"
        case let .transport(message):
            return "WHIP request failed: \(message)"
        case let .responseTooLarge(what, limit):
            return "WHIP response \(what) is larger than \(limit) bytes; refused"
        case let .wrongContentType(type):
            return "WHIP answer has Content-Type '\(type)', not application/sdp"
        case let .badToken(why):
            return "WHIP token: \(why)"
        case let .answerSyntax(error):
            return "WHIP answer: \(error.description)"
        case let .noUsableVideoCodec(offered):
            return "WHIP answer accepts none of the video codecs offered (\(offered.joined(separator: ", ")))"
        case let .badAnswer(why):
            return "WHIP answer: \(why)"
        }
    }
}
