/// An ICE restart of a WHIP session (RFC 9725 §4.3.2): the client PATCHes the session resource
/// with an SDP fragment (`application/trickle-ice-sdpfrag`, RFC 8840) carrying new ICE
/// credentials and its candidates, `If-Match: "*"`; the server answers 200 with its own new
/// credentials (and maybe candidates) in a fragment, and a new ETag. DTLS and the media session
/// go on.
public struct WHIPICERestart: Sendable, Equatable {
    /// The server's new ICE credentials.
    public var ufrag: String
    public var password: String
    /// Its candidates, as `candidate:` attribute values without the `a=` (none: the ones of the
    /// answer still hold).
    public var candidates: [String]
    /// The session's new ETag, if the server sent one.
    public var entityTag: String?

    /// The fragment a restart sends: the new credentials and every local candidate, in the
    /// first media section of the session (`mid`, `kind` and a payload type of it: the
    /// fragment's m-line needs them, RFC 8840 §9).
    public static func fragment(ufrag: String, password: String, candidates: [String], mid: String, kind: String,
                                payloadType: Int) -> String {
        var lines = ["a=ice-options:trickle", "m=\(kind) 9 UDP/TLS/RTP/SAVPF \(payloadType)", "a=mid:\(mid)",
                     "a=ice-ufrag:\(ufrag)", "a=ice-pwd:\(password)"]
        lines += candidates.map { "a=" + ($0.hasPrefix("candidate:") ? $0 : "candidate:" + $0) }
        lines.append("a=end-of-candidates")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Reads the server's fragment: `a=ice-ufrag`, `a=ice-pwd` (required, each once, ICE's
    /// character set and lengths), `a=candidate` lines (at most 32). Anything else is skipped.
    public static func parse(_ body: [UInt8], entityTag: String?) throws(WHIPError) -> WHIPICERestart {
        guard let text = String(validating: body, as: UTF8.self) else {
            throw .badAnswer("the ICE restart answer is not UTF-8")
        }
        var ufrag: String?
        var password: String?
        var candidates: [String] = []
        for raw in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw[...]
            if line.hasPrefix("a=ice-ufrag:") {
                guard ufrag == nil else { throw .badAnswer("the ICE restart answer has two ice-ufrag lines") }
                ufrag = String(line.dropFirst("a=ice-ufrag:".count))
            } else if line.hasPrefix("a=ice-pwd:") {
                guard password == nil else { throw .badAnswer("the ICE restart answer has two ice-pwd lines") }
                password = String(line.dropFirst("a=ice-pwd:".count))
            } else if line.hasPrefix("a=candidate:") {
                guard candidates.count < 32 else { throw .badAnswer("the ICE restart answer has over 32 candidates") }
                candidates.append(String(line.dropFirst(2)))
            }
        }
        guard let ufrag, let password else {
            throw .badAnswer("the ICE restart answer has no ice-ufrag and ice-pwd")
        }
        // RFC 8839 §5.4: ice-char = ALPHA / DIGIT / "+" / "/"; 4–256 and 22–256 characters.
        func iceChars(_ s: String) -> Bool {
            s.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || (0x30...0x39).contains($0)
                || $0 == 0x2B || $0 == 0x2F }
        }
        guard (4...256).contains(ufrag.utf8.count), (22...256).contains(password.utf8.count),
              iceChars(ufrag), iceChars(password) else {
            throw .badAnswer("the ICE restart answer's ice-ufrag or ice-pwd is not ICE's (RFC 8839 §5.4)")
        }
        return WHIPICERestart(ufrag: ufrag, password: password, candidates: candidates,
                              entityTag: entityTag)
    }
}

extension WHIPClient {
    /// What an ICE restart PATCH achieved: the server's new credentials, or that it does not
    /// restart ICE this way (405 Method Not Allowed, 501 Not Implemented: publish anew).
    public enum ICERestartResult: Sendable, Equatable {
        case restarted(WHIPICERestart)
        case unsupported
    }

    /// PATCHes `fragment` (new credentials, `WHIPICERestart.fragment`) to the session resource
    /// with `If-Match: "*"` (RFC 9725 §4.3.2: a restart matches any entity) and reads the
    /// server's new credentials from the 200.
    public func restartICE(resource: String, fragment: String, token: WHIPToken?) throws(WHIPError) -> ICERestartResult {
        var request = makeRequest("PATCH", resource, token: token, timeout: configuration.totalTimeout)
        request.headers += ["Content-Type: application/trickle-ice-sdpfrag", "If-Match: \"*\""]
        request.body = fragment
        let response = try CurlEasy().perform(request)
        if response.status == 405 || response.status == 501 { return .unsupported }
        try requireSuccess(response, request)
        guard response.status == 200 else {
            throw .httpStatus(response.status, reason: "expected 200 with the server's ICE credentials")
        }
        let tag = response.headers["ETag"]
        if let tag { _ = try headerSafe(tag) }
        return .restarted(try WHIPICERestart.parse(response.body, entityTag: tag))
    }
}
