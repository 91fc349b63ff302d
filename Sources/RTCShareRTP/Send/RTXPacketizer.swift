import RTCShareCore

// RTP retransmission payload format, RFC 4588 §4, for session multiplexing (its own SSRC and
// payload type, negotiated with a=fmtp:<rtx pt> apt=<original pt>):
//
//      0                   1                   2                   3
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |                         RTP Header                            |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |            OSN                |                               |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               |
//     |                  Original RTP Packet Payload                  |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The RTX header keeps the original's timestamp, marker, CSRCs and extension block (copied
// byte for byte), and has the RTX stream's SSRC, payload type and its own sequence number.
// The original's padding is not carried. Both directions parse their input with the checked
// `RTPHeader.parse`, and never trap.

/// The send side of an RTX stream.
public struct RTXPacketizer: Sendable {
    public let ssrc: UInt32
    public let payloadType: UInt8
    /// The sequence number the next RTX packet gets.
    public private(set) var nextSequenceNumber: UInt16
    /// RTX packets written and their payload octets (OSN included), for the RTX stream's SR.
    public private(set) var packetCount: UInt32 = 0
    public private(set) var octetCount: UInt32 = 0

    public init(ssrc: UInt32, payloadType: UInt8, initialSequenceNumber: UInt16) {
        precondition(payloadType < 128, "RTP payload type must be 0...127")
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.nextSequenceNumber = initialSequenceNumber
    }

    /// Random SSRC and first sequence number.
    public init(payloadType: UInt8, using rng: inout some RandomNumberGenerator) {
        self.init(ssrc: UInt32.random(in: 1...UInt32.max, using: &rng), payloadType: payloadType,
                  initialSequenceNumber: UInt16.random(in: 0...UInt16.max, using: &rng))
    }

    /// Bytes `write` produces for `original`: its header and extension block, 2, its payload.
    public static func size(of original: RTPParsedPacket) -> Int {
        original.headerLength + 2 + original.payloadRange.count
    }

    /// Writes the RTX packet for `original` (a stored, unprotected RTP packet) at the start of
    /// `buffer`; returns its size and takes a sequence number.
    public mutating func write(original: UnsafeRawBufferPointer,
                               into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let parsed = try RTPHeader.parse(original)
        let n = Self.size(of: parsed)
        guard buffer.count >= n else { throw .bufferTooSmall(needed: n, available: buffer.count) }
        var header = parsed.header
        header.ssrc = ssrc
        header.payloadType = payloadType
        header.sequenceNumber = nextSequenceNumber
        header.hasPadding = false
        let h = try header.write(into: buffer)
        var w = RTPWriter(buffer, at: h)
        // The extension block (its own header included) as it was.
        w.bytes(UnsafeRawBufferPointer(rebasing: original[h..<parsed.headerLength]))
        w.u16(parsed.header.sequenceNumber)
        w.bytes(UnsafeRawBufferPointer(rebasing: original[parsed.payloadRange]))
        _ = try w.finish()
        nextSequenceNumber &+= 1
        packetCount &+= 1
        octetCount &+= UInt32(truncatingIfNeeded: 2 + parsed.payloadRange.count)
        return n
    }

    /// Receiver side: rebuilds the original packet from an RTX packet, given the original
    /// stream's SSRC and payload type (from the SDP's apt=); returns its size. Throws
    /// `.truncated` when the payload is shorter than the 2-byte OSN (a padding-only RTX packet,
    /// as used for probing, carries no original).
    public static func unwrap(rtx: UnsafeRawBufferPointer, originalSSRC: UInt32, originalPayloadType: UInt8,
                              into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let parsed = try RTPHeader.parse(rtx)
        guard parsed.payloadRange.count >= 2 else {
            throw .truncated("RTX payload of \(parsed.payloadRange.count) bytes has no OSN")
        }
        let n = parsed.headerLength + parsed.payloadRange.count - 2
        guard buffer.count >= n else { throw .bufferTooSmall(needed: n, available: buffer.count) }
        var header = parsed.header
        header.ssrc = originalSSRC
        header.payloadType = originalPayloadType
        var r = RTPReader(rtx)
        try r.seek(to: parsed.payloadRange.lowerBound)
        header.sequenceNumber = try r.u16()
        header.hasPadding = false
        let payload = try r.bytes(parsed.payloadRange.upperBound - r.offset)
        let h = try header.write(into: buffer)
        var w = RTPWriter(buffer, at: h)
        w.bytes(UnsafeRawBufferPointer(rebasing: rtx[h..<parsed.headerLength]))
        w.bytes(payload)
        return try w.finish()
    }
}
