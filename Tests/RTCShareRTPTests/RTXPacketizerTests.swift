import RTCShareCore
import Testing
@testable import RTCShareRTP

/// RFC 4588 RTX: from the history to an RTX packet and back.
@Suite struct RTXPacketizerTests {
    private let map = try! RTPExtensionMap(absSendTime: 2, transportSequenceNumber: 3)

    private func original(seq: UInt16, padding: Int = 0) throws -> [UInt8] {
        var s = RTPStream(ssrc: 0xAAAA_AAAA, payloadType: 96, clockRate: 90_000, initialSequenceNumber: seq,
                          timestampOffset: 0x1000)
        var bytes = try written { buf throws in
            try ([0x90, 0x80, 0x80, 0x05, 0x9D, 0x01, 0x2A] as [UInt8]).withUnsafeBytes { p throws in
                try s.writePacket(into: buf, timestamp: 0x1234_5678, marker: true,
                                  extensions: RTPExtensionValues(absSendTime: 7, transportSequenceNumber: 9),
                                  map: map, payload: p)
            }
        }
        if padding > 0 {
            bytes[0] |= 0x20
            bytes += [UInt8](repeating: 0, count: padding - 1) + [UInt8(padding)]
        }
        return bytes
    }

    @Test func rtxByteTable() throws {
        var rtx = RTXPacketizer(ssrc: 0xBBBB_BBBB, payloadType: 97, initialSequenceNumber: 500)
        let orig = try original(seq: 0x0102)
        let bytes = try written { buf throws in
            try orig.withUnsafeBytes { o throws in try rtx.write(original: o, into: buf) }
        }
        #expect(bytes == [
            0x90, 0xE1,             // V=2, X=1; M=1 (kept), PT=97 (RTX)
            0x01, 0xF4,             // RTX sequence number 500
            0x12, 0x34, 0x56, 0x78, // timestamp kept
            0xBB, 0xBB, 0xBB, 0xBB, // RTX SSRC
            0xBE, 0xDE, 0x00, 0x02, // extension block kept byte for byte
            0x22, 0x00, 0x00, 0x07,
            0x31, 0x00, 0x09, 0x00,
            0x01, 0x02,             // OSN: the original sequence number
            0x90, 0x80, 0x80, 0x05, 0x9D, 0x01, 0x2A, // original payload
        ])
        #expect(rtx.nextSequenceNumber == 501 && rtx.packetCount == 1 && rtx.octetCount == 9)
    }

    @Test func historyToRTXAndBackGivesTheOriginal() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20, prefault: false)
        var history = try PacketHistory(budget: budget, capacityBytes: 16 * 1024)
        var rtx = RTXPacketizer(ssrc: 0xBBBB_BBBB, payloadType: 97, initialSequenceNumber: 65_535)
        for seq: UInt16 in [65_534, 65_535, 0] {
            try original(seq: seq).withUnsafeBytes { raw throws in try history.store(raw) }
        }
        for (i, seq) in [UInt16(0), 65_534].enumerated() {
            let packet = try #require(try history.withPacket(seq) { o throws in
                try written { buf throws in try rtx.write(original: o, into: buf) }
            })
            let parsed = try parseRTP(packet)
            #expect(parsed.header.sequenceNumber == 65_535 &+ UInt16(i))
            #expect(parsed.header.ssrc == 0xBBBB_BBBB && parsed.header.payloadType == 97)
            let back = try written { buf throws in
                try packet.withUnsafeBytes { r throws in
                    try RTXPacketizer.unwrap(rtx: r, originalSSRC: 0xAAAA_AAAA, originalPayloadType: 96, into: buf)
                }
            }
            let sent = try original(seq: seq)  // Swift 6.0: no `try` inside #expect
            #expect(back == sent)
        }
    }

    @Test func paddingIsNotCarried() throws {
        var rtx = RTXPacketizer(ssrc: 1, payloadType: 97, initialSequenceNumber: 0)
        let padded = try original(seq: 7, padding: 4)
        let packet = try written { buf throws in
            try padded.withUnsafeBytes { o throws in try rtx.write(original: o, into: buf) }
        }
        #expect(try parseRTP(packet).paddingLength == 0)
        let back = try written { buf throws in
            try packet.withUnsafeBytes { r throws in
                try RTXPacketizer.unwrap(rtx: r, originalSSRC: 0xAAAA_AAAA, originalPayloadType: 96, into: buf)
            }
        }
        let sent = try original(seq: 7)  // Swift 6.0: no `try` inside #expect
        #expect(back == sent)
    }

    @Test func unwrapRefusesAPayloadWithoutOSN() {
        let probe: [UInt8] = [0xA0, 97, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 3]  // padding only
        #expect(throws: RTPError.truncated("RTX payload of 0 bytes has no OSN")) {
            _ = try written { buf throws in
                try probe.withUnsafeBytes { r throws in
                    try RTXPacketizer.unwrap(rtx: r, originalSSRC: 1, originalPayloadType: 96, into: buf)
                }
            }
        }
    }
}
