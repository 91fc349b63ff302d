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
// still OpenSSL's to judge. Read with the core's bounds-checked `ByteReader`: a record whose
// length runs past the datagram is a read that fails, and the datagram is not well framed.

import RTCShareCore

enum DTLSRecordFraming {
    static let headerBytes = 13
    static let maximumFragmentBytes = 16_384 + 2_048

    /// Whether `datagram` is one or more whole DTLS records and nothing else.
    static func isWellFramed(_ datagram: UnsafeRawBufferPointer) -> Bool {
        var r = ByteReader<CoreError>(datagram)
        while !r.isAtEnd {
            guard r.remaining >= headerBytes,
                  let type = try? r.u8(), (20...23).contains(type),
                  let major = try? r.u8(), major == 254,
                  (try? r.skip(headerBytes - 4)) != nil,  // minor version, epoch, sequence number
                  let length = try? r.u16(), length <= maximumFragmentBytes,
                  (try? r.skip(Int(length))) != nil
            else { return false }
        }
        return r.offset > 0
    }
}
