import RTCShareCore

// Sender and receiver reports, SDES and BYE (RFC 3550 §6.4–6.6), and the compound a sender
// sends every reporting interval (SR + SDES CNAME, + BYE when it stops).

/// The sender information of an SR (RFC 3550 §6.4.1):
///
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |10|P|    RC   |   PT=SR=200   |             length            |
///     |                         SSRC of sender                        |
///     |              NTP timestamp, most significant word             |
///     |             NTP timestamp, least significant word             |
///     |                         RTP timestamp                         |
///     |                     sender's packet count                     |
///     |                      sender's octet count                     |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |                 report blocks (24 bytes each)                 |
public struct RTCPSenderInfo: Equatable, Sendable {
    public var ssrc: UInt32
    /// Wall-clock time of `rtpTimestamp`: the NTP/RTP mapping receivers use for lip sync.
    public var ntpTime: NTPTime
    public var rtpTimestamp: UInt32
    /// Packets and payload octets sent since the start (both wrap modulo 2^32).
    public var packetCount: UInt32
    public var octetCount: UInt32
    /// Report blocks that followed in the parsed packet (ignored when writing: the block list decides).
    public var reportCount: Int

    public init(ssrc: UInt32, ntpTime: NTPTime, rtpTimestamp: UInt32, packetCount: UInt32,
                octetCount: UInt32, reportCount: Int = 0) {
        self.ssrc = ssrc
        self.ntpTime = ntpTime
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reportCount = reportCount
    }
}

/// One reception report block (RFC 3550 §6.4.1):
///
///     |                 SSRC_n (SSRC of source n)                     |
///     | fraction lost |       cumulative number of packets lost       |
///     |           extended highest sequence number received           |
///     |                      interarrival jitter                      |
///     |                         last SR (LSR)                         |
///     |                   delay since last SR (DLSR)                  |
public struct RTCPReportBlock: Equatable, Sendable {
    public static let byteCount = 24
    /// Largest and smallest cumulative loss a signed 24-bit field holds.
    public static let cumulativeLostRange: ClosedRange<Int32> = -(1 << 23)...((1 << 23) - 1)

    public var ssrc: UInt32
    /// Loss since the last report, in 1/256.
    public var fractionLost: UInt8
    /// Signed 24 bits on the wire (duplicates can make it negative); clamped when written.
    public var cumulativeLost: Int32
    public var extendedHighestSequence: UInt32
    /// Interarrival jitter in RTP timestamp units.
    public var jitter: UInt32
    /// Middle 32 bits of the NTP time of the last SR received from `ssrc`; 0 if none yet.
    public var lastSenderReport: UInt32
    /// Time since that SR, in 1/65536 s.
    public var delaySinceLastSenderReport: UInt32

    public init(ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32, extendedHighestSequence: UInt32,
                jitter: UInt32, lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequence = extendedHighestSequence
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    init(reading r: RTPReader, at p: Int) throws(RTPError) {
        var b = RTPReader(try r.bytes(at: p, count: Self.byteCount))
        let ssrc = try b.u32()
        let word = try b.u32()
        // Shift the 24-bit field to the top and back: arithmetic shift sign-extends it.
        self.init(ssrc: ssrc, fractionLost: UInt8(truncatingIfNeeded: word >> 24),
                  cumulativeLost: Int32(bitPattern: word << 8) >> 8, extendedHighestSequence: try b.u32(),
                  jitter: try b.u32(), lastSenderReport: try b.u32(), delaySinceLastSenderReport: try b.u32())
    }

    func write(_ w: inout RTCPWriter) {
        w.u32(ssrc)
        let lost = min(max(cumulativeLost, Self.cumulativeLostRange.lowerBound), Self.cumulativeLostRange.upperBound)
        w.u32(UInt32(fractionLost) << 24 | UInt32(bitPattern: lost) & 0x00FF_FFFF)
        w.u32(extendedHighestSequence)
        w.u32(jitter)
        w.u32(lastSenderReport)
        w.u32(delaySinceLastSenderReport)
    }

    /// Round-trip time this block implies for a report received at `now`; see `NTPTime`.
    public func roundTripMicroseconds(now: NTPTime) -> Int64? {
        NTPTime.roundTripMicroseconds(now: now, lastSenderReport: lastSenderReport,
                                      delaySinceLastSenderReport: delaySinceLastSenderReport)
    }
}

/// Most report blocks (or SDES chunks, BYE sources) one packet's 5-bit count can announce.
public let rtcpMaxCount = 31

/// A sender report.
public struct RTCPSenderReport: RTCPWritable, Equatable, Sendable {
    public var info: RTCPSenderInfo
    /// At most 31.
    public var reportBlocks: [RTCPReportBlock]

    public init(info: RTCPSenderInfo, reportBlocks: [RTCPReportBlock] = []) {
        self.info = info
        self.reportBlocks = reportBlocks
    }

    public var size: Int { 28 + RTCPReportBlock.byteCount * reportBlocks.count }

    public func validate() throws(RTPError) {
        guard reportBlocks.count <= rtcpMaxCount else { throw .malformed("SR with \(reportBlocks.count) report blocks") }
    }

