// STUN attributes, RFC 5389 §15 and RFC 8445 §16.1. Each is a type-length-value:
//
//      0                   1                   2                   3
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |         Type                  |            Length             |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |                         Value (variable)                ....
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// padded with 0..3 bytes to a multiple of 4 (the length excludes the padding). (XOR-)MAPPED-
// ADDRESS values (§15.1, §15.2):
//
//     |0 0 0 0 0 0 0 0|    Family     |         (X-)Port              |
//     |                 (X-)Address (32 bits or 128 bits)             |
//
// ERROR-CODE (§15.6): 21 reserved bits, class (3 bits, 3..6), number (8 bits, 0..99), reason.
//
// TURN's (RFC 8656 §18) are here too, except DATA: a relayed datagram is read and written in
// place by `TURNIndication`, never copied into an attribute value. XOR-PEER-ADDRESS and
// XOR-RELAYED-ADDRESS are XORed like XOR-MAPPED-ADDRESS; REQUESTED-TRANSPORT is a protocol
// number and three reserved bytes; CHANNEL-NUMBER a number and two reserved bytes.
//
// MESSAGE-INTEGRITY and FINGERPRINT are not cases here: they are computed over the message
// bytes, so the message writer appends them and the parser reports where they lie
// (`STUNParsedMessage`). Unknown attributes are not kept either (see `STUNMessage.parse`).

/// A STUN attribute this module understands.
public enum STUNAttribute: Equatable, Sendable {
    case mappedAddress(ICEAddress)
    case xorMappedAddress(ICEAddress)
    /// At most 513 bytes of UTF-8. ICE: "remoteUfrag:localUfrag" on a request.
    case username(String)
    /// `code` 300...699; the reason at most 763 bytes of UTF-8.
    case errorCode(code: Int, reason: String)
    case unknownAttributes([UInt16])
    /// At most 763 bytes of UTF-8.
    case software(String)
    /// RFC 8445 §7.1.1: the priority a peer-reflexive candidate learned from this check gets.
    case priority(UInt32)
    case useCandidate
    /// The sender's tie-breaker, sent while it believes it is controlled.
    case iceControlled(UInt64)
    /// The sender's tie-breaker, sent while it believes it is controlling.
    case iceControlling(UInt64)
    /// TURN: seconds an allocation (or its refresh) asks for or was granted; 0 deallocates.
    case lifetime(UInt32)
    /// TURN: the relayed transport asked for (17, UDP).
    case requestedTransport(UInt8)
    /// TURN: the relayed transport address the server allocated.
    case xorRelayedAddress(ICEAddress)
    /// TURN: a peer's address (permission, channel, Send/Data indication).
    case xorPeerAddress(ICEAddress)
    /// TURN: a channel number, 0x4000...0x4FFF.
    case channelNumber(UInt16)
    /// Long-term credentials: the realm (at most 763 bytes of UTF-8).
    case realm(String)
    /// Long-term credentials: the server's nonce (at most 763 bytes).
    case nonce(String)
    /// RFC 8489 §14.11: the password algorithms a server offers (number, parameters), as sent.
    case passwordAlgorithms([UInt8])
    /// RFC 8489 §14.12: the algorithm a request uses (number; no parameters for MD5/SHA-256).
    case passwordAlgorithm(UInt16)

    /// Attribute type codes.
    public enum Code {
        public static let mappedAddress: UInt16 = 0x0001
        public static let username: UInt16 = 0x0006
        public static let messageIntegrity: UInt16 = 0x0008
        public static let errorCode: UInt16 = 0x0009
        public static let unknownAttributes: UInt16 = 0x000A
        public static let xorMappedAddress: UInt16 = 0x0020
        public static let priority: UInt16 = 0x0024
        public static let useCandidate: UInt16 = 0x0025
        public static let software: UInt16 = 0x8022
        public static let fingerprint: UInt16 = 0x8028
        public static let iceControlled: UInt16 = 0x8029
        public static let iceControlling: UInt16 = 0x802A
        public static let channelNumber: UInt16 = 0x000C
        public static let lifetime: UInt16 = 0x000D
        public static let xorPeerAddress: UInt16 = 0x0012
        public static let data: UInt16 = 0x0013
        public static let realm: UInt16 = 0x0014
        public static let nonce: UInt16 = 0x0015
        public static let xorRelayedAddress: UInt16 = 0x0016
        public static let requestedTransport: UInt16 = 0x0019
        public static let messageIntegritySHA256: UInt16 = 0x001C
        public static let passwordAlgorithm: UInt16 = 0x001D
        public static let passwordAlgorithms: UInt16 = 0x8002
    }

    public static let maxUsernameBytes = 513
    public static let maxTextBytes = 763

