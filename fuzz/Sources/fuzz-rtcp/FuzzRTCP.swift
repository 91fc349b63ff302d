// RTCPParser.parse: one compound RTCP datagram from the peer (after SRTCP unprotect) — SR, RR,
// SDES, BYE, generic NACK, PLI, FIR, REMB, transport-cc, anything else as `.unknown`.
//
// Oracles: every byte range an item hands out (CNAME text, BYE reason, REMB SSRC list) lies
// inside the datagram and is read in full; the summary counts exactly the items delivered;
// nothing is delivered unless the whole compound parses (the parser validates first). A
// transport-cc feedback's packet info lies inside the datagram and reads without error, one
// report per status counted, in sequence order; the statuses write back (`RTCPTransportFeedback`)
// to a packet that parses to the same sequence numbers and arrival times.

import FuzzSupport
import RTCShareRTP

@main
enum FuzzRTCP {
    static func main() { runLibFuzzer(fuzzRTCP) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTCP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    var items = 0
    var unknown = 0
    // A wall clock for the RTT arithmetic on report blocks (any value; fixed for reproducibility).
    let now = NTPTime(unixMicroseconds: 1_700_000_000_000_000)
    do {
        let summary = try RTCPParser.parse(bytes) { item in
            items += 1
            visit(item, bytes: bytes, now: now, unknown: &unknown)
        }
        fuzzCheck(summary.items == items, "summary says \(summary.items) items, \(items) delivered")
        fuzzCheck(summary.unknown == unknown, "summary says \(summary.unknown) unknown, \(unknown) delivered")
        fuzzCheck(summary.packets >= 1 && summary.packets * RTCPParser.headerBytes <= bytes.count,
                  "\(summary.packets) packets in \(bytes.count) bytes")
    } catch {
        fuzzCheck(items == 0, "\(items) items delivered before the compound failed: \(error)")
        consumeDescription(error)
    }
    return 0
}

private func range(_ r: Range<Int>, in bytes: UnsafeRawBufferPointer, _ what: String) {
    fuzzCheck(r.lowerBound >= 0 && r.upperBound <= bytes.count, "\(what) range \(r) outside \(bytes.count) bytes")
    consume(UnsafeRawBufferPointer(rebasing: bytes[r]))
}

private func visit(_ item: RTCPItem, bytes: UnsafeRawBufferPointer, now: NTPTime, unknown: inout Int) {
    switch item {
    case .senderReport(let info):
        consume(info.ssrc)
        consume(info.ntpTime.unixMicroseconds)
        consume(info.ntpTime.middle32)
        consume(info.rtpTimestamp &+ info.packetCount &+ info.octetCount)
        fuzzCheck((0...rtcpMaxCount).contains(info.reportCount), "SR report count \(info.reportCount)")
    case .receiverReport(let ssrc, let count):
        consume(ssrc)
        fuzzCheck((0...rtcpMaxCount).contains(count), "RR report count \(count)")
    case .reportBlock(let reporter, let block):
        consume(reporter)
        fuzzCheck(RTCPReportBlock.cumulativeLostRange.contains(block.cumulativeLost),
                  "cumulative lost \(block.cumulativeLost) outside 24 bits")
        consume(block.roundTripMicroseconds(now: now) ?? -1)
        consume(block.fractionLost)
        consume(block.extendedHighestSequence &+ block.jitter)
    case .cname(let ssrc, let text):
        consume(ssrc)
        range(text, in: bytes, "CNAME")
        consume(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[text]), as: UTF8.self))
    case .goodbye(let ssrc, let reason):
        consume(ssrc)
        if let reason { range(reason, in: bytes, "BYE reason") }
    case .nack(let sender, let media, let entry):
        consume(sender ^ media)
        var lost = 0
        entry.forEachLost { seq in
            consume(seq)
            lost += 1
        }
        fuzzCheck(lost == entry.lostCount && (1...17).contains(lost), "NACK \(entry) lists \(lost), lostCount \(entry.lostCount)")
        consumeDescription(entry)
    case .pictureLoss(let sender, let media):
        consume(sender ^ media)
    case .fullIntraRequest(let sender, let entry):
        consume(sender ^ entry.ssrc)
        consume(entry.sequenceNumber)
    case .remb(let sender, let bitrate, let ssrcs):
        consume(sender)
        consume(bitrate)
        fuzzCheck(ssrcs.count % 4 == 0, "REMB SSRC list of \(ssrcs.count) bytes")
        range(ssrcs, in: bytes, "REMB SSRCs")
        // What the sender does with a REMB: re-encode the bitrate (never more than announced).
        let (e, m) = RTCPREMB.encode(bitrate: bitrate)
        fuzzCheck(RTCPREMB.bitrate(exponent: e, mantissa: m) <= bitrate, "REMB re-encoding of \(bitrate) grew")
    case .transportCC(let header):
        consume(header.sender ^ header.media)
        consume(header.feedbackCount)
        range(header.packetInfo, in: bytes, "transport-cc packet info")
        checkTransportFeedback(header, bytes: bytes)
    case .unknown(let type, let format):
        unknown += 1
        consume(type)
        consume(format)
    }
}

/// The oracle of a parsed transport-cc: its reports read again without error, one per status,
/// in sequence order; written back from them, the packet parses to the same reports.
private func checkTransportFeedback(_ header: RTCPTransportCCHeader, bytes: UnsafeRawBufferPointer) {
    var reports: [(UInt16, Int64?)] = []
    do {
        try RTCPTransportFeedback.forEachPacket(of: header, in: bytes) { reports.append(($0, $1)) }
    } catch {
        fuzzCheck(false, "transport-cc delivered but its packets do not read: \(error)")
        return
    }
    fuzzCheck(reports.count == Int(header.statusCount), "\(reports.count) reports for \(header.statusCount) statuses")
    for (i, r) in reports.enumerated() {
        fuzzCheck(r.0 == header.baseSequence &+ UInt16(truncatingIfNeeded: i), "report \(i) is for \(r.0)")
    }
    // The statuses as deltas again, and the packet they write.
    var statuses: [TransportPacketStatus] = []
    var time = Int64(header.referenceTime) * RTCPTransportFeedback.referenceMicroseconds
    for (_, arrival) in reports {
        guard let arrival else { statuses.append(.notReceived); continue }
        statuses.append(.received(deltaTicks: Int32((arrival - time) / RTCPTransportFeedback.tickMicroseconds)))
        time = arrival
    }
    let again = RTCPTransportFeedback(sender: header.sender, media: header.media, baseSequence: header.baseSequence,
                                      referenceTime: header.referenceTime, feedbackCount: header.feedbackCount,
                                      statuses: statuses)
    do {
        let written = try again.serialized()
        var reread: [(UInt16, Int64?)] = []
        try RTCPParser.parse(written) { item in
            guard case .transportCC(let h) = item else { return }
            written.withUnsafeBytes { raw in
                try? RTCPTransportFeedback.forEachPacket(of: h, in: raw) { reread.append(($0, $1)) }
            }
        }
        fuzzCheck(reread.map(\.0) == reports.map(\.0) && reread.map(\.1) == reports.map(\.1),
                  "transport-cc written back reads differently")
    } catch {
        fuzzCheck(false, "transport-cc statuses do not write back: \(error)")
    }
}
