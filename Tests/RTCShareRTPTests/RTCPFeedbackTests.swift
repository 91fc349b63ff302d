import TestSupport
import Testing
@testable import RTCShareRTP

/// Feedback messages: byte tables, NACK lists ↔ FCI entries (across the sequence wrap), and
/// REMB's mantissa/exponent at its edges.
@Suite struct RTCPFeedbackTests {
    private func items(_ bytes: [UInt8]) throws(RTPError) -> [RTCPItem] { try RTCPParser.items(bytes) }

    @Test func genericNackByteTable() throws {
        let bytes: [UInt8] = [
            0x81, 0xCD, 0x00, 0x04,                     // FMT=1, PT=205 RTPFB, length 4 (20 bytes)
            0x00, 0x00, 0x00, 0x01,                     // sender SSRC
            0x00, 0x00, 0x00, 0x02,                     // media SSRC
            0x00, 0x64, 0x00, 0x05,                     // PID 100, BLP 0b101: 100, 101, 103
            0xFF, 0xFF, 0x80, 0x00,                     // PID 65535, BLP bit 15: 65535, 15 (wrapped)
        ]
        let entries = [RTCPNackEntry(pid: 100, blp: 5), RTCPNackEntry(pid: 65535, blp: 0x8000)]
        #expect(try items(bytes) == entries.map { .nack(sender: 1, media: 2, $0) })
        #expect(try RTCPGenericNack(sender: 1, media: 2, entries: entries).serialized() == bytes)
        #expect(entries[0].lostSequences == [100, 101, 103])
        #expect(entries[1].lostSequences == [65535, 15])
    }

    @Test func pliAndFirByteTables() throws {
        let pli: [UInt8] = [
            0x81, 0xCE, 0x00, 0x02,                     // FMT=1, PT=206 PSFB, length 2
            0x00, 0x00, 0x00, 0x01,                     // sender
            0x00, 0x00, 0x00, 0x02,                     // media
        ]
        #expect(try items(pli) == [.pictureLoss(sender: 1, media: 2)])
        #expect(try RTCPPictureLossIndication(sender: 1, media: 2).serialized() == pli)
        let fir: [UInt8] = [
            0x84, 0xCE, 0x00, 0x04,                     // FMT=4, PT=206, length 4
            0x00, 0x00, 0x00, 0x01,                     // sender
            0x00, 0x00, 0x00, 0x00,                     // media source (unused, 0)
            0x0A, 0x0B, 0x0C, 0x0D,                     // FCI: target SSRC
            0x07, 0x00, 0x00, 0x00,                     // seq nr 7, reserved
        ]
        let entry = RTCPFIREntry(ssrc: 0x0A0B_0C0D, sequenceNumber: 7)
        #expect(try items(fir) == [.fullIntraRequest(sender: 1, entry)])
        #expect(try RTCPFullIntraRequest(sender: 1, entries: [entry]).serialized() == fir)
    }

    @Test func rembByteTable() throws {
        let bytes: [UInt8] = [
            0x8F, 0xCE, 0x00, 0x05,                     // FMT=15, PT=206, length 5 (24 bytes)
            0x00, 0x00, 0x00, 0x01,                     // sender
            0x00, 0x00, 0x00, 0x00,                     // media (0)
            0x52, 0x45, 0x4D, 0x42,                     // "REMB"
            0x01,                                       // 1 SSRC
            0x0B, 0xD0, 0x90,                           // exp 2, mantissa 250000: 1 000 000 bit/s
            0x12, 0x34, 0x56, 0x78,                     // SSRC
        ]
        #expect(try items(bytes) == [.remb(sender: 1, bitrate: 1_000_000, ssrcs: 20..<24)])
        #expect(try RTCPREMB(sender: 1, bitrate: 1_000_000, ssrcs: [0x1234_5678]).serialized() == bytes)
        // Another application-layer feedback under FMT 15 is not REMB.
        var other = bytes
        other[12] = 0x58
        #expect(try items(other) == [.unknown(packetType: 206, format: 15)])
    }

