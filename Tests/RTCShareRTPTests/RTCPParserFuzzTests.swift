import TestSupport
import Testing
@testable import RTCShareRTP

/// Random and mutated compound packets into the RTCP parser: it must never trap; what it
/// accepts must be structurally sound (every item's byte range inside the packet), and an
/// unmutated packet from the writers must parse to what was written.
@Suite struct RTCPParserFuzzTests {
    /// A valid compound from the writers, varied by `rng`.
    static func validCompound(_ rng: inout SeededRandom) -> [UInt8] {
        var out: [UInt8] = []
        let ssrc = rng.next32()
        let blocks = (0..<Int.random(in: 0...3, using: &rng)).map { _ in
            RTCPReportBlock(ssrc: rng.next32(), fractionLost: 1, cumulativeLost: -5, extendedHighestSequence: 9,
                            jitter: 3, lastSenderReport: 4, delaySinceLastSenderReport: 5)
        }
        out += try! RTCPSenderReport(info: RTCPSenderInfo(ssrc: ssrc, ntpTime: NTPTime(rawValue: rng.next()), rtpTimestamp: 1,
                                                          packetCount: 2, octetCount: 3), reportBlocks: blocks).serialized()
        out += try! RTCPSourceDescription(ssrc: ssrc, cname: String(repeating: "n", count: Int.random(in: 0...20, using: &rng))).serialized()
        switch Int.random(in: 0...5, using: &rng) {
        case 0: out += try! RTCPGenericNack(sender: ssrc, media: 1, entries: [RTCPNackEntry(pid: 3, blp: 7)]).serialized()
        case 1: out += try! RTCPPictureLossIndication(sender: ssrc, media: 1).serialized()
        case 2: out += try! RTCPFullIntraRequest(sender: ssrc, entries: [RTCPFIREntry(ssrc: 1, sequenceNumber: 2)]).serialized()
        case 3: out += try! RTCPREMB(sender: ssrc, bitrate: rng.next() >> 20, ssrcs: [1, 2]).serialized()
        case 4: out += try! RTCPGoodbye(ssrcs: [ssrc], reason: "bye").serialized()
        default: out += try! RTCPReceiverReport(ssrc: ssrc, reportBlocks: blocks).serialized()
        }
        return out
    }

    /// Items' ranges lie inside the packet; counts add up.
    private func check(_ bytes: [UInt8]) -> Bool {
        var ok = true
        var count = 0
        let summary = try? RTCPParser.parse(bytes) { item in
            count += 1
            switch item {
            case .cname(_, let r), .remb(_, _, let r): ok = ok && r.lowerBound >= 0 && r.upperBound <= bytes.count
            case .goodbye(_, let r?): ok = ok && r.lowerBound >= 0 && r.upperBound <= bytes.count
            default: break
            }
        }
        if let summary { ok = ok && summary.items == count && summary.packets * 4 <= bytes.count }
        return ok
    }

    @Test func randomBytesNeverTrap() {
        var rng = SeededRandom(seed: 0xC0FFEE)
        var parsed = 0
        for _ in 0..<20_000 {
            var bytes = (0..<Int.random(in: 0..<120, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if bytes.count >= 4, Bool.random(using: &rng) {
                // A plausible first header, so the per-type readers get exercised.
                bytes[0] = 0x80 | (bytes[0] & 0x3F)
                bytes[1] = UInt8.random(in: 200...206, using: &rng)
                let words = (bytes.count / 4) - 1
                bytes[2] = UInt8(words >> 8)
                bytes[3] = UInt8(words & 0xFF)
            }
            #expect(check(bytes))
            if (try? RTCPParser.parse(bytes) { _ in }) != nil { parsed += 1 }
        }
        #expect(parsed > 100, "the generator should produce some valid packets (\(parsed))")
    }

    @Test func mutatedValidCompoundsNeverTrap() throws {
        var rng = SeededRandom(seed: 0xBADC0DE)
        for _ in 0..<10_000 {
            var bytes = Self.validCompound(&rng)
            #expect(try RTCPParser.parse(bytes) { _ in }.packets == 3)
            switch Int.random(in: 0...3, using: &rng) {
            case 0:
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
            case 1: bytes.removeLast(Int.random(in: 1...bytes.count, using: &rng))
            case 2:
                // Bend a length field.
                let at = Int.random(in: 0..<(bytes.count / 4), using: &rng) * 4 + 3
                bytes[at] = bytes[at] &+ UInt8.random(in: 1...3, using: &rng)
            default: bytes += (0..<Int.random(in: 1...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            }
            #expect(check(bytes))
        }
    }
}
