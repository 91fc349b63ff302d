// A STUN message, RFC 5389 §6 (RFC 8489 keeps the format):
//
//      0                   1                   2                   3
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |0 0|     STUN Message Type     |         Message Length        |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |                         Magic Cookie                          |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |                                                               |
//     |                     Transaction ID (96 bits)                  |
//     |                                                               |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// then attributes (STUNAttribute.swift); the length counts the bytes after the header and is a
// multiple of 4. One UDP datagram holds exactly one message.
//
// Writing: `size` then `write(into:)` into the caller's buffer. MESSAGE-INTEGRITY (HMAC-SHA1
// with the short-term key, §15.4) and FINGERPRINT (CRC-32 ^ 0x5354554E, §15.5) are appended by
// the writer when asked, in that order, each over the bytes before it with the length field
// already counting it.
//
// Parsing takes untrusted bytes and never traps: every length is checked before it is read.
// Per §7.3 and §15.4/§15.5: attributes after MESSAGE-INTEGRITY other than FINGERPRINT are
// ignored; nothing may follow FINGERPRINT; unknown comprehension-optional attributes
// (0x8000...0xFFFF) are skipped; unknown comprehension-required ones (0x0000...0x7FFF) are
// skipped and reported, so that a request can be answered with 420. Padding bytes are not
// checked (§15: they may hold any value). RFC 3489 messages (no magic cookie) are refused.
//
// Messages are control-plane traffic (a few per second per candidate pair), so the attribute
// list is a plain array.

/// A STUN message: type, transaction ID and the attributes this module understands.
public struct STUNMessage: Equatable, Sendable {
    public static let headerSize = 20
    public static let magicCookie: UInt32 = 0x2112_A442
    /// FINGERPRINT is the CRC-32 XORed with this ("STUN").
    public static let fingerprintXor: UInt32 = 0x5354_554E
    static let integritySize = 4 + STUNDigest.size
    static let fingerprintSize = 8
    static let xorPortMask = UInt16(magicCookie >> 16)

    /// What XOR-MAPPED-ADDRESS XORs an address with: the cookie, then the transaction ID.
    static func xorMask(_ id: STUNTransactionID) -> (UInt64, UInt64) {
        (UInt64(magicCookie) << 32 | UInt64(id.high), id.low)
    }

    public var type: STUNMessageType
    public var transactionID: STUNTransactionID
    /// In wire order; MESSAGE-INTEGRITY and FINGERPRINT are not listed (see `write`).
    public var attributes: [STUNAttribute]

    public init(type: STUNMessageType, transactionID: STUNTransactionID, attributes: [STUNAttribute] = []) {
        self.type = type
        self.transactionID = transactionID
        self.attributes = attributes
    }

    /// Bytes `write` produces with the same options.
    public func size(integrity: Bool = false, fingerprint: Bool = false) -> Int {
        var n = Self.headerSize
        for a in attributes { n += a.size }
        if integrity { n += Self.integritySize }
        if fingerprint { n += Self.fingerprintSize }
        return n
    }

