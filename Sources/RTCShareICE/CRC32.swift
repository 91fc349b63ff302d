// CRC-32 as IEEE 802.3 / ITU-T V.42 define it (reflected polynomial 0xEDB88320, initial value
// and final XOR 0xFFFFFFFF), which is the CRC STUN's FINGERPRINT uses (RFC 5389 §15.5). A
// 256-entry table built once; byte at a time is plenty for messages of a few hundred bytes.
//
// Incremental (`update` then `value`) because the fingerprint of a received message must be
// computed over its header with the length field patched, without copying the message.

/// A running CRC-32 (IEEE).
struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private var state: UInt32 = 0xFFFF_FFFF

    init() {}

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var c = state
        Self.table.withUnsafeBufferPointer { t in
            for b in bytes { c = t[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        }
        state = c
    }

    var value: UInt32 { state ^ 0xFFFF_FFFF }

    /// The CRC of `bytes` in one call.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var c = CRC32()
        c.update(bytes)
        return c.value
    }
}
