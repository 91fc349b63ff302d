import TestSupport
import Testing
@testable import RTCShareRTP

/// Compound RTCP: byte tables annotated field by field, writer → parser round trips, and the
/// strict refusals (every length checked, version, padding).
@Suite struct RTCPPacketTests {
    private func items(_ bytes: [UInt8]) throws(RTPError) -> [RTCPItem] { try RTCPParser.items(bytes) }

    static let block = RTCPReportBlock(ssrc: 0xAABB_CCDD, fractionLost: 64, cumulativeLost: -2,
                                       extendedHighestSequence: 0x0001_0010, jitter: 32,
                                       lastSenderReport: 0x4D7A_8000, delaySinceLastSenderReport: 0x0001_8000)
    static let blockBytes: [UInt8] = [
        0xAA, 0xBB, 0xCC, 0xDD,                         // SSRC_1
        0x40,                                           // fraction lost 64/256
        0xFF, 0xFF, 0xFE,                               // cumulative lost -2 (signed 24-bit)
        0x00, 0x01, 0x00, 0x10,                         // extended highest seq: cycle 1, seq 16
        0x00, 0x00, 0x00, 0x20,                         // jitter 32
        0x4D, 0x7A, 0x80, 0x00,                         // LSR
        0x00, 0x01, 0x80, 0x00,                         // DLSR 1.5 s
    ]

    @Test func senderReportByteTable() throws {
        let bytes: [UInt8] = [
            0x81, 0xC8, 0x00, 0x0C,                     // V=2 P=0 RC=1, PT=200 SR, length 12 (52 bytes)
            0x11, 0x22, 0x33, 0x44,                     // SSRC of sender
            0xE9, 0x4D, 0x7A, 0x80,                     // NTP seconds
            0x80, 0x00, 0x00, 0x00,                     // NTP fraction .5
            0x00, 0x01, 0xE2, 0x40,                     // RTP timestamp 123456
            0x00, 0x00, 0x03, 0xE8,                     // packet count 1000
            0x00, 0x0F, 0x42, 0x40,                     // octet count 1000000
        ] + Self.blockBytes
        let info = RTCPSenderInfo(ssrc: 0x1122_3344, ntpTime: NTPTime(seconds: 0xE94D_7A80, fraction: 0x8000_0000),
                                  rtpTimestamp: 123_456, packetCount: 1000, octetCount: 1_000_000, reportCount: 1)
        #expect(try items(bytes) == [.senderReport(info), .reportBlock(reporter: 0x1122_3344, Self.block)])
        #expect(try RTCPSenderReport(info: info, reportBlocks: [Self.block]).serialized() == bytes)
    }