    public var code: UInt16 {
        switch self {
        case .mappedAddress: Code.mappedAddress
        case .xorMappedAddress: Code.xorMappedAddress
        case .username: Code.username
        case .errorCode: Code.errorCode
        case .unknownAttributes: Code.unknownAttributes
        case .software: Code.software
        case .priority: Code.priority
        case .useCandidate: Code.useCandidate
        case .iceControlled: Code.iceControlled
        case .iceControlling: Code.iceControlling
        case .lifetime: Code.lifetime
        case .requestedTransport: Code.requestedTransport
        case .xorRelayedAddress: Code.xorRelayedAddress
        case .xorPeerAddress: Code.xorPeerAddress
        case .channelNumber: Code.channelNumber
        case .realm: Code.realm
        case .nonce: Code.nonce
        case .passwordAlgorithms: Code.passwordAlgorithms
        case .passwordAlgorithm: Code.passwordAlgorithm
        }
    }

    /// Bytes of the value, without the 4-byte header and without padding.
    public var valueSize: Int {
        switch self {
        case .mappedAddress(let a), .xorMappedAddress(let a), .xorRelayedAddress(let a), .xorPeerAddress(let a):
            4 + a.addressSize
        case .username(let s), .software(let s), .realm(let s), .nonce(let s): s.utf8.count
        case .errorCode(_, let reason): 4 + reason.utf8.count
        case .unknownAttributes(let codes): 2 * codes.count
        case .priority: 4
        case .useCandidate: 0
        case .iceControlled, .iceControlling: 8
        case .lifetime, .requestedTransport, .channelNumber: 4
        case .passwordAlgorithms(let bytes): bytes.count
        case .passwordAlgorithm: 4
        }
    }

    /// Bytes on the wire: header, value and padding.
    public var size: Int { 4 + (valueSize + 3) & ~3 }

    /// Checks the limits the parser also enforces, so that whatever is written parses back.
    func validate() throws(ICEError) {
        switch self {
        case .username(let s):
            guard s.utf8.count <= Self.maxUsernameBytes else { throw .malformed("USERNAME of \(s.utf8.count) bytes > 513") }
        case .software(let s), .realm(let s), .nonce(let s):
            guard s.utf8.count <= Self.maxTextBytes else { throw .malformed("text attribute of \(s.utf8.count) bytes > 763") }
        case .passwordAlgorithms(let bytes):
            guard bytes.count <= Self.maxTextBytes else { throw .malformed("PASSWORD-ALGORITHMS of \(bytes.count) bytes") }
        case .errorCode(let code, let reason):
            guard (300...699).contains(code) else { throw .malformed("ERROR-CODE \(code) outside 300...699") }
            guard reason.utf8.count <= Self.maxTextBytes else { throw .malformed("error reason of \(reason.utf8.count) bytes > 763") }
        case .unknownAttributes(let codes):
            guard codes.count <= 0x7FFF else { throw .malformed("UNKNOWN-ATTRIBUTES of \(codes.count) codes") }
        default:
            break
        }
    }

    /// Writes header, value and zero padding at `offset` (the caller checked `size` fits).
    func write(into b: UnsafeMutableRawBufferPointer, at offset: Int, transactionID: STUNTransactionID) {
        let n = valueSize
        b.stunPut16(code, at: offset)
        b.stunPut16(UInt16(n), at: offset + 2)
        let v = offset + 4
        switch self {
        case .mappedAddress(let a):
            b[v] = 0
            b[v + 1] = a.family.rawValue
            b.stunPut16(a.port, at: v + 2)
            a.writeAddress(into: b, at: v + 4)
        case .xorMappedAddress(let a), .xorRelayedAddress(let a), .xorPeerAddress(let a):
            b[v] = 0
            b[v + 1] = a.family.rawValue
            b.stunPut16(a.port ^ STUNMessage.xorPortMask, at: v + 2)
            a.writeAddress(into: b, at: v + 4, xor: STUNMessage.xorMask(transactionID))
        case .username(let s), .software(let s), .realm(let s), .nonce(let s):
            for (i, c) in s.utf8.enumerated() { b[v + i] = c }
        case .passwordAlgorithms(let bytes):
            for (i, c) in bytes.enumerated() { b[v + i] = c }
        case .lifetime(let seconds):
            b.stunPut32(seconds, at: v)
        case .requestedTransport(let proto):
            b.stunPut32(UInt32(proto) << 24, at: v)
        case .channelNumber(let number):
            b.stunPut32(UInt32(number) << 16, at: v)
        case .passwordAlgorithm(let number):
            b.stunPut32(UInt32(number) << 16, at: v)
        case .errorCode(let code, let reason):
            b.stunPut16(0, at: v)
            b[v + 2] = UInt8(code / 100)
            b[v + 3] = UInt8(code % 100)
            for (i, c) in reason.utf8.enumerated() { b[v + 4 + i] = c }
        case .unknownAttributes(let codes):
            for (i, c) in codes.enumerated() { b.stunPut16(c, at: v + 2 * i) }
        case .priority(let p):
            b.stunPut32(p, at: v)
        case .useCandidate:
            break
        case .iceControlled(let t), .iceControlling(let t):
            b.stunPut64(t, at: v)
        }
        for i in (v + n)..<(offset + size) { b[i] = 0 }
    }

