/// An ICE server a WHIP endpoint offers in a `Link` header (RFC 9725 §4.6):
///
///     Link: <stun:stun.example.net>; rel="ice-server"
///     Link: <turn:turn.example.net?transport=udp>; rel="ice-server";
///           username="user"; credential="secret"; credential-type="password"
///
/// TURN servers with their credentials are used by the WHIP sink (a relayed candidate at once
/// when the offer had none, and in later offers); STUN servers are reported only: they come
/// after the offer's candidates. The credential is a secret: `description` never prints it.
public struct WHIPICEServer: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    public enum Kind: String, Sendable { case stun, stuns, turn, turns }

    public var kind: Kind
    /// The URI as given (`stun:host:port`, `turn:host?transport=udp`).
    public var url: String
    public var username: String?
    public var credential: String?

    public init(kind: Kind, url: String, username: String? = nil, credential: String? = nil) {
        self.kind = kind
        self.url = url
        self.username = username
        self.credential = credential
    }

    public var description: String {
        var s = url
        if let username { s += " (username \(username)" + (credential == nil ? ")" : ", credential <redacted>)") }
        return s
    }

    public var customMirror: Mirror { Mirror(self, children: ["kind": kind, "url": url]) }
}

extension WHIPICEServer {
    /// Most ICE servers read from one response; more are ignored.
    static let maximumCount = 16
    /// Longest URI or parameter value kept (characters); longer entries are skipped.
    static let maximumValue = 512

    /// The ICE servers in a response's `Link` header values, in order. Links with another
    /// relation, a scheme other than stun(s)/turn(s), or an oversized value are skipped;
    /// malformed text ends the parse of that header value (what was read before is kept).
    static func parse(linkHeaders: [String]) -> [WHIPICEServer] {
        var servers: [WHIPICEServer] = []
        for header in linkHeaders {
            var parser = LinkValueParser(header)
            for link in parser.links() where servers.count < maximumCount {
                guard link.relations.contains("ice-server"), link.target.count <= maximumValue,
                      let colon = link.target.firstIndex(of: ":"),
                      let kind = Kind(rawValue: link.target[..<colon].lowercased()) else { continue }
                let username = link.parameters["username"], credential = link.parameters["credential"]
                guard (username?.count ?? 0) <= maximumValue, (credential?.count ?? 0) <= maximumValue else { continue }
                servers.append(WHIPICEServer(kind: kind, url: link.target, username: username, credential: credential))
            }
        }
        return servers
    }
}

/// RFC 8288 §3 `Link` field values: `<target>; name=value; name="quoted", <target2>; …`.
struct LinkValueParser {
    struct Link {
        var target: String
        /// Parameter names lowercased; the first occurrence of a name wins (RFC 8288 §3.3).
        var parameters: [String: String] = [:]
        /// The space-separated relation types of `rel`, lowercased.
        var relations: [String] { (parameters["rel"] ?? "").lowercased().split(separator: " ").map(String.init) }
    }

    private let text: [Character]
    private var i = 0

    init(_ value: String) { text = Array(value) }

    mutating func links() -> [Link] {
        var result: [Link] = []
        while true {
            skipSpaces()
            guard i < text.count, text[i] == "<" else { return result }
            i += 1
            guard let close = text[i...].firstIndex(of: ">") else { return result }
            var link = Link(target: String(text[i..<close]))
            i = close + 1
            while true {
                skipSpaces()
                guard i < text.count, text[i] == ";" else { break }
                i += 1
                skipSpaces()
                let name = token().lowercased()
                guard !name.isEmpty else { return result }
                skipSpaces()
                var value = ""
                if i < text.count, text[i] == "=" {
                    i += 1
                    skipSpaces()
                    guard let v = i < text.count && text[i] == "\"" ? quoted() : Optional(token()) else { return result }
                    value = v
                }
                if link.parameters[name] == nil { link.parameters[name] = value }
            }
            result.append(link)
            skipSpaces()
            guard i < text.count, text[i] == "," else { return result }
            i += 1
        }
    }

    private mutating func skipSpaces() {
        while i < text.count, text[i] == " " || text[i] == "\t" { i += 1 }
    }

    /// A token or an unquoted value: up to a separator.
    private mutating func token() -> String {
        let start = i
        while i < text.count, !";,= \t\"".contains(text[i]) { i += 1 }
        return String(text[start..<i])
    }

    /// A quoted-string with backslash escapes; nil if it never closes.
    private mutating func quoted() -> String? {
        i += 1  // the opening quote
        var value = ""
        while i < text.count {
            let c = text[i]
            i += 1
            if c == "\"" { return value }
            if c == "\\", i < text.count { value.append(text[i]); i += 1; continue }
            value.append(c)
        }
        return nil
    }
}
