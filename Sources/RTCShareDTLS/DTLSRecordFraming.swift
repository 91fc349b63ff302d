// A cheap check that a datagram is a run of whole DTLS records (RFC 6347 §4.1) before OpenSSL
// sees it, so garbage is counted where we can see it rather than silently discarded inside
// OpenSSL:
//
//     struct {
//         ContentType type;            // 20 change_cipher_spec, 21 alert, 22 handshake, 23 application_data
//         ProtocolVersion version;     // {254, 255} DTLS 1.0, {254, 253} DTLS 1.2
//         uint16 epoch;
//         uint48 sequence_number;
//         uint16 length;               // at most 2^14 + 2048
//         opaque fragment[length];
//     } DTLSCiphertext;
//
// Records whose framing is right but whose contents are not (bad MAC, unexpected message) are
// still OpenSSL's to judge.

enum DTLSRecordFraming {
    static let headerBytes = 13
    static let maximumFragmentBytes = 16_384 + 2_048

    /// Whether `datagram` is one or more whole DTLS records and nothing else.
    static func isWellFramed(_ datagram: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < datagram.count {
            guard datagram.count - offset >= headerBytes else { return false }
            let type = datagram[offset]
            guard (20...23).contains(type), datagram[offset + 1] == 254 else { return false }
            let length = Int(datagram[offset + 11]) << 8 | Int(datagram[offset + 12])
            guard length <= maximumFragmentBytes, length <= datagram.count - offset - headerBytes else { return false }
            offset += headerBytes + length
        }
        return offset > 0
    }
}
