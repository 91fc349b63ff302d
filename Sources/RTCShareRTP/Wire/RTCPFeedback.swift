import RTCShareCore

// RTCP feedback messages (RFC 4585 §6.1): NACK, PLI, FIR, REMB and the fixed part of
// transport-cc (the whole of it in `RTCPTransportFeedback`). All share one layout:
//
//      0                   1                   2                   3
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |V=2|P|   FMT   |       PT      |          length               |
//     |                  SSRC of packet sender                        |
//     |                  SSRC of media source                         |
//     :            Feedback Control Information (FCI)                 :

/// One generic NACK FCI entry (RFC 4585 §6.2.1): packet `pid` is lost, and so is `pid + i + 1`
/// for every bit i set in `blp` (bit 0 is the least significant).
///
///     |            PID                |             BLP               |
public struct RTCPNackEntry: Hashable, Sendable, CustomStringConvertible {
    /// RTPFB FMT of generic NACK.
    public static let format: UInt8 = 1

    public var pid: UInt16
    public var blp: UInt16

    public init(pid: UInt16, blp: UInt16) {
        self.pid = pid
        self.blp = blp
    }

    /// Sequence numbers this entry reports lost.
    public var lostCount: Int { 1 + blp.nonzeroBitCount }

    /// Calls `body` with each lost sequence number, oldest first (wrapping past 65535).
    public func forEachLost(_ body: (UInt16) -> Void) {
        body(pid)
        var bits = blp
        while bits != 0 {
            let i = UInt16(bits.trailingZeroBitCount)
            body(pid &+ i &+ 1)
            bits &= bits &- 1
        }
    }

    /// The lost sequence numbers as an array (tests and logs).
    public var lostSequences: [UInt16] {
        var out: [UInt16] = []
        out.reserveCapacity(lostCount)
        forEachLost { out.append($0) }
        return out
    }

    public var description: String { "NACK(pid \(pid), blp 0x\(String(blp, radix: 16)))" }

    /// The fewest FCI entries that report exactly the sequence numbers in `lost`.
    ///
    /// `lost` is sorted in place (insertion sort: no allocation; NACK lists are short) and may
    /// hold duplicates. Sequence numbers are taken as a circle: the list starts after the
    /// largest gap, so a run across the 65535 → 0 wrap stays together. Each entry then covers
    /// its PID and the 16 numbers after it, greedily, which is optimal for fixed-width windows.
    /// Writes up to `entries.count` entries, oldest first; returns how many it wrote (if the
    /// output is at least `lost.count` long, all of them).
    public static func minimalEntries(lost: UnsafeMutableBufferPointer<UInt16>,
                                      into entries: UnsafeMutableBufferPointer<RTCPNackEntry>) -> Int {
        let n = lost.count
        guard n > 0, entries.count > 0 else { return 0 }
        for i in 1..<max(n, 1) {
            let v = lost[i]
            var j = i
            while j > 0, lost[j - 1] > v {
                lost[j] = lost[j - 1]
                j -= 1
            }
            lost[j] = v
        }
        // Start after the largest circular gap between neighbours.
        var start = 0
        var largestGap = Int(lost[0]) + 65_536 - Int(lost[n - 1])
        for i in 1..<max(n, 1) where Int(lost[i]) - Int(lost[i - 1]) > largestGap {
            largestGap = Int(lost[i]) - Int(lost[i - 1])
            start = i
        }
        var written = 0
        var current = RTCPNackEntry(pid: lost[start], blp: 0)
        for k in 1..<max(n, 1) {
            let seq = lost[(start + k) % n]
            let distance = seq &- current.pid
            if distance == 0 { continue }  // duplicate
            if distance <= 16 {
                current.blp |= 1 << (distance - 1)
            } else {
                entries[written] = current
                written += 1
                if written == entries.count { return written }
                current = RTCPNackEntry(pid: seq, blp: 0)
            }
        }
        entries[written] = current
        return written + 1
    }