    @Test func receiverReportByteTable() throws {
        let bytes: [UInt8] = [
            0x81, 0xC9, 0x00, 0x07,                     // RC=1, PT=201 RR, length 7 (32 bytes)
            0x01, 0x02, 0x03, 0x04,                     // SSRC of reporter
        ] + Self.blockBytes
        #expect(try items(bytes) == [.receiverReport(ssrc: 0x0102_0304, reportCount: 1),
                                     .reportBlock(reporter: 0x0102_0304, Self.block)])
        #expect(try RTCPReceiverReport(ssrc: 0x0102_0304, reportBlocks: [Self.block]).serialized() == bytes)
    }

    @Test func cumulativeLossIsClampedToSigned24Bits() throws {
        var block = Self.block
        block.cumulativeLost = 10_000_000
        let bytes = try RTCPReceiverReport(ssrc: 1, reportBlocks: [block]).serialized()
        #expect(Array(bytes[13..<16]) == [0x7F, 0xFF, 0xFF])
        block.cumulativeLost = -10_000_000
        let negative = try RTCPReceiverReport(ssrc: 1, reportBlocks: [block]).serialized()
        #expect(Array(negative[13..<16]) == [0x80, 0x00, 0x00])
        guard case .reportBlock(_, let back) = try items(negative)[1] else { Issue.record("no block"); return }
        #expect(back.cumulativeLost == -(1 << 23))
    }

    @Test func sourceDescriptionByteTable() throws {
        let bytes: [UInt8] = [
            0x81, 0xCA, 0x00, 0x03,                     // SC=1, PT=202 SDES, length 3 (16 bytes)
            0x11, 0x22, 0x33, 0x44,                     // SSRC
            0x01, 0x03, 0x61, 0x62,                     // CNAME, length 3, "ab…
            0x63, 0x00, 0x00, 0x00,                     // …c", end marker, padding
        ]
        #expect(try items(bytes) == [.cname(ssrc: 0x1122_3344, text: 10..<13)])
        #expect(RTCPParser.bytes(10..<13, in: bytes) == Array("abc".utf8)[...])
        #expect(try RTCPSourceDescription(ssrc: 0x1122_3344, cname: "abc").serialized() == bytes)
        // "ab" + 2-byte item header fills a word exactly: the end marker needs a whole new word.
        #expect(try RTCPSourceDescription(ssrc: 1, cname: "ab").serialized().count == 16)
    }

    @Test func sourceDescriptionSkipsOtherItemsAndReadsSeveralChunks() throws {
        let bytes: [UInt8] = [
            0x82, 0xCA, 0x00, 0x06,                     // SC=2, length 6 (28 bytes)
            0x00, 0x00, 0x00, 0x01,                     // chunk 1: SSRC 1
            0x06, 0x02, 0x78, 0x79,                     // TOOL "xy" (skipped)
            0x01, 0x01, 0x7A, 0x00,                     // CNAME "z", end marker
            0x00, 0x00, 0x00, 0x02,                     // chunk 2: SSRC 2
            0x01, 0x01, 0x77, 0x00,                     // CNAME "w", end marker
            0x00, 0x00, 0x00, 0x00,                     // an empty item list would end here; padding word
        ]
        #expect(throws: RTPError.self) { try self.items(bytes) }  // a trailing word after the last chunk is refused
        var fixed = bytes
        fixed.removeLast(4)
        fixed[3] = 0x05
        #expect(try items(fixed) == [.cname(ssrc: 1, text: 14..<15), .cname(ssrc: 2, text: 22..<23)])
    }

    @Test func goodbyeByteTables() throws {
        let bare: [UInt8] = [
            0x81, 0xCB, 0x00, 0x01,                     // SC=1, PT=203 BYE, length 1
            0x11, 0x22, 0x33, 0x44,                     // SSRC
        ]
        #expect(try items(bare) == [.goodbye(ssrc: 0x1122_3344, reason: nil)])
        #expect(try RTCPGoodbye(ssrcs: [0x1122_3344]).serialized() == bare)
        let withReason: [UInt8] = [
            0x81, 0xCB, 0x00, 0x02,                     // SC=1, length 2
            0x11, 0x22, 0x33, 0x44,                     // SSRC
            0x02, 0x67, 0x6F, 0x00,                     // reason length 2 "go", padding
        ]
        #expect(try items(withReason) == [.goodbye(ssrc: 0x1122_3344, reason: 9..<11)])
        #expect(try RTCPGoodbye(ssrcs: [0x1122_3344], reason: "go").serialized() == withReason)
    }

    @Test func compoundBuilderWritesSenderReportCnameAndGoodbye() throws {
        let report = RTCPSenderReport(info: RTCPSenderInfo(ssrc: 9, ntpTime: NTPTime(unixMicroseconds: 1_700_000_000_000_000),
                                                           rtpTimestamp: 90_000, packetCount: 10, octetCount: 12_000))
        var buffer = [UInt8](repeating: 0xEE, count: 200)
        let n = try buffer.withUnsafeMutableBytes { raw in
            try RTCPCompoundBuilder.write(report, cname: "rtcshare@board", byeReason: .some("stopped"), into: raw)
        }
        #expect(n == RTCPCompoundBuilder.size(report, cname: "rtcshare@board", byeReason: .some("stopped")))
        let packet = Array(buffer[..<n])
        var info = report.info
        info.reportCount = 0
        let parsed = try items(packet)
        #expect(parsed.count == 3)
        #expect(parsed[0] == .senderReport(info))
        guard case .cname(9, let cname) = parsed[1], case .goodbye(9, let reason?) = parsed[2] else {
            Issue.record("got \(parsed)")
            return
        }
        #expect(String(decoding: RTCPParser.bytes(cname, in: packet), as: UTF8.self) == "rtcshare@board")
        #expect(String(decoding: RTCPParser.bytes(reason, in: packet), as: UTF8.self) == "stopped")

        var small = [UInt8](repeating: 0, count: n - 1)
        #expect(throws: RTPError.bufferTooSmall(needed: n, available: n - 1)) {
            try small.withUnsafeMutableBytes { raw in
                try RTCPCompoundBuilder.write(report, cname: "rtcshare@board", byeReason: .some("stopped"), into: raw)
            }
        }
    }

    @Test func paddingOnTheLastPacketIsRemoved() throws {
        let bytes: [UInt8] = [
            0x80, 0xC9, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, // RR from 7, no blocks
            0xA0, 0xCB, 0x00, 0x02,                         // P=1, SC=0 BYE, length 2
            0x00, 0x00, 0x00, 0x00,                         // padding…
            0x00, 0x00, 0x00, 0x08,                         // …8 bytes, count in the last octet
        ]
        let summary = try RTCPParser.parse(bytes) { _ in }
        #expect(summary == { var s = RTCPParseSummary(); s.packets = 2; s.items = 1; return s }())
    }

    @Test func unknownTypesAreCountedNotRefused() throws {
        let bytes: [UInt8] = [
            0x80, 0xC9, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, // RR
            0x81, 0xCC, 0x00, 0x02, 0x00, 0x00, 0x00, 0x07, // APP subtype 1 …
            0x6E, 0x61, 0x6D, 0x65,                         // … name "name"
            0x83, 0xCD, 0x00, 0x02, 0x00, 0x00, 0x00, 0x07, // RTPFB FMT 3 (TMMBR)
            0x00, 0x00, 0x00, 0x08,
        ]
        var seen: [RTCPItem] = []
        let summary = try RTCPParser.parse(bytes) { seen.append($0) }
        #expect(seen == [.receiverReport(ssrc: 7, reportCount: 0), .unknown(packetType: 204, format: 1),
                         .unknown(packetType: 205, format: 3)])
        #expect(summary.unknown == 2 && summary.packets == 3)
    }

    @Test func malformedCompoundsAreRefusedWithNothingDelivered() {
        let rr: [UInt8] = [0x80, 0xC9, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07]
        let cases: [(String, [UInt8])] = [
            ("empty", []),
            ("short header", [0x80, 0xC9, 0x00]),
            ("version 1", [0x40, 0xC9, 0x00, 0x01, 0, 0, 0, 7]),
            ("length past the end", [0x80, 0xC9, 0x00, 0x02, 0, 0, 0, 7]),
            ("stray bytes after a packet", rr + [0x80, 0xC9]),
            ("padding on a packet that is not last", [0xA0, 0xC9, 0x00, 0x01, 0, 0, 0, 4] + rr),
            ("pad count 0", [0xA0, 0xC9, 0x00, 0x01, 0, 0, 0, 0]),
            ("pad count beyond the body", [0xA0, 0xC9, 0x00, 0x01, 0, 0, 0, 9]),
            ("RC=2 with one block", [0x82, 0xC9, 0x00, 0x07, 0, 0, 0, 1] + Self.blockBytes),
            ("SR without sender info", [0x80, 0xC8, 0x00, 0x01, 0, 0, 0, 1]),
            ("SDES without end marker", [0x81, 0xCA, 0x00, 0x02, 0, 0, 0, 1, 0x01, 0x02, 0x61, 0x62]),
            ("SDES item past the end", [0x81, 0xCA, 0x00, 0x02, 0, 0, 0, 1, 0x01, 0x09, 0x61, 0x62]),
            ("SDES padding not zero", [0x81, 0xCA, 0x00, 0x02, 0, 0, 0, 1, 0x01, 0x00, 0x00, 0x01]),
            ("BYE reason past the end", [0x81, 0xCB, 0x00, 0x02, 0, 0, 0, 1, 0x09, 0x61, 0x62, 0x63]),
            ("BYE sources past the end", [0x82, 0xCB, 0x00, 0x01, 0, 0, 0, 1]),
            ("NACK without FCI", [0x81, 0xCD, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 2]),
            ("PLI with FCI", [0x81, 0xCE, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0]),
            ("FIR FCI not whole entries", [0x84, 0xCE, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5]),
            ("feedback without media SSRC", [0x81, 0xCE, 0x00, 0x01, 0, 0, 0, 1]),
            ("REMB SSRC count disagrees", [0x8F, 0xCE, 0x00, 0x04, 0, 0, 0, 1, 0, 0, 0, 0, 0x52, 0x45, 0x4D, 0x42, 0x02, 0x0B, 0xD0, 0x90]),
            ("transport-cc too short", [0x8F, 0xCD, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 0, 1]),
        ]
        for (name, bytes) in cases {
            var delivered = 0
            #expect(throws: RTPError.self, "\(name)") { try RTCPParser.parse(bytes) { _ in delivered += 1 } }
            #expect(delivered == 0, "\(name): items delivered before the error")
        }
        // A valid RR followed by a broken packet: the RR is not delivered either.
        var delivered = 0
        _ = try? RTCPParser.parse(rr + [0x40, 0xC9, 0x00, 0x01, 0, 0, 0, 7]) { _ in delivered += 1 }
        #expect(delivered == 0)
    }

    @Test func writersRefuseWhatTheWireCannotHold() {
        let blocks = [RTCPReportBlock](repeating: Self.block, count: 32)
        #expect(throws: RTPError.self) { try RTCPReceiverReport(ssrc: 1, reportBlocks: blocks).serialized() }
        #expect(throws: RTPError.self) { try RTCPSourceDescription(ssrc: 1, cname: String(repeating: "x", count: 256)).serialized() }
        #expect(throws: RTPError.self) { try RTCPGoodbye(ssrcs: [1], reason: String(repeating: "x", count: 256)).serialized() }
        var buffer = [UInt8](repeating: 0, count: 10)
        #expect(throws: RTPError.bufferTooSmall(needed: 12, available: 10)) {
            try buffer.withUnsafeMutableBytes { raw in try RTCPPictureLossIndication(sender: 1, media: 2).write(into: raw) }
        }
    }

    @Test func randomReportsRoundTrip() throws {
        var rng = SeededRandom(seed: 11)
        for _ in 0..<500 {
            let blocks = (0..<Int.random(in: 0...31, using: &rng)).map { _ in
                RTCPReportBlock(ssrc: rng.next32(), fractionLost: UInt8.random(in: 0...255, using: &rng),
                                cumulativeLost: Int32.random(in: RTCPReportBlock.cumulativeLostRange, using: &rng),
                                extendedHighestSequence: rng.next32(), jitter: rng.next32(),
                                lastSenderReport: rng.next32(), delaySinceLastSenderReport: rng.next32())
            }
            let info = RTCPSenderInfo(ssrc: rng.next32(), ntpTime: NTPTime(rawValue: rng.next()), rtpTimestamp: rng.next32(),
                                      packetCount: rng.next32(), octetCount: rng.next32(), reportCount: blocks.count)
            let bytes = try RTCPSenderReport(info: info, reportBlocks: blocks).serialized()
                + RTCPSourceDescription(ssrc: info.ssrc, cname: String(repeating: "c", count: Int.random(in: 0...255, using: &rng))).serialized()
            let parsed = try items(bytes)
            #expect(parsed.count == 2 + blocks.count)
            #expect(parsed[0] == .senderReport(info))
            #expect(Array(parsed[1..<(1 + blocks.count)]) == blocks.map { .reportBlock(reporter: info.ssrc, $0) })
        }
    }
}

extension SeededRandom {
    mutating func next32() -> UInt32 { UInt32(truncatingIfNeeded: next()) }
}
