// The STUN message type and transaction ID, RFC 5389 §6:
//
//      0                 1
//      2  3  4 5 6 7 8 9 0 1 2 3 4 5
//     +--+--+-+-+-+-+-+-+-+-+-+-+-+-+
//     |M |M |M|M|M|C|M|M|M|C|M|M|M|M|
//     |11|10|9|8|7|1|6|5|4|0|3|2|1|0|
//     +--+--+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The two class bits are interleaved with the 12 method bits; the top two bits of the 16-bit
// field are always 0 (that is what tells STUN apart from RTP/DTLS on one socket, RFC 7983).

/// Request, indication, success or error response.
public enum STUNClass: UInt8, Sendable {
    case request = 0
    case indication = 1
    case successResponse = 2
    case errorResponse = 3
}

/// A class and a 12-bit method (0x001 is Binding, the only one ICE uses).
public struct STUNMessageType: Hashable, Sendable, CustomStringConvertible {
    public static let bindingMethod: UInt16 = 0x001

    public var method: UInt16
    public var messageClass: STUNClass

    public init(method: UInt16, class messageClass: STUNClass) {
        precondition(method < 0x1000, "a STUN method has 12 bits")
        self.method = method
        self.messageClass = messageClass
    }

    public static let bindingRequest = STUNMessageType(method: bindingMethod, class: .request)
    public static let bindingSuccess = STUNMessageType(method: bindingMethod, class: .successResponse)
    public static let bindingError = STUNMessageType(method: bindingMethod, class: .errorResponse)
    public static let bindingIndication = STUNMessageType(method: bindingMethod, class: .indication)

    /// TURN's methods (RFC 8656 §17).
    public static let allocateMethod: UInt16 = 0x003
    public static let refreshMethod: UInt16 = 0x004
    public static let sendMethod: UInt16 = 0x006
    public static let dataMethod: UInt16 = 0x007
    public static let createPermissionMethod: UInt16 = 0x008
    public static let channelBindMethod: UInt16 = 0x009

    /// Whether `method` is one of TURN's (not Binding).
    public static func isTURN(_ method: UInt16) -> Bool { (0x003...0x009).contains(method) && method != 0x005 }

    /// The 14-bit field value (top two bits 0).
    public var rawValue: UInt16 {
        let c = UInt16(messageClass.rawValue)
        return (method & 0x000F) | (method & 0x0070) << 1 | (method & 0x0F80) << 2
            | (c & 1) << 4 | (c & 2) << 7
    }

    /// From the 16-bit field; nil when either of the top two bits is set.
    public init?(rawValue v: UInt16) {
        guard v & 0xC000 == 0 else { return nil }
        method = (v & 0x000F) | (v >> 1) & 0x0070 | (v >> 2) & 0x0F80
        messageClass = STUNClass(rawValue: UInt8((v >> 4) & 1 | (v >> 7) & 2))!
    }

    public var description: String {
        let name = switch method {
        case Self.bindingMethod: "Binding"
        case Self.allocateMethod: "Allocate"
        case Self.refreshMethod: "Refresh"
        case Self.sendMethod: "Send"
        case Self.dataMethod: "Data"
        case Self.createPermissionMethod: "CreatePermission"
        case Self.channelBindMethod: "ChannelBind"
        default: "method 0x\(String(method, radix: 16))"
        }
        return "\(name) \(messageClass)"
    }
}

/// The 96-bit transaction ID, held inline.
public struct STUNTransactionID: Hashable, Sendable, CustomStringConvertible {
    public static let size = 12
    /// The first 4 bytes, big-endian.
    public var high: UInt32
    /// The last 8 bytes, big-endian.
    public var low: UInt64

    public init(high: UInt32, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A fresh ID from `generator` (RFC 5389 §6: uniformly random; pass a cryptographic
    /// generator outside tests).
    public init(using generator: inout some RandomNumberGenerator) {
        high = UInt32.random(in: 0...UInt32.max, using: &generator)
        low = generator.next()
    }

    init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        high = bytes.stunU32(offset)
        low = bytes.stunU64(offset + 4)
    }

    func write(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) {
        buffer.stunPut32(high, at: offset)
        buffer.stunPut64(low, at: offset + 4)
    }

    public var description: String {
        let h = String(high, radix: 16), l = String(low, radix: 16)
        return String(repeating: "0", count: 8 - h.count) + h + String(repeating: "0", count: 16 - l.count) + l
    }
}