    /// `minimalEntries(lost:into:)` over an array (tests, and callers off the hot path).
    public static func minimalEntries(lost: [UInt16]) -> [RTCPNackEntry] {
        var scratch = lost
        var out = [RTCPNackEntry](repeating: RTCPNackEntry(pid: 0, blp: 0), count: lost.count)
        let n = scratch.withUnsafeMutableBufferPointer { l in
            out.withUnsafeMutableBufferPointer { e in minimalEntries(lost: l, into: e) }
        }
        out.removeLast(out.count - n)
        return out
    }
}

/// A generic NACK (RTPFB, FMT 1) with one or more entries.
public struct RTCPGenericNack: RTCPWritable, Equatable, Sendable {
    public var sender: UInt32
    public var media: UInt32
    /// At least one; at most what a 16-bit length allows (16 381).
    public var entries: [RTCPNackEntry]

    public init(sender: UInt32, media: UInt32, entries: [RTCPNackEntry]) {
        self.sender = sender
        self.media = media
        self.entries = entries
    }

    public var size: Int { 12 + 4 * entries.count }

    public func validate() throws(RTPError) {
        guard !entries.isEmpty, size / 4 - 1 <= Int(UInt16.max) else {
            throw .malformed("NACK with \(entries.count) entries")
        }
    }

    public func unsafeWrite(_ w: inout RTCPWriter) {
        w.header(count: Int(RTCPNackEntry.format), type: RTCPPacketType.transportFeedback, bytes: size)
        w.u32(sender)
        w.u32(media)
        for e in entries {
            w.u16(e.pid)
            w.u16(e.blp)
        }
    }
}

/// Picture loss indication (PSFB, FMT 1, no FCI): the receiver lost part of a picture; send a
/// keyframe.
public struct RTCPPictureLossIndication: RTCPWritable, Equatable, Sendable {
    public static let format: UInt8 = 1
    public var sender: UInt32
    public var media: UInt32

    public init(sender: UInt32, media: UInt32) {
        self.sender = sender
        self.media = media
    }

    public var size: Int { 12 }
    public func validate() throws(RTPError) {}

    public func unsafeWrite(_ w: inout RTCPWriter) {
        w.header(count: Int(Self.format), type: RTCPPacketType.payloadFeedback, bytes: size)
        w.u32(sender)
        w.u32(media)
    }
}

/// One FIR entry (RFC 5104 §4.3.1.1); a new sequence number means a new request.
///
///     |                              SSRC                             |
///     | Seq nr.       |    Reserved                                   |
public struct RTCPFIREntry: Hashable, Sendable {
    public var ssrc: UInt32
    public var sequenceNumber: UInt8

    public init(ssrc: UInt32, sequenceNumber: UInt8) {
        self.ssrc = ssrc
        self.sequenceNumber = sequenceNumber
    }
}

/// Full intra request (PSFB, FMT 4). The media-source field is unused and written as 0.
public struct RTCPFullIntraRequest: RTCPWritable, Equatable, Sendable {
    public static let format: UInt8 = 4
    public var sender: UInt32
    /// At least one.
    public var entries: [RTCPFIREntry]

    public init(sender: UInt32, entries: [RTCPFIREntry]) {
        self.sender = sender
        self.entries = entries
    }

    public var size: Int { 12 + 8 * entries.count }

    public func validate() throws(RTPError) {
        guard !entries.isEmpty, size / 4 - 1 <= Int(UInt16.max) else {
            throw .malformed("FIR with \(entries.count) entries")
        }
    }

    public func unsafeWrite(_ w: inout RTCPWriter) {
        w.header(count: Int(Self.format), type: RTCPPacketType.payloadFeedback, bytes: size)
        w.u32(sender)
        w.u32(0)
        for e in entries {
            w.u32(e.ssrc)
            w.u8(e.sequenceNumber)
            w.zeros(3)
        }
    }
}

