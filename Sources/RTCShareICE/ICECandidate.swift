// An ICE candidate (RFC 8445 §5.1) and its SDP form (RFC 8839 §5.1):
//
//   candidate:<foundation> <component-id> <transport> <priority> <connection-address> <port>
//             typ <host|srflx|prflx|relay> [raddr <address>] [rport <port>] *(<name> <value>)
//
// Parsing takes untrusted text. It throws for a line that breaks the grammar and returns nil
// for a well-formed candidate this agent does not use: transports other than UDP (TCP
// candidates, RFC 6544) and connection addresses that are names (FQDNs, mDNS `.local`), which
// would need a resolver. Extension attributes (generation, ufrag, network-id, …) are skipped.
//
// Priority (§5.1.2.1): 2^24 × type preference + 2^8 × local preference + (256 − component),
// with the recommended type preferences host 126, peer-reflexive 110, server-reflexive 100,
// relayed 0.

/// The kind of a candidate.
public enum ICECandidateType: String, Sendable, CaseIterable {
    case host
    case serverReflexive = "srflx"
    case peerReflexive = "prflx"
    case relayed = "relay"

    /// RFC 8445 §5.1.2.2's recommended values.
    public var typePreference: UInt32 {
        switch self {
        case .host: 126
        case .peerReflexive: 110
        case .serverReflexive: 100
        case .relayed: 0
        }
    }
}

/// One candidate, local or remote.
public struct ICECandidate: Hashable, Sendable, CustomStringConvertible {
    /// 1...32 ice-chars; equal for candidates of the same type, base IP and server.
    public var foundation: String
    /// 1...256; this agent uses component 1 only (RTP and RTCP multiplexed).
    public var component: Int
    public var priority: UInt32
    public var address: ICEAddress
    public var type: ICECandidateType
    /// raddr/rport: the base (srflx, prflx) or mapped address (relay); nil for host.
    public var relatedAddress: ICEAddress?

    public init(foundation: String, component: Int = 1, priority: UInt32, address: ICEAddress,
                type: ICECandidateType, relatedAddress: ICEAddress? = nil) {
        self.foundation = foundation
        self.component = component
        self.priority = priority
        self.address = address
        self.type = type
        self.relatedAddress = relatedAddress
    }

    /// §5.1.2.1.
    public static func priority(type: ICECandidateType, localPreference: UInt16, component: Int = 1) -> UInt32 {
        type.typePreference << 24 | UInt32(localPreference) << 8 | UInt32(256 - max(1, min(256, component)))
    }

    /// The attribute value for SDP, without the `a=` (trickle sends it as is).
    public var sdpAttribute: String {
        var s = "candidate:\(foundation) \(component) udp \(priority) \(address.host) \(address.port) typ \(type.rawValue)"
        if let r = relatedAddress { s += " raddr \(r.host) rport \(r.port)" }
        return s
    }

    public var description: String { sdpAttribute }

    /// Parses `a=candidate:…` or `candidate:…`; nil for a candidate this agent ignores (see the
    /// file comment).
    public static func parse(sdpAttribute line: some StringProtocol) throws(ICEError) -> ICECandidate? {
        var text = Substring(line)
        if text.hasPrefix("a=") { text = text.dropFirst(2) }
        guard text.hasPrefix("candidate:") else { throw .invalidCandidate("does not start with candidate:") }
        text = text.dropFirst("candidate:".count)
        // CR LF is one Character (one grapheme cluster), equal to neither "\r" nor "\n".
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" })
        guard fields.count >= 8 else { throw .invalidCandidate("\(fields.count) fields, at least 8 needed") }
        let foundation = fields[0]
        guard (1...32).contains(foundation.utf8.count), foundation.utf8.allSatisfy(ICECredentials.isIceChar) else {
            throw .invalidCandidate("foundation '\(foundation.prefix(40))'")
        }
        guard let component = Int(fields[1]), (1...256).contains(component) else {
            throw .invalidCandidate("component '\(fields[1].prefix(16))'")
        }
        guard let priority = UInt32(fields[3]), (1...0x7FFF_FFFF).contains(priority) else {
            throw .invalidCandidate("priority '\(fields[3].prefix(16))'")
        }
        guard let port = UInt16(fields[5]) else { throw .invalidCandidate("port '\(fields[5].prefix(16))'") }
        guard fields[6] == "typ" else { throw .invalidCandidate("'typ' expected, found '\(fields[6].prefix(16))'") }
        guard let type = ICECandidateType(rawValue: String(fields[7])) else {
            throw .invalidCandidate("type '\(fields[7].prefix(16))'")
        }
        var raddr: Substring?
        var rport: UInt16?
        var i = 8
        while i + 1 < fields.count {
            switch fields[i] {
            case "raddr": raddr = fields[i + 1]
            case "rport":
                guard let p = UInt16(fields[i + 1]) else { throw .invalidCandidate("rport '\(fields[i + 1].prefix(16))'") }
                rport = p
            default: break
            }
            i += 2
        }
        guard fields[2].lowercased() == "udp" else { return nil }
        guard let address = try? ICEAddress(host: fields[4], port: port) else { return nil }
        var related: ICEAddress? = nil
        if let raddr, let rport { related = try? ICEAddress(host: raddr, port: rport) }
        return ICECandidate(foundation: String(foundation), component: component, priority: priority,
                            address: address, type: type, relatedAddress: related)
    }
}
