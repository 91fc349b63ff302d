// STUN and TURN server URIs (RFC 7064, RFC 7065), as `--ice-server` and a WHIP answer's `Link`
// headers give them:
//
//     stun:host[:port]            stuns:host[:port]
//     turn:host[:port][?transport=udp|tcp]
//     turns:host[:port][?transport=tcp]
//
// host is an IPv4 address, a bracketed IPv6 address or a name (kept as text: the edge resolves
// it, and a `turns:` server's certificate is checked against it). Default ports 3478, and 5349
// for the secure schemes. `turn:` defaults to UDP, `turns:` is TLS over TCP; `turns:` over UDP
// would be DTLS to the server, which is not offered (refused with that reason). Untrusted text:
// every part is checked, nothing traps.

/// The scheme of an ICE server URI.
public enum ICEServerScheme: String, Sendable, CaseIterable {
    case stun, stuns, turn, turns
}

/// How a TURN client reaches its server (RFC 8656 §3.1: UDP, TCP, or TLS over TCP).
public enum TURNTransport: String, Sendable, CaseIterable, Comparable {
    case udp, tcp, tls

    /// Preference among relays of one agent: UDP adds nothing to the path, TCP and TLS head-of-
    /// line blocking (RFC 8445 §5.1.2.2 leaves the local preference to the agent).
    public var preference: Int {
        switch self {
        case .udp: 2
        case .tcp: 1
        case .tls: 0
        }
    }

    public static func < (a: TURNTransport, b: TURNTransport) -> Bool { a.preference > b.preference }
}

/// A parsed STUN or TURN URI.
public struct ICEServerURI: Sendable, Equatable, CustomStringConvertible {
    public var scheme: ICEServerScheme
    /// An IPv4 address, an IPv6 address (without brackets) or a name.
    public var host: String
    public var port: UInt16
    /// For `turn:`/`turns:`, how the server is reached; nil for STUN.
    public var transport: TURNTransport?

    public var isTURN: Bool { scheme == .turn || scheme == .turns }

    /// The numeric address, when the host is one (no name is resolved here).
    public var numericAddress: ICEAddress? { try? ICEAddress(host: host, port: port) }

    public var description: String {
        let h = host.contains(":") ? "[\(host)]" : host
        var s = "\(scheme.rawValue):\(h):\(port)"
        if scheme == .turn, let transport { s += "?transport=\(transport.rawValue)" }
        return s
    }

    /// Longest URI taken.
    public static let maximumLength = 512

    public init(scheme: ICEServerScheme, host: String, port: UInt16, transport: TURNTransport?) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.transport = transport
    }

    /// Parses one URI; the error says what is wrong in one line.
    public init(parsing text: some StringProtocol) throws(ICEError) {
        let s = String(text)
        func bad(_ why: String) -> ICEError { .invalidAddress("ICE server '\(s.prefix(80))': \(why)") }
        guard s.utf8.count <= Self.maximumLength else { throw bad("longer than \(Self.maximumLength) characters") }
        guard let colon = s.firstIndex(of: ":"),
              let scheme = ICEServerScheme(rawValue: s[..<colon].lowercased()) else {
            throw bad("the scheme must be stun:, stuns:, turn: or turns:")
        }
        var rest = Substring(s[s.index(after: colon)...])
        var query: Substring?
        if let q = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        // RFC 7064/7065 have no "//" authority; some servers write it anyway.
        if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
        let host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw bad("an IPv6 address without its closing ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw bad("text after the IPv6 address") }
                portText = after.dropFirst()
            }
            guard (try? ICEAddress(host: host, port: 0)) != nil else { throw bad("'\(host.prefix(40))' is not an IPv6 address") }
        } else {
            if let c = rest.lastIndex(of: ":") {
                host = rest[..<c]
                portText = rest[rest.index(after: c)...]
            } else {
                host = rest
            }
            guard !host.contains(":") else { throw bad("an IPv6 address needs brackets") }
        }
        guard !host.isEmpty, host.utf8.count <= 253,
              host.utf8.allSatisfy({ Self.isHostChar($0) }) else { throw bad("no valid host") }
        var port: UInt16 = scheme == .stuns || scheme == .turns ? 5349 : 3478
        if let portText {
            guard let p = UInt16(portText), p > 0 else { throw bad("port '\(portText.prefix(8))' is not 1...65535") }
            port = p
        }
        var transport: TURNTransport? = nil
        if scheme == .turn { transport = .udp }
        if scheme == .turns { transport = .tls }
        if let query {
            guard scheme == .turn || scheme == .turns else { throw bad("a STUN URI takes no query") }
            guard query.lowercased().hasPrefix("transport=") else { throw bad("the only query is ?transport=udp|tcp") }
            switch query.dropFirst("transport=".count).lowercased() {
            case "udp":
                guard scheme == .turn else { throw bad("turns: over UDP (DTLS to the TURN server) is not supported") }
                transport = .udp
            case "tcp":
                transport = scheme == .turns ? .tls : .tcp
            default:
                throw bad("transport must be udp or tcp")
            }
        }
        self.init(scheme: scheme, host: String(host), port: port, transport: transport)
    }

    /// Letters, digits, '-', '.', '_' (a name) and what an IPv6 address holds.
    private static func isHostChar(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
            || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: ":")
    }
}