/// Receiver estimated maximum bitrate (PSFB, FMT 15, draft-alvestrand-rmcat-remb-03 §2.2):
///
///     |  Unique identifier 'R' 'E' 'M' 'B'                            |
///     |  Num SSRC     | BR Exp    |  BR Mantissa                      |
///     |   SSRC feedback                                               |  × Num SSRC
///
/// The bitrate is `mantissa << exp` bit/s, an 18-bit mantissa and a 6-bit exponent.
public struct RTCPREMB: RTCPWritable, Equatable, Sendable {
    public static let format: UInt8 = 15
    /// "REMB" as a big-endian word.
    public static let identifier: UInt32 = 0x5245_4D42
    /// Largest mantissa (18 bits).
    public static let maxMantissa: UInt32 = (1 << 18) - 1

    public var sender: UInt32
    /// Bit/s. Values needing more than 18 significant bits are rounded down when written.
    public var bitrate: UInt64
    /// At most 255.
    public var ssrcs: [UInt32]

    public init(sender: UInt32, bitrate: UInt64, ssrcs: [UInt32]) {
        self.sender = sender
        self.bitrate = bitrate
        self.ssrcs = ssrcs
    }

    /// The exponent and mantissa for `bitrate`: the smallest exponent whose mantissa fits 18
    /// bits, the mantissa rounded down (never announce more than was estimated).
    public static func encode(bitrate: UInt64) -> (exponent: UInt8, mantissa: UInt32) {
        let significant = 64 - bitrate.leadingZeroBitCount
        let exponent = max(0, significant - 18)
        return (UInt8(exponent), UInt32(truncatingIfNeeded: bitrate >> UInt64(exponent)))
    }

    /// `mantissa << exponent`, saturating at `UInt64.max` (a 6-bit exponent can reach 2^63 · 2^18).
    public static func bitrate(exponent: UInt8, mantissa: UInt32) -> UInt64 {
        let m = UInt64(mantissa & maxMantissa)
        guard m != 0 else { return 0 }
        let e = Int(exponent & 0x3F)
        guard e <= m.leadingZeroBitCount else { return UInt64.max }
        return m << UInt64(e)
    }

    public var size: Int { 20 + 4 * ssrcs.count }

    public func validate() throws(RTPError) {
        guard ssrcs.count <= 255 else { throw .malformed("REMB with \(ssrcs.count) SSRCs (at most 255)") }
    }

    public func unsafeWrite(_ w: inout RTCPWriter) {
        w.header(count: Int(Self.format), type: RTCPPacketType.payloadFeedback, bytes: size)
        w.u32(sender)
        w.u32(0)
        w.u32(Self.identifier)
        let (exponent, mantissa) = Self.encode(bitrate: bitrate)
        w.u8(UInt8(ssrcs.count))
        w.u8(exponent << 2 | UInt8(truncatingIfNeeded: mantissa >> 16))
        w.u16(UInt16(truncatingIfNeeded: mantissa))
        for ssrc in ssrcs { w.u32(ssrc) }
    }
}

/// The fixed part of a transport-wide congestion control feedback (RTPFB, FMT 15,
/// draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1):
///
///     |      base sequence number     |      packet status count      |
///     |                 reference time                | fb pkt. count |
///
/// The packet status chunks and receive deltas that follow lie at `packetInfo` in the parsed
/// datagram (the parser has checked them); `RTCPTransportFeedback.forEachPacket` reads them.
public struct RTCPTransportCCHeader: Equatable, Sendable {
    public static let format: UInt8 = 15

    public var sender: UInt32
    public var media: UInt32
    public var baseSequence: UInt16
    public var statusCount: UInt16
    /// Signed 24 bits, in multiples of 64 ms.
    public var referenceTime: Int32
    /// Counts feedback packets, to detect lost feedback.
    public var feedbackCount: UInt8
    /// Where the chunks and deltas lie in the parsed datagram.
    public var packetInfo: Range<Int>

    public init(sender: UInt32, media: UInt32, baseSequence: UInt16, statusCount: UInt16,
                referenceTime: Int32, feedbackCount: UInt8, packetInfo: Range<Int> = 0..<0) {
        self.packetInfo = packetInfo
        self.sender = sender
        self.media = media
        self.baseSequence = baseSequence
        self.statusCount = statusCount
        self.referenceTime = referenceTime
        self.feedbackCount = feedbackCount
    }
}