    /// Parses the value of an attribute of type `code` (`value` excludes header and padding);
    /// nil when this module does not know the type.
    static func parse(code: UInt16, value: UnsafeRawBufferPointer,
                      transactionID: STUNTransactionID) throws(ICEError) -> STUNAttribute? {
        let n = value.count
        func exact(_ expected: Int, _ name: String) throws(ICEError) {
            guard n == expected else { throw .malformed("\(name) of \(n) bytes, expected \(expected)") }
        }
        func text(_ limit: Int, _ name: String) throws(ICEError) -> String {
            guard n <= limit else { throw .malformed("\(name) of \(n) bytes > \(limit)") }
            guard let s = String(validating: value, as: UTF8.self) else { throw .malformed("\(name) is not UTF-8") }
            return s
        }
        switch code {
        case Code.mappedAddress, Code.xorMappedAddress, Code.xorRelayedAddress, Code.xorPeerAddress:
            let name = switch code {
            case Code.mappedAddress: "MAPPED-ADDRESS"
            case Code.xorMappedAddress: "XOR-MAPPED-ADDRESS"
            case Code.xorRelayedAddress: "XOR-RELAYED-ADDRESS"
            default: "XOR-PEER-ADDRESS"
            }
            guard n >= 4 else { throw .malformed("\(name) of \(n) bytes") }
            guard let family = ICEAddress.Family(rawValue: value[1]) else {
                throw .malformed("\(name) family \(value[1])")
            }
            try exact(family == .ipv4 ? 8 : 20, name)
            let plain = ICEAddress(family: family, bytes: UnsafeRawBufferPointer(rebasing: value[4...]),
                                   port: value.stunU16(2))
            if code == Code.mappedAddress { return .mappedAddress(plain) }
            let address = plain.xored(STUNMessage.xorMask(transactionID), portMask: STUNMessage.xorPortMask)
            switch code {
            case Code.xorMappedAddress: return .xorMappedAddress(address)
            case Code.xorRelayedAddress: return .xorRelayedAddress(address)
            default: return .xorPeerAddress(address)
            }
        case Code.username:
            return .username(try text(maxUsernameBytes, "USERNAME"))
        case Code.software:
            return .software(try text(maxTextBytes, "SOFTWARE"))
        case Code.realm:
            return .realm(try text(maxTextBytes, "REALM"))
        case Code.nonce:
            return .nonce(try text(maxTextBytes, "NONCE"))
        case Code.lifetime:
            try exact(4, "LIFETIME")
            return .lifetime(value.stunU32(0))
        case Code.requestedTransport:
            try exact(4, "REQUESTED-TRANSPORT")
            return .requestedTransport(value[0])
        case Code.channelNumber:
            try exact(4, "CHANNEL-NUMBER")
            return .channelNumber(value.stunU16(0))
        case Code.passwordAlgorithms:
            guard n <= maxTextBytes, n % 4 == 0 else { throw .malformed("PASSWORD-ALGORITHMS of \(n) bytes") }
            return .passwordAlgorithms(Array(value))
        case Code.passwordAlgorithm:
            guard n >= 4 else { throw .malformed("PASSWORD-ALGORITHM of \(n) bytes") }
            return .passwordAlgorithm(value.stunU16(0))
        case Code.errorCode:
            guard n >= 4 else { throw .malformed("ERROR-CODE of \(n) bytes") }
            let cls = Int(value[2] & 0x07), number = Int(value[3])
            guard (3...6).contains(cls), number < 100 else { throw .malformed("ERROR-CODE class \(cls) number \(number)") }
            let reason = UnsafeRawBufferPointer(rebasing: value[4...])
            guard reason.count <= maxTextBytes else { throw .malformed("error reason of \(reason.count) bytes > 763") }
            guard let text = String(validating: reason, as: UTF8.self) else { throw .malformed("error reason is not UTF-8") }
            return .errorCode(code: cls * 100 + number, reason: text)
        case Code.unknownAttributes:
            guard n % 2 == 0 else { throw .malformed("UNKNOWN-ATTRIBUTES of odd length \(n)") }
            return .unknownAttributes((0..<(n / 2)).map { value.stunU16(2 * $0) })
        case Code.priority:
            try exact(4, "PRIORITY")
            return .priority(value.stunU32(0))
        case Code.useCandidate:
            try exact(0, "USE-CANDIDATE")
            return .useCandidate
        case Code.iceControlled:
            try exact(8, "ICE-CONTROLLED")
            return .iceControlled(value.stunU64(0))
        case Code.iceControlling:
            try exact(8, "ICE-CONTROLLING")
            return .iceControlling(value.stunU64(0))
        default:
            return nil
        }
    }
}