    @Test func transportCCHeaderByteTable() throws {
        let bytes = RTCPTransportFeedbackTests.twoBitVector
        #expect(try items(bytes) == [.transportCC(RTCPTransportCCHeader(
            sender: 1, media: 2, baseSequence: 10, statusCount: 3, referenceTime: -2, feedbackCount: 5,
            packetInfo: 20..<28))])
    }

    @Test func lostSetsBecomeTheFewestEntries() {
        #expect(RTCPNackEntry.minimalEntries(lost: []) == [])
        #expect(RTCPNackEntry.minimalEntries(lost: [103, 100, 101, 101]) == [RTCPNackEntry(pid: 100, blp: 0b101)])
        #expect(RTCPNackEntry.minimalEntries(lost: Array(100...116)) == [RTCPNackEntry(pid: 100, blp: 0xFFFF)])
        #expect(RTCPNackEntry.minimalEntries(lost: Array(100...117))
                == [RTCPNackEntry(pid: 100, blp: 0xFFFF), RTCPNackEntry(pid: 117, blp: 0)])
        // Across the wrap: 65534, 65535, 0, 1 are one run; 20 is 22 after 65534, a new entry.
        #expect(RTCPNackEntry.minimalEntries(lost: [1, 20, 65535, 0, 65534])
                == [RTCPNackEntry(pid: 65534, blp: 0b111), RTCPNackEntry(pid: 20, blp: 0)])
    }

    @Test func entriesExpandBackToTheSameSetRandomly() {
        var rng = SeededRandom(seed: 5)
        for _ in 0..<2_000 {
            let base = UInt16.random(in: 0...UInt16.max, using: &rng)
            let lost = (0..<Int.random(in: 1...60, using: &rng)).map { _ in base &+ UInt16.random(in: 0...200, using: &rng) }
            let entries = RTCPNackEntry.minimalEntries(lost: lost)
            var back: [UInt16] = []
            for e in entries { e.forEachLost { back.append($0) } }
            #expect(Set(back) == Set(lost))
            #expect(back.count == Set(lost).count, "no number reported twice")
            // Greedy windows of 17: a lower bound on the count is the span / 17.
            #expect(entries.count <= Set(lost).count)
        }
    }

    @Test func minimalEntriesStopsAtTheOutputCapacity() {
        var lost: [UInt16] = [1, 40, 80, 120]
        var out = [RTCPNackEntry](repeating: RTCPNackEntry(pid: 0, blp: 0), count: 2)
        let n = lost.withUnsafeMutableBufferPointer { l in
            out.withUnsafeMutableBufferPointer { RTCPNackEntry.minimalEntries(lost: l, into: $0) }
        }
        #expect(n == 2 && out == [RTCPNackEntry(pid: 1, blp: 0), RTCPNackEntry(pid: 40, blp: 0)])
    }

    @Test func rembMantissaAndExponentEdges() {
        #expect(RTCPREMB.encode(bitrate: 0) == (0, 0))
        #expect(RTCPREMB.encode(bitrate: 262_143) == (0, 262_143))
        #expect(RTCPREMB.encode(bitrate: 262_144) == (1, 131_072))
        #expect(RTCPREMB.encode(bitrate: 262_145) == (1, 131_072), "rounded down, never up")
        #expect(RTCPREMB.encode(bitrate: UInt64.max) == (46, 262_143))
        #expect(RTCPREMB.bitrate(exponent: 46, mantissa: 262_143) == 262_143 << 46)
        #expect(RTCPREMB.bitrate(exponent: 47, mantissa: 262_143) == UInt64.max, "saturates")
        #expect(RTCPREMB.bitrate(exponent: 63, mantissa: 1) == 1 << 63)
        #expect(RTCPREMB.bitrate(exponent: 63, mantissa: 2) == UInt64.max)
        #expect(RTCPREMB.bitrate(exponent: 63, mantissa: 0) == 0)
        var rng = SeededRandom(seed: 9)
        for _ in 0..<10_000 {
            let x = rng.next() >> UInt64.random(in: 0...63, using: &rng)
            let (e, m) = RTCPREMB.encode(bitrate: x)
            let back = RTCPREMB.bitrate(exponent: e, mantissa: m)
            #expect(m <= RTCPREMB.maxMantissa && e < 64)
            #expect(back <= x && x - back < (UInt64(1) << UInt64(e)))
        }
    }

    @Test func writersRefuseEmptyOrOversizedLists() {
        #expect(throws: RTPError.self) { try RTCPGenericNack(sender: 1, media: 2, entries: []).serialized() }
        #expect(throws: RTPError.self) { try RTCPFullIntraRequest(sender: 1, entries: []).serialized() }
        #expect(throws: RTPError.self) { try RTCPREMB(sender: 1, bitrate: 1, ssrcs: Array(repeating: 1, count: 256)).serialized() }
    }
}
