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
