import RTCShareCore

// The MID header extension (`urn:ietf:params:rtp-hdrext:sdes:mid`, RFC 9143 §15 and RFC 8843
// §15.1): the RTCP SDES MID item's value carried in RTP packets, so that a receiver demultiplexing
// a BUNDLE group can tell which m-line (`a=mid`) a packet belongs to before it has seen its
// SSRC signalled. The element data is the mid's bytes, no terminator:
//
//      0                   1                   2
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 ...
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |  ID   | len-1 |  mid byte 0   |  mid byte 1   | ...
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The one-byte form holds 1...16 data bytes, so a mid sent this way is 1...16 bytes long.
// The value is kept inline (two words), not as a String: it is written into every packet, and
// the per-packet path allocates nothing.

/// A media identification tag as RTP packets carry it: 1...16 bytes.
public struct RTPMid: Equatable, Hashable, Sendable, CustomStringConvertible {
    public static let uri = "urn:ietf:params:rtp-hdrext:sdes:mid"

    /// The bytes, big-endian from the top of `high` (bytes 0...7) then `low` (8...15); unused
    /// bytes are zero.
    private var high: UInt64 = 0
    private var low: UInt64 = 0
    /// 1...16.
    public private(set) var count: Int

    /// A mid from its SDP text (`a=mid:0`); nil when empty, longer than 16 bytes, or holding a
    /// byte outside printable ASCII (RFC 5888's mid is a token).
    public init?(_ text: some StringProtocol) {
        count = 0
        for byte in text.utf8 {
            guard count < 16, (0x21...0x7E).contains(byte) else { return nil }
            set(byte, at: count)
            count += 1
        }
        guard count > 0 else { return nil }
    }

    /// A mid read from an element's data (untrusted): nil for 0 or more than 16 bytes.
    public init?(bytes: UnsafeRawBufferPointer) {
        guard RTPOneByteExtensions.validDataLengths.contains(bytes.count) else { return nil }
        count = bytes.count
        for i in 0..<bytes.count { set(bytes[i], at: i) }
    }

    private mutating func set(_ byte: UInt8, at i: Int) {
        if i < 8 { high |= UInt64(byte) << (56 - 8 * UInt64(i)) } else { low |= UInt64(byte) << (56 - 8 * UInt64(i - 8)) }
    }

    /// Byte `i` (0..<count).
    public subscript(i: Int) -> UInt8 {
        precondition(i >= 0 && i < count, "mid byte \(i) of \(count)")
        return UInt8(truncatingIfNeeded: i < 8 ? high >> (56 - 8 * UInt64(i)) : low >> (56 - 8 * UInt64(i - 8)))
    }

    /// Writes the `count` bytes at `offset`; the caller checked the room.
    func write(into writer: inout RTPWriter) {
        for i in 0..<count { writer.u8(self[i]) }
    }

    public var description: String { String(decoding: (0..<count).map { self[$0] }, as: UTF8.self) }
}
