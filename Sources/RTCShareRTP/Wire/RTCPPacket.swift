import RTCShareCore

// Compound RTCP (RFC 3550 §6): what a peer sends back to us (receiver reports, feedback) and
// what we send (sender reports, SDES, BYE). Every RTCP packet starts with the same header:
//
//      0                   1                   2                   3
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |V=2|P|  count  |      PT       |             length            |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// `count` is RC/SC for reports, SDES and BYE, and FMT for feedback (RFC 4585 §6.1); `length`
// is the packet's size in 32-bit words minus one. A compound packet is such packets back to
// back, filling the datagram exactly.
//
// Input is untrusted. `RTCPParser` checks every length before reading, and walks the whole
// compound once to validate before it hands out anything, so a caller never acts on the front
// half of a malformed datagram. Items go to a non-escaping callback: parsing allocates nothing.
// Packet types it does not know are reported as `.unknown` and counted, not refused.

/// RTCP packet types (RFC 3550 §12.1, RFC 4585 §6.1).
public enum RTCPPacketType {
    public static let senderReport: UInt8 = 200
    public static let receiverReport: UInt8 = 201
    public static let sourceDescription: UInt8 = 202
    public static let goodbye: UInt8 = 203
    public static let application: UInt8 = 204
    /// Transport-layer feedback (NACK, transport-cc).
    public static let transportFeedback: UInt8 = 205
    /// Payload-specific feedback (PLI, FIR, REMB).
    public static let payloadFeedback: UInt8 = 206
}

/// One thing a compound RTCP packet says. Text and SSRC lists are not copied out: they are
/// byte ranges into the parsed buffer (read them with `RTCPParser.bytes(_:in:)`), so an item
/// is a small value and parsing never allocates.
public enum RTCPItem: Equatable, Sendable {
    /// An SR's sender information; its report blocks follow as `.reportBlock` items.
    case senderReport(RTCPSenderInfo)
    /// An RR's reporter; its report blocks follow as `.reportBlock` items.
    case receiverReport(ssrc: UInt32, reportCount: Int)
    /// One report block of an SR or RR from `reporter`.
    case reportBlock(reporter: UInt32, RTCPReportBlock)
    /// An SDES CNAME item of source `ssrc`; `text` is where its bytes lie.
    case cname(ssrc: UInt32, text: Range<Int>)
    /// A BYE for `ssrc` (one item per listed source), with the reason's bytes if given.
    case goodbye(ssrc: UInt32, reason: Range<Int>?)
    /// One generic NACK FCI entry (RFC 4585 §6.2.1).
    case nack(sender: UInt32, media: UInt32, RTCPNackEntry)
    /// Picture loss indication (RFC 4585 §6.3.1).
    case pictureLoss(sender: UInt32, media: UInt32)
    /// One full intra request entry (RFC 5104 §4.3.1).
    case fullIntraRequest(sender: UInt32, RTCPFIREntry)
    /// Receiver estimated maximum bitrate (draft-alvestrand-rmcat-remb); `ssrcs` holds
    /// `ssrcs.count / 4` big-endian SSRCs.
    case remb(sender: UInt32, bitrate: UInt64, ssrcs: Range<Int>)
    /// A transport-wide congestion control feedback: its fixed part, and where its checked
    /// chunks and deltas lie (`RTCPTransportFeedback.forEachPacket` reads them).
    case transportCC(RTCPTransportCCHeader)
    /// A packet type, or feedback format, this parser does not read; `format` is the header's
    /// count/FMT field.
    case unknown(packetType: UInt8, format: UInt8)
}

/// What a parse saw, for counters.
public struct RTCPParseSummary: Equatable, Sendable {
    /// RTCP packets in the compound.
    public var packets = 0
    /// Items handed to the callback.
    public var items = 0
    /// Packets of a type or format not read (each also gave one `.unknown` item).
    public var unknown = 0

    public init() {}
}

/// The strict compound RTCP parser.
public enum RTCPParser {
    /// Size of the common header.
    public static let headerBytes = 4

    /// Parses a whole compound packet (one datagram, after SRTCP unprotect). Nothing reaches
    /// `body` unless the whole compound is well formed.
    @discardableResult
    public static func parse(_ bytes: UnsafeRawBufferPointer,
                             _ body: (RTCPItem) -> Void) throws(RTPError) -> RTCPParseSummary {
        _ = try walk(bytes) { _ in }
        return try walk(bytes, body)
    }