    public func unsafeWrite(_ w: inout RTCPWriter) {
        w.header(count: reportBlocks.count, type: RTCPPacketType.senderReport, bytes: size)
        w.u32(info.ssrc)
        w.u32(info.ntpTime.seconds)
        w.u32(info.ntpTime.fraction)
        w.u32(info.rtpTimestamp)
        w.u32(info.packetCount)
        w.u32(info.octetCount)
        for block in reportBlocks { block.write(&w) }
    }
}

/// A receiver report.
public struct RTCPReceiverReport: RTCPWritable, Equatable, Sendable {
    public var ssrc: UInt32
    /// At most 31.
    public var reportBlocks: [RTCPReportBlock]

    public init(ssrc: UInt32, reportBlocks: [RTCPReportBlock] = []) {
        self.ssrc = ssrc
        self.reportBlocks = reportBlocks
    }

    public var size: Int { 8 + RTCPReportBlock.byteCount * reportBlocks.count }

    public func validate() throws(RTPError) {
        guard reportBlocks.count <= rtcpMaxCount else { throw .malformed("RR with \(reportBlocks.count) report blocks") }
    }

    public func unsafeWrite(_ w: inout RTCPWriter) {
        w.header(count: reportBlocks.count, type: RTCPPacketType.receiverReport, bytes: size)
        w.u32(ssrc)
        for block in reportBlocks { block.write(&w) }
    }
}

/// An SDES packet with one chunk holding one CNAME item (RFC 3550 §6.5.1):
///
///     |V=2|P|  SC=1   |  PT=SDES=202  |             length            |
///     |                          SSRC/CSRC_1                          |
///     |  CNAME=1      |     length    | user and domain name        ...
///     ... text, then a zero octet and zero padding to 32 bits
public struct RTCPSourceDescription: RTCPWritable, Equatable, Sendable {
    public var ssrc: UInt32
    /// UTF-8, at most 255 bytes.
    public var cname: String

    public init(ssrc: UInt32, cname: String) {
        self.ssrc = ssrc
        self.cname = cname
    }

    /// Header, SSRC, then type + length + text + at least one zero octet, rounded up to 32 bits.
    public var size: Int { 8 + ((2 + cname.utf8.count + 1 + 3) & ~3) }

    public func validate() throws(RTPError) {
        guard cname.utf8.count <= 255 else { throw .malformed("CNAME of \(cname.utf8.count) bytes (at most 255)") }
    }

    public func unsafeWrite(_ w: inout RTCPWriter) {
        let end = w.offset + size
        w.header(count: 1, type: RTCPPacketType.sourceDescription, bytes: size)
        w.u32(ssrc)
        w.u8(1)
        w.u8(UInt8(cname.utf8.count))
        for byte in cname.utf8 { w.u8(byte) }
        w.zeros(end - w.offset)
    }
}

/// A BYE (RFC 3550 §6.6): the sources leaving and an optional reason.
public struct RTCPGoodbye: RTCPWritable, Equatable, Sendable {
    /// At most 31.
    public var ssrcs: [UInt32]
    /// UTF-8, at most 255 bytes.
    public var reason: String?

    public init(ssrcs: [UInt32], reason: String? = nil) {
        self.ssrcs = ssrcs
        self.reason = reason
    }

    public var size: Int {
        4 + 4 * ssrcs.count + (reason.map { (1 + $0.utf8.count + 3) & ~3 } ?? 0)
    }

    public func validate() throws(RTPError) {
        guard ssrcs.count <= rtcpMaxCount else { throw .malformed("BYE with \(ssrcs.count) sources") }
        if let reason, reason.utf8.count > 255 { throw .malformed("BYE reason of \(reason.utf8.count) bytes") }
    }

    public func unsafeWrite(_ w: inout RTCPWriter) {
        let end = w.offset + size
        w.header(count: ssrcs.count, type: RTCPPacketType.goodbye, bytes: size)
        for ssrc in ssrcs { w.u32(ssrc) }
        if let reason {
            w.u8(UInt8(reason.utf8.count))
            for byte in reason.utf8 { w.u8(byte) }
        }
        w.zeros(end - w.offset)
    }
}

/// Builds what a sender sends each reporting interval: SR, then SDES with its CNAME (RFC 3550
/// §6.1 requires both in every compound), then BYE for the same SSRC when it is leaving.
public enum RTCPCompoundBuilder {
    /// Bytes `write` needs for these parts.
    public static func size(_ report: RTCPSenderReport, cname: String, byeReason: String?? = nil) -> Int {
        report.size + RTCPSourceDescription(ssrc: report.info.ssrc, cname: cname).size
            + (byeReason.map { RTCPGoodbye(ssrcs: [], reason: $0).size + 4 } ?? 0)
    }

    /// Writes SR + SDES (+ BYE when `byeReason` is given: `.some(nil)` for a BYE without reason)
    /// at the start of `buffer`; returns the compound's length. Nothing is written if it does not fit.
    public static func write(_ report: RTCPSenderReport, cname: String, byeReason: String?? = nil,
                             into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let sdes = RTCPSourceDescription(ssrc: report.info.ssrc, cname: cname)
        try report.validate()
        try sdes.validate()
        let needed = size(report, cname: cname, byeReason: byeReason)
        guard buffer.count >= needed, buffer.baseAddress != nil else {
            throw .bufferTooSmall(needed: needed, available: buffer.count)
        }
        var n = try report.write(into: buffer)
        n += try sdes.write(into: buffer, at: n)
        if let reason = byeReason {
            n += try RTCPGoodbye(ssrcs: [report.info.ssrc], reason: reason).write(into: buffer, at: n)
        }
        return n
    }
}