    /// Writes the message at the start of `buffer`, then MESSAGE-INTEGRITY keyed with
    /// `integrityKey` (for ICE's short-term credentials, the password's UTF-8 bytes) when given,
    /// then FINGERPRINT when asked; returns the bytes written.
    public func write(into buffer: UnsafeMutableRawBufferPointer, integrityKey: [UInt8]? = nil,
                      fingerprint: Bool = false) throws(ICEError) -> Int {
        let total = size(integrity: integrityKey != nil, fingerprint: fingerprint)
        guard total - Self.headerSize <= 0xFFFC else { throw .malformed("STUN message of \(total) bytes") }
        guard buffer.count >= total else { throw .bufferTooSmall(needed: total, available: buffer.count) }
        for a in attributes { try a.validate() }
        buffer.stunPut16(type.rawValue, at: 0)
        buffer.stunPut32(Self.magicCookie, at: 4)
        transactionID.write(into: buffer, at: 8)
        var offset = Self.headerSize
        for a in attributes {
            a.write(into: buffer, at: offset, transactionID: transactionID)
            offset += a.size
        }
        if let key = integrityKey {
            // §15.4: the length counts MESSAGE-INTEGRITY but not what follows it.
            buffer.stunPut16(UInt16(offset + Self.integritySize - Self.headerSize), at: 2)
            let hmac = HMACSHA1(key: key)
            hmac.update(UnsafeRawBufferPointer(rebasing: buffer[0..<offset]))
            let digest = hmac.finish()
            buffer.stunPut16(STUNAttribute.Code.messageIntegrity, at: offset)
            buffer.stunPut16(UInt16(STUNDigest.size), at: offset + 2)
            digest.write(into: buffer, at: offset + 4)
            offset += Self.integritySize
        }
        if fingerprint {
            buffer.stunPut16(UInt16(offset + Self.fingerprintSize - Self.headerSize), at: 2)
            let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<offset]))
            buffer.stunPut16(STUNAttribute.Code.fingerprint, at: offset)
            buffer.stunPut16(4, at: offset + 2)
            buffer.stunPut32(crc ^ Self.fingerprintXor, at: offset + 4)
            offset += Self.fingerprintSize
        }
        buffer.stunPut16(UInt16(offset - Self.headerSize), at: 2)
        return offset
    }

    /// Parses one datagram.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(ICEError) -> STUNParsedMessage {
        let total = bytes.count
        guard total >= headerSize else { throw .truncated("STUN message of \(total) bytes < 20-byte header") }
        guard let type = STUNMessageType(rawValue: bytes.stunU16(0)) else {
            throw .malformed("STUN type 0x\(String(bytes.stunU16(0), radix: 16)): top bits set")
        }
        let length = Int(bytes.stunU16(2))
        guard length % 4 == 0 else { throw .malformed("STUN length \(length) not a multiple of 4") }
        guard headerSize + length == total else {
            throw .malformed("STUN length \(length) but \(total - headerSize) bytes follow the header")
        }
        guard bytes.stunU32(4) == magicCookie else { throw .malformed("no STUN magic cookie") }
        let id = STUNTransactionID(bytes, at: 8)
        var parsed = STUNParsedMessage(message: STUNMessage(type: type, transactionID: id))

        var offset = headerSize
        while offset < total {
            guard total - offset >= 4 else { throw .truncated("STUN attribute header at \(offset) past end \(total)") }
            let code = bytes.stunU16(offset)
            let n = Int(bytes.stunU16(offset + 2))
            let valueStart = offset + 4
            guard total - valueStart >= n else {
                throw .truncated("STUN attribute 0x\(String(code, radix: 16)) of \(n) bytes at \(valueStart) past end \(total)")
            }
            let padded = (n + 3) & ~3
            guard total - valueStart >= padded else {
                throw .truncated("STUN attribute 0x\(String(code, radix: 16)) padding past end \(total)")
            }
            let value = UnsafeRawBufferPointer(rebasing: bytes[valueStart..<(valueStart + n)])
            if parsed.fingerprintOffset != nil {
                throw .malformed("STUN attribute 0x\(String(code, radix: 16)) after FINGERPRINT")
            }
            switch code {
            case STUNAttribute.Code.fingerprint:
                guard n == 4 else { throw .malformed("FINGERPRINT of \(n) bytes") }
                parsed.fingerprintOffset = offset
                parsed.fingerprint = value.stunU32(0)
            case _ where parsed.integrityOffset != nil:
                break  // §15.4: ignored after MESSAGE-INTEGRITY
            case STUNAttribute.Code.messageIntegrity:
                guard n == STUNDigest.size else { throw .malformed("MESSAGE-INTEGRITY of \(n) bytes") }
                parsed.integrityOffset = offset
                parsed.integrity = STUNDigest(value)
            default:
                if let a = try STUNAttribute.parse(code: code, value: value, transactionID: id) {
                    parsed.message.attributes.append(a)
                } else if code < 0x8000 {
                    parsed.unknownComprehensionRequired.append(code)
                }
            }
            offset = valueStart + padded
        }
        return parsed
    }

    // MARK: - the attributes ICE reads (the first of each kind counts, §15)

    public var username: String? {
        for case .username(let s) in attributes { return s }
        return nil
    }

    public var xorMappedAddress: ICEAddress? {
        for case .xorMappedAddress(let a) in attributes { return a }
        return nil
    }

    public var mappedAddress: ICEAddress? {
        for case .mappedAddress(let a) in attributes { return a }
        return nil
    }

    public var priority: UInt32? {
        for case .priority(let p) in attributes { return p }
        return nil
    }

    public var useCandidate: Bool { attributes.contains(.useCandidate) }

    public var iceControlling: UInt64? {
        for case .iceControlling(let t) in attributes { return t }
        return nil
    }

    public var iceControlled: UInt64? {
        for case .iceControlled(let t) in attributes { return t }
        return nil
    }

    public var errorCode: Int? {
        for case .errorCode(let c, _) in attributes { return c }
        return nil
    }

    /// The ERROR-CODE's reason phrase.
    public var errorReason: String? {
        for case .errorCode(_, let r) in attributes { return r }
        return nil
    }

    public var lifetime: UInt32? {
        for case .lifetime(let l) in attributes { return l }
        return nil
    }

    public var xorRelayedAddress: ICEAddress? {
        for case .xorRelayedAddress(let a) in attributes { return a }
        return nil
    }

    public var realm: String? {
        for case .realm(let r) in attributes { return r }
        return nil
    }

    public var nonce: String? {
        for case .nonce(let n) in attributes { return n }
        return nil
    }

    public var passwordAlgorithms: [UInt8]? {
        for case .passwordAlgorithms(let p) in attributes { return p }
        return nil
    }
}
