import RTCShareCore
import TestSupport
import Testing
@testable import RTCShareRTP

/// The MID header extension (RFC 8843 §15.1 / RFC 9143): its bytes, its limits, and the send
/// core writing each m-line's mid into every packet it sends — video, RTX and audio — only
/// when it was negotiated.
@Suite struct RTPMidTests {
    @Test func blockByteTableWithTheMidBesideTheOtherElements() throws {
        let map = try RTPExtensionMap(absSendTime: 2, transportSequenceNumber: 3, mid: 1)
        let values = RTPExtensionValues(absSendTime: 0x12_3456, transportSequenceNumber: 0xABCD, mid: RTPMid("0"))
        let bytes = try written { buf throws in try values.write(into: buf, map: map) }
        #expect(bytes == [
            0xBE, 0xDE, 0x00, 0x03, // profile 0xBEDE, 3 words
            0x22, 0x12, 0x34, 0x56, // id 2, L=2 (3 bytes): abs-send-time
            0x31, 0xAB, 0xCD,       // id 3, L=1 (2 bytes): transport-wide seq
            0x10, 0x30,             // id 1, L=0 (1 byte): mid "0"
            0x00, 0x00, 0x00,       // padding to 12 bytes
        ])
        let back = try bytes.withUnsafeBytes { raw throws in
            try RTPExtensionValues.parse(data: UnsafeRawBufferPointer(rebasing: raw[4...]), profile: 0xBEDE, map: map)
        }
        #expect(back == values)
    }

    @Test func aSixteenByteMidFillsTheLargestElement() throws {
        let mid = try #require(RTPMid("abcdefghijklmnop"))
        let map = try RTPExtensionMap(mid: 14)
        let bytes = try written { buf throws in try RTPExtensionValues(mid: mid).write(into: buf, map: map) }
        let expected: [UInt8] = [0xBE, 0xDE, 0x00, 0x05, 0xEF] + Array("abcdefghijklmnop".utf8) + [0, 0, 0]  // outside #expect: Swift 6.0
        #expect(bytes == expected)
        #expect(mid.description == "abcdefghijklmnop" && mid.count == 16)
    }

    @Test func midsThatDoNotFitOrAreNotTokensAreRefused() {
        #expect(RTPMid("") == nil)
        #expect(RTPMid("abcdefghijklmnopq") == nil)  // 17 bytes: needs the two-byte form
        #expect(RTPMid("a b") == nil)
        #expect(RTPMid("é") == nil)
        #expect(RTPMid("audio")?.description == "audio")
        #expect([UInt8]().withUnsafeBytes { RTPMid(bytes: $0) } == nil)
        #expect([UInt8](repeating: 0x41, count: 17).withUnsafeBytes { RTPMid(bytes: $0) } == nil)
    }

    @Test func anUnmappedMidIsNeitherWrittenNorRead() throws {
        let values = RTPExtensionValues(transportSequenceNumber: 7, mid: RTPMid("0"))
        let map = try RTPExtensionMap(transportSequenceNumber: 3)
        let bytes = try written { buf throws in try values.write(into: buf, map: map) }
        #expect(bytes == [0xBE, 0xDE, 0x00, 0x01, 0x31, 0x00, 0x07, 0x00])
        #expect(RTPExtensionValues(mid: RTPMid("0")).size(map: map) == 0)
        // The mid element of a packet read with a map that has no mid ID is skipped.
        let other = try RTPExtensionMap(transportSequenceNumber: 3, mid: 1)
        let withMid = try written { buf throws in try values.write(into: buf, map: other) }
        let back = try withMid.withUnsafeBytes { raw throws in
            try RTPExtensionValues.parse(data: UnsafeRawBufferPointer(rebasing: raw[4...]), profile: 0xBEDE, map: map)
        }
        #expect(back == RTPExtensionValues(transportSequenceNumber: 7))
    }

    /// Every packet the sender puts on the wire, parsed: (payload type, mid read with `map`).
    private func sentPackets(midID: UInt8?, videoMID: String?, audioMID: String?) throws -> [(UInt8, RTPMid?)] {
        var c = RTPSenderConfiguration()
        c.protection = .insecure
        c.rtxPayloadType = 97
        c.audioPayloadType = 111
        c.midID = midID
        c.videoMID = videoMID.flatMap { RTPMid($0) }
        c.audioMID = audioMID.flatMap { RTPMid($0) }
        let budget = try MemoryBudget(capBytes: RTPSender.budgetBytes(historyBytes: c.historyBytes) + (64 << 10))
        let sender = try RTPSender(configuration: c, budget: budget, random: SeededRandom(seed: 31))
        let readMap = try RTPExtensionMap(absSendTime: 2, transportSequenceNumber: 3, mid: 1)
        var packets: [(UInt8, RTPMid?)] = []
        var firstVideoSequence: UInt16?
        let collect = { (bytes: UnsafeRawBufferPointer, _: RTPRoute) in
            guard let parsed = try? RTPHeader.parse(bytes),
                  let values = try? RTPExtensionValues.parse(packet: bytes, parsed, map: readMap) else {
                Issue.record("the sender wrote a packet that does not parse")
                return
            }
            if parsed.header.payloadType == 96, firstVideoSequence == nil { firstVideoSequence = parsed.header.sequenceNumber }
            packets.append((parsed.header.payloadType, values.mid))
        }
        let frame = [UInt8](repeating: 7, count: 3000)  // three packets at the default MTU
        let now = MediaTime(microseconds: 1_000_000)
        try frame.withUnsafeBytes { try sender.sendVideo($0, mediaTimestamp: 0, orientation: .up, at: now, transmit: collect) }
        let opus = [UInt8](repeating: 0xF8, count: 60)
        try opus.withUnsafeBytes { try sender.sendAudio($0, mediaTimestamp: 0, samples: 960, at: now, transmit: collect) }
        // A NACK for the first video packet: it comes back on the RTX stream (payload type 97).
        let nack = RTCPGenericNack(sender: 1, media: sender.video.ssrc,
                                   entries: RTCPNackEntry.minimalEntries(lost: [try #require(firstVideoSequence)]))
        var datagram = try nack.serialized() + [UInt8](repeating: 0, count: 64)
        let count = datagram.count - 64
        datagram.withUnsafeMutableBytes { sender.handle(datagram: $0, count: count, at: now + .milliseconds(40), transmit: collect) }
        return packets
    }

    @Test func everyVideoRTXAndAudioPacketCarriesItsSectionsMid() throws {
        let packets = try sentPackets(midID: 1, videoMID: "0", audioMID: "1")
        #expect(packets.map(\.0) == [96, 96, 96, 111, 97])
        for (pt, mid) in packets {
            #expect(mid == RTPMid(pt == 111 ? "1" : "0"), "payload type \(pt) carried \(mid.map { "\($0)" } ?? "no mid")")
        }
    }

    @Test func withoutANegotiatedIDNoPacketCarriesAMid() throws {
        let packets = try sentPackets(midID: nil, videoMID: "0", audioMID: "1")
        #expect(packets.count == 5)
        #expect(packets.allSatisfy { $0.1 == nil })
        // The audio section did not keep it: its packets carry none, the video's do.
        let videoOnly = try sentPackets(midID: 1, videoMID: "0", audioMID: nil)
        #expect(videoOnly.map { $0.1?.description } == ["0", "0", "0", nil, "0"])
    }
}
