import RTCShareRTP

/// Everything that can go wrong publishing over WHIP, one line each: the HTTP exchange
/// (RFC 9725), the token, and the strict reading of the SDP answer.
///
/// No case carries the bearer token or a TURN credential, and text that came from the server
/// (a reason, a Location) is sanitised before it is stored: see `WHIPText.sanitised`.
public enum WHIPError: Error, Equatable, Sendable, CustomStringConvertible {
    // ---- HTTP ----
    /// The server answered 4xx/5xx (or another status the step does not accept), with the first
    /// line of its body, sanitised, and the delay its `Retry-After` asked for (seconds, capped at
    /// `HTTPRetryAfter.maximumSeconds`; nil without one).
    case httpStatus(Int, reason: String, retryAfterSeconds: Int? = nil)
    /// 201 Created without a `Location` header: there is no resource to PATCH or DELETE.
    case missingLocation
    /// A `Location` (or URL) that does not resolve to an http(s) URL; the text is sanitised.
    case badURL(String)
    /// The connect or total time limit passed.
    case timeout(seconds: Double)
    /// libcurl could not complete the transfer (connection refused, reset, …).
    case transport(String)
    /// More redirects than the client follows.
    case tooManyRedirects(Int)
    /// The server's TLS certificate could not be verified (libcurl's reason).
    case untrustedServer(String)
    /// The HTTP client could not get what it needs from the system: libcurl (or a library it
    /// loads) cannot be loaded or initialised, memory ran out.
    case resource(String)
    /// A `WHIPStop` the request watched was raised: the request was not sent, or given up.
    case stopped
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
        case let .httpStatus(status, reason, retryAfter):
            return "WHIP server answered HTTP \(status)" + (reason.isEmpty ? "" : ": \(reason)")
                + (retryAfter.map { " (Retry-After: \($0) s)" } ?? "")
        case .missingLocation:
            return "WHIP server answered 201 without a Location header (no resource to end the session with)"
        case let .badURL(text):
            return "WHIP URL is not a usable http(s) URL: '\(text)'"
        case let .timeout(seconds):
            return "WHIP request timed out after \(WHIPText.seconds(seconds)) s"
        case let .transport(message), let .untrustedServer(message), let .resource(message):
            return "WHIP request failed: \(message)"
        case let .tooManyRedirects(limit):
            return "WHIP request failed: more than \(limit) redirects"
        case .stopped:
            return "WHIP request stopped"
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

/// Whether trying again can help: what a reconnect (or a supervisor) does with a failure.
public enum Retry: Sendable, Equatable {
    /// Retrying the same request cannot help: the server refused the credentials or the
    /// configuration, or answered something rtcshare cannot use.
    case permanent
    /// The server or the path may come back; wait at least `afterSeconds` when the server said
    /// how long (its `Retry-After`), else back off as usual.
    case temporary(afterSeconds: Int?)
}

extension WHIPError {
    /// Permanent: 400, 401, 403, 404, 415, 422 and every other 4xx or unexpected status (a 200
    /// instead of 201 included), a bad token or URL, an answer rtcshare cannot use, a server
    /// certificate that does not verify, a stop. Temporary: 5xx, 408, 425, 429, a timeout, a
    /// refused or reset connection, and a resource failure (memory may come back).
    public var retry: Retry {
        switch self {
        case let .httpStatus(status, _, retryAfter):
            Self.isTemporary(status: status) ? .temporary(afterSeconds: retryAfter) : .permanent
        case .timeout, .transport, .resource:
            .temporary(afterSeconds: nil)
        case .missingLocation, .badURL, .responseTooLarge, .wrongContentType, .badToken, .answerSyntax,
             .noUsableVideoCodec, .badAnswer, .tooManyRedirects, .untrustedServer, .stopped:
            .permanent
        }
    }

    /// Statuses that say "not now" rather than "not this": server errors, 408 Request Timeout,
    /// 425 Too Early, 429 Too Many Requests.
    public static func isTemporary(status: Int) -> Bool {
        (500...599).contains(status) || status == 408 || status == 425 || status == 429
    }

    /// The server refused the credentials (401, 403), or the token is unusable.
    public var isUnauthorized: Bool {
        switch self {
        case .httpStatus(let status, _, _): status == 401 || status == 403
        case .badToken: true
        default: false
        }
    }
}
