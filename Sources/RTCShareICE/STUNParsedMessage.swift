// A parsed STUN message and where its MESSAGE-INTEGRITY and FINGERPRINT lie, with the two
// checks over the bytes it was parsed from (RFC 5389 §15.4, §15.5).
//
// Both checks hash the message as it was when the sender computed the value: everything before
// the attribute, with the header's length field counting up to the end of that attribute. The
// patched header is rebuilt on the stack; the received bytes are neither copied nor changed.

/// What `STUNMessage.parse` found.
public struct STUNParsedMessage: Equatable, Sendable {
    public var message: STUNMessage
    /// Offset of the MESSAGE-INTEGRITY attribute's header, when present.
    public var integrityOffset: Int?
    public var integrity: STUNDigest?
    /// Offset of the FINGERPRINT attribute's header, when present (always the last attribute).
    public var fingerprintOffset: Int?
    public var fingerprint: UInt32?
    /// Types of unknown comprehension-required attributes, in wire order: a request carrying
    /// any is answered with 420 and these in UNKNOWN-ATTRIBUTES; a response carrying any is
    /// discarded (§7.3.1, §7.3.3).
    public var unknownComprehensionRequired: [UInt16] = []

    init(message: STUNMessage) {
        self.message = message
    }

    /// Whether MESSAGE-INTEGRITY is present and matches HMAC-SHA1 keyed with `key` over
    /// `bytes`, which must be the bytes this was parsed from.
    public func verifyIntegrity(_ bytes: UnsafeRawBufferPointer, key: [UInt8]) -> Bool {
        guard let at = integrityOffset, let expected = integrity,
              at >= STUNMessage.headerSize, at + STUNMessage.integritySize <= bytes.count else { return false }
        let hmac = HMACSHA1(key: key)
        Self.withPatchedHeader(bytes, length: at + STUNMessage.integritySize - STUNMessage.headerSize) { hmac.update($0) }
        hmac.update(UnsafeRawBufferPointer(rebasing: bytes[STUNMessage.headerSize..<at]))
        return hmac.finish() == expected
    }

    /// Whether FINGERPRINT is present and matches the CRC-32 of `bytes`, which must be the
    /// bytes this was parsed from.
    public func verifyFingerprint(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let at = fingerprintOffset, let expected = fingerprint,
              at >= STUNMessage.headerSize, at + STUNMessage.fingerprintSize <= bytes.count else { return false }
        var crc = CRC32()
        Self.withPatchedHeader(bytes, length: at + STUNMessage.fingerprintSize - STUNMessage.headerSize) { crc.update($0) }
        crc.update(UnsafeRawBufferPointer(rebasing: bytes[STUNMessage.headerSize..<at]))
        return crc.value ^ STUNMessage.fingerprintXor == expected
    }

    /// Calls `body` with the 20 header bytes of `bytes`, the length field set to `length`.
    private static func withPatchedHeader(_ bytes: UnsafeRawBufferPointer, length: Int,
                                          _ body: (UnsafeRawBufferPointer) -> Void) {
        withUnsafeTemporaryAllocation(byteCount: STUNMessage.headerSize, alignment: 1) { header in
            header.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<STUNMessage.headerSize]))
            header.stunPut16(UInt16(truncatingIfNeeded: length), at: 2)
            body(UnsafeRawBufferPointer(header))
        }
    }
}