    /// Parses a compound packet held in an array.
    @discardableResult
    public static func parse(_ bytes: [UInt8], _ body: (RTCPItem) -> Void) throws(RTPError) -> RTCPParseSummary {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(RTPError) in try parse(raw, body) }
        }
        return try result.get()
    }

    /// All items of a compound packet as an array (tests and logs; the hot path uses the callback).
    public static func items(_ bytes: [UInt8]) throws(RTPError) -> [RTCPItem] {
        var out: [RTCPItem] = []
        try parse(bytes) { out.append($0) }
        return out
    }

    /// The bytes an item's range points at, clamped to the buffer.
    public static func bytes(_ range: Range<Int>, in packet: [UInt8]) -> ArraySlice<UInt8> {
        packet[range.clamped(to: packet.indices)]
    }

    // MARK: walking

    private static func walk(_ bytes: UnsafeRawBufferPointer,
                             _ body: (RTCPItem) -> Void) throws(RTPError) -> RTCPParseSummary {
        var summary = RTCPParseSummary()
        let total = bytes.count
        guard total >= headerBytes else { throw .truncated("RTCP compound of \(total) bytes") }
        let r = RTPReader(bytes)
        var offset = 0
        while offset < total {
            guard total - offset >= headerBytes else {
                throw .truncated("RTCP header at offset \(offset): only \(total - offset) bytes left")
            }
            let first = try r.u8(at: offset)
            guard first >> 6 == 2 else { throw .malformed("RTCP version \(first >> 6) at offset \(offset)") }
            let padded = first & 0x20 != 0
            let count = first & 0x1F
            let type = try r.u8(at: offset + 1)
            let packetBytes = (Int(try r.u16(at: offset + 2)) + 1) * 4
            guard packetBytes <= total - offset else {
                throw .truncated("RTCP type \(type) at offset \(offset) claims \(packetBytes) bytes, \(total - offset) left")
            }
            var end = offset + packetBytes
            if padded {
                // RFC 3550 §6.4.1: only the last packet of a compound may be padded.
                guard end == total else { throw .malformed("RTCP padding bit on a packet that is not last") }
                let pad = Int(try r.u8(at: end - 1))
                guard pad >= 1, pad <= packetBytes - headerBytes else {
                    throw .malformed("RTCP pad count \(pad) in a \(packetBytes)-byte packet")
                }
                end -= pad
            }
            summary.packets += 1
            func emit(_ item: RTCPItem) {
                summary.items += 1
                if case .unknown = item { summary.unknown += 1 }
                body(item)
            }
            try readPacket(type: type, count: count, r: r, start: offset + headerBytes, end: end, emit)
            offset += packetBytes
        }
        return summary
    }

    // MARK: one packet

    /// Reads the body `start..<end` of one packet (padding already removed).
    private static func readPacket(type: UInt8, count: UInt8, r: RTPReader, start: Int, end: Int,
                                   _ emit: (RTCPItem) -> Void) throws(RTPError) {
        let n = end - start
        switch type {
        case RTCPPacketType.senderReport:
            // RFC 3550 §6.4.1: SSRC, 20 bytes of sender info, RC report blocks, then optional
            // profile-specific extensions (skipped).
            let need = 24 + Int(count) * RTCPReportBlock.byteCount
            guard n >= need else { throw .truncated("SR with \(count) blocks needs \(need) bytes, has \(n)") }
            let ssrc = try r.u32(at: start)
            let info = RTCPSenderInfo(ssrc: ssrc,
                                      ntpTime: NTPTime(seconds: try r.u32(at: start + 4), fraction: try r.u32(at: start + 8)),
                                      rtpTimestamp: try r.u32(at: start + 12), packetCount: try r.u32(at: start + 16),
                                      octetCount: try r.u32(at: start + 20), reportCount: Int(count))
            emit(.senderReport(info))
            try readBlocks(count: Int(count), reporter: ssrc, r: r, at: start + 24, emit)

        case RTCPPacketType.receiverReport:
            let need = 4 + Int(count) * RTCPReportBlock.byteCount
            guard n >= need else { throw .truncated("RR with \(count) blocks needs \(need) bytes, has \(n)") }
            let ssrc = try r.u32(at: start)
            emit(.receiverReport(ssrc: ssrc, reportCount: Int(count)))
            try readBlocks(count: Int(count), reporter: ssrc, r: r, at: start + 4, emit)

        case RTCPPacketType.sourceDescription:
            try readSourceDescription(chunks: Int(count), r: r, start: start, end: end, emit)

        case RTCPPacketType.goodbye:
            try readGoodbye(sources: Int(count), r: r, start: start, end: end, emit)

        case RTCPPacketType.transportFeedback, RTCPPacketType.payloadFeedback:
            try readFeedback(type: type, format: count, r: r, start: start, end: end, emit)

        default:
            emit(.unknown(packetType: type, format: count))
        }
    }

    private static func readBlocks(count: Int, reporter: UInt32, r: RTPReader, at: Int,
                                   _ emit: (RTCPItem) -> Void) throws(RTPError) {
        for i in 0..<count {
            emit(.reportBlock(reporter: reporter, try RTCPReportBlock(reading: r, at: at + i * RTCPReportBlock.byteCount)))
        }
    }

    /// RFC 3550 §6.5: SC chunks, each an SSRC and a list of items ended by a zero type octet and
    /// zero-padded to the next 32-bit boundary. Only CNAME is reported; other items are skipped.
    private static func readSourceDescription(chunks: Int, r: RTPReader, start: Int, end: Int,
                                              _ emit: (RTCPItem) -> Void) throws(RTPError) {
        var p = start
        for _ in 0..<chunks {
            guard end - p >= 4 else { throw .truncated("SDES chunk at offset \(p)") }
            let ssrc = try r.u32(at: p)
            p += 4
            while true {
                guard p < end else { throw .truncated("SDES chunk of \(ssrc) has no end marker") }
                let itemType = try r.u8(at: p)
                if itemType == 0 {
                    // The end marker, then zeros up to the 32-bit boundary.
                    p += 1
                    let aligned = (p + 3) & ~3
                    guard aligned <= end else { throw .truncated("SDES chunk padding at offset \(p)") }
                    while p < aligned {
                        guard try r.u8(at: p) == 0 else { throw .malformed("SDES chunk padding at offset \(p) is not zero") }
                        p += 1
                    }
                    break
                }
                guard end - p >= 2 else { throw .truncated("SDES item header at offset \(p)") }
                let length = Int(try r.u8(at: p + 1))
                guard end - p - 2 >= length else { throw .truncated("SDES item of \(length) bytes at offset \(p)") }
                if itemType == 1 { emit(.cname(ssrc: ssrc, text: (p + 2)..<(p + 2 + length))) }
                p += 2 + length
            }
        }
        guard p == end else { throw .malformed("SDES has \(end - p) bytes after its \(chunks) chunks") }
    }

    /// RFC 3550 §6.6: SC SSRCs, then optionally a length octet and reason text, zero-padded
    /// to a 32-bit boundary.
    private static func readGoodbye(sources: Int, r: RTPReader, start: Int, end: Int,
                                    _ emit: (RTCPItem) -> Void) throws(RTPError) {
        let listEnd = start + 4 * sources
        guard listEnd <= end else { throw .truncated("BYE lists \(sources) sources in \(end - start) bytes") }
        var reason: Range<Int>? = nil
        if listEnd < end {
            let length = Int(try r.u8(at: listEnd))
            let textEnd = listEnd + 1 + length
            guard textEnd <= end else { throw .truncated("BYE reason of \(length) bytes") }
            let aligned = start + ((textEnd - start + 3) & ~3)
            guard end == aligned else { throw .malformed("BYE has \(end - textEnd) bytes after its reason") }
            for i in textEnd..<end {
                guard try r.u8(at: i) == 0 else { throw .malformed("BYE reason padding at offset \(i) is not zero") }
            }
            reason = (listEnd + 1)..<textEnd
        }
        for i in 0..<sources { emit(.goodbye(ssrc: try r.u32(at: start + 4 * i), reason: reason)) }
    }

    /// RFC 4585 §6.1: sender SSRC, media SSRC, then the feedback control information.
    private static func readFeedback(type: UInt8, format: UInt8, r: RTPReader, start: Int, end: Int,
                                     _ emit: (RTCPItem) -> Void) throws(RTPError) {
        guard end - start >= 8 else { throw .truncated("feedback type \(type) of \(end - start) bytes") }
        let sender = try r.u32(at: start), media = try r.u32(at: start + 4)
        let fci = start + 8
        let fciBytes = end - fci
        let isREMB = fciBytes >= 4 ? try r.u32(at: fci) == RTCPREMB.identifier : false
        switch (type, format) {
        case (RTCPPacketType.transportFeedback, RTCPNackEntry.format):
            guard fciBytes > 0, fciBytes % 4 == 0 else { throw .malformed("NACK FCI of \(fciBytes) bytes") }
            for p in stride(from: fci, to: end, by: 4) {
                emit(.nack(sender: sender, media: media, RTCPNackEntry(pid: try r.u16(at: p), blp: try r.u16(at: p + 2))))
            }
        case (RTCPPacketType.transportFeedback, RTCPTransportCCHeader.format):
            guard fciBytes >= 8 else { throw .truncated("transport-cc FCI of \(fciBytes) bytes") }
            // 24-bit signed reference time: sign-extend through the top byte.
            let reference = Int32(bitPattern: try r.u32(at: fci + 4)) >> 8
            let header = RTCPTransportCCHeader(sender: sender, media: media, baseSequence: try r.u16(at: fci),
                                               statusCount: try r.u16(at: fci + 2), referenceTime: reference,
                                               feedbackCount: try r.u8(at: fci + 7), packetInfo: (fci + 8)..<end)
            // The chunks and deltas are checked here, so nothing of a broken one is delivered.
            try RTCPTransportFeedback.forEachPacket(of: header, in: r.bytes) { _, _ in }
            emit(.transportCC(header))
        case (RTCPPacketType.payloadFeedback, RTCPPictureLossIndication.format):
            guard fciBytes == 0 else { throw .malformed("PLI with \(fciBytes) bytes of FCI") }
            emit(.pictureLoss(sender: sender, media: media))
        case (RTCPPacketType.payloadFeedback, RTCPFullIntraRequest.format):
            guard fciBytes > 0, fciBytes % 8 == 0 else { throw .malformed("FIR FCI of \(fciBytes) bytes") }
            for p in stride(from: fci, to: end, by: 8) {
                emit(.fullIntraRequest(sender: sender, RTCPFIREntry(ssrc: try r.u32(at: p), sequenceNumber: try r.u8(at: p + 4))))
            }
        case (RTCPPacketType.payloadFeedback, RTCPREMB.format) where isREMB:
            guard fciBytes >= 8 else { throw .truncated("REMB FCI of \(fciBytes) bytes") }
            let sources = Int(try r.u8(at: fci + 4))
            guard fciBytes == 8 + 4 * sources else {
                throw .malformed("REMB lists \(sources) SSRCs in \(fciBytes - 8) bytes")
            }
            let exponent = try r.u8(at: fci + 5) >> 2
            let mantissa = (UInt32(try r.u8(at: fci + 5) & 0x03) << 16) | UInt32(try r.u16(at: fci + 6))
            emit(.remb(sender: sender, bitrate: RTCPREMB.bitrate(exponent: exponent, mantissa: mantissa),
                       ssrcs: (fci + 8)..<end))
        default:
            emit(.unknown(packetType: type, format: format))
        }
    }
}

// MARK: - byte access

/// The writer RTCP packets write themselves with: the core's bounds-checked `ByteWriter`.
/// Writers compute their size and check the buffer before they start; `write(into:at:)` then
/// checks that what was written stayed inside it.
public typealias RTCPWriter = ByteWriter<RTPError>

extension ByteWriter where Failure == RTPError {
    /// The common header of a packet of `bytes` bytes (a multiple of 4).
    mutating func header(count: Int, type: UInt8, bytes: Int) {
        u8(0x80 | UInt8(count & 0x1F))
        u8(type)
        u16(UInt16(bytes / 4 - 1))
    }
}

/// A packet that can write itself: the four operations of a wire type (size, write into a
/// caller's buffer, write to a new array, and — through `RTCPParser` — parse).
public protocol RTCPWritable {
    /// Bytes `write(into:)` will write (a multiple of 4).
    var size: Int { get }
    /// Checks what cannot be encoded (too many blocks, text too long) before anything is written.
    func validate() throws(RTPError)
    /// Writes at `offset`; only called after `validate()` and with room for `size` bytes.
    func unsafeWrite(_ writer: inout RTCPWriter)
}

extension RTCPWritable {
    /// Writes the packet at `offset` in `buffer`; returns the bytes written.
    @discardableResult
    public func write(into buffer: UnsafeMutableRawBufferPointer, at offset: Int = 0) throws(RTPError) -> Int {
        try validate()
        let n = size
        guard offset >= 0, buffer.count - offset >= n, buffer.baseAddress != nil else {
            throw .bufferTooSmall(needed: n, available: max(0, buffer.count - offset))
        }
        var w = RTCPWriter(buffer, at: offset)
        unsafeWrite(&w)
        _ = try w.finish()
        return n
    }

    /// The packet as a new array (tests and start-up; the hot path writes into its buffer).
    public func serialized() throws(RTPError) -> [UInt8] {
        try validate()
        var out = [UInt8](repeating: 0, count: size)
        let written = out.withUnsafeMutableBytes { raw in
            var w = RTCPWriter(raw)
            unsafeWrite(&w)
            return Result { () throws(RTPError) in try w.finish() }
        }
        _ = try written.get()
        return out
    }
}
