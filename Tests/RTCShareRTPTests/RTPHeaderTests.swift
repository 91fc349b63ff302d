import TestSupport
import Testing
@testable import RTCShareRTP

/// RFC 3550 fixed header: byte tables annotated field by field, round trips and refusals.
@Suite struct RTPHeaderTests {
    @Test func headerWithOneByteExtensionsByteTable() throws {
        let bytes: [UInt8] = [
            0x90,                   // V=2, P=0, X=1, CC=0
            0xE0,                   // M=1, PT=96
            0x12, 0x34,             // sequence number 0x1234
            0x00, 0x00, 0x03, 0xE8, // timestamp 1000
            0xDE, 0xAD, 0xBE, 0xEF, // SSRC
            0xBE, 0xDE, 0x00, 0x02, // one-byte extensions, 2 words
            0x22, 0x04, 0x00, 0x00, //   id 2, L=2: abs-send-time 0x040000 (1 s)
            0x31, 0x00, 0x07,       //   id 3, L=1: transport-wide seq 7
            0x00,                   //   padding
            0x9D, 0x01, 0x2A,       // payload
        ]
        let p = try parseRTP(bytes)
        #expect(p.header == RTPHeader(marker: true, payloadType: 96, sequenceNumber: 0x1234, timestamp: 1000,
                                      ssrc: 0xDEAD_BEEF, hasExtension: true))
        #expect(p.extensionProfile == 0xBEDE)
        #expect(p.extensionRange == 16..<24)
        #expect(p.payloadRange == 24..<27)
        #expect(p.paddingLength == 0)
        #expect(p.headerLength == 24)
        let map = try RTPExtensionMap(absSendTime: 2, transportSequenceNumber: 3)
        let values = try bytes.withUnsafeBytes { raw in try RTPExtensionValues.parse(packet: raw, p, map: map) }
        #expect(values == RTPExtensionValues(absSendTime: 0x04_0000, transportSequenceNumber: 7))
        // The same bytes written by header + extension writers.
        let rebuilt = try written { buf throws in
            let h = try p.header.write(into: buf)
            let e = try values.write(into: UnsafeMutableRawBufferPointer(rebasing: buf[h...]), map: map)
            buf[h + e] = 0x9D; buf[h + e + 1] = 0x01; buf[h + e + 2] = 0x2A
            return h + e + 3
        }
        #expect(rebuilt == bytes)
    }

    @Test func csrcsAndPaddingByteTable() throws {
        let bytes: [UInt8] = [
            0xA2,                   // V=2, P=1, X=0, CC=2
            0x08,                   // M=0, PT=8
            0x00, 0x01,             // sequence number 1
            0xFF, 0xFF, 0xFF, 0xFF, // timestamp 2^32-1
            0x00, 0x00, 0x00, 0x01, // SSRC 1
            0x00, 0x00, 0x00, 0x02, // CSRC 2
            0x00, 0x00, 0x00, 0x03, // CSRC 3
            0xAA, 0xBB,             // payload
            0x00, 0x00, 0x03,       // padding: 3 octets, count last
        ]
        let p = try parseRTP(bytes)
        #expect(p.header == RTPHeader(payloadType: 8, sequenceNumber: 1, timestamp: .max, ssrc: 1,
                                      csrcs: RTPCSRCList([2, 3]), hasPadding: true))
        #expect(p.extensionProfile == nil)
        #expect(p.payloadRange == 20..<22)
        #expect(p.paddingLength == 3)
        let header = try written { buf throws in try p.header.write(into: buf) }
        #expect(header == Array(bytes[..<20]))
    }

    @Test func roundTripsEveryField() throws {
        var rng = SeededRandom(seed: 3)
        for _ in 0..<200 {
            let cc = Int.random(in: 0...15, using: &rng)
            let h = RTPHeader(marker: Bool.random(using: &rng), payloadType: UInt8.random(in: 0...127, using: &rng),
                              sequenceNumber: .random(in: 0...UInt16.max, using: &rng),
                              timestamp: .random(in: 0...UInt32.max, using: &rng),
                              ssrc: .random(in: 0...UInt32.max, using: &rng),
                              csrcs: RTPCSRCList((0..<cc).map { _ in UInt32.random(in: 0...UInt32.max, using: &rng) }))
            let bytes = try written { buf throws in try h.write(into: buf) } + [1, 2, 3]
            #expect(bytes.count == h.size + 3)
            let p = try parseRTP(bytes)
            #expect(p.header == h)
            #expect(p.payloadRange == h.size..<(h.size + 3))
        }
    }

    @Test func refusesMalformedHeaders() {
        let valid: [UInt8] = [0x80, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]
        #expect(throws: RTPError.truncated("RTP packet of 11 bytes < 12-byte header")) { try parseRTP(Array(valid.dropLast())) }
        #expect(throws: RTPError.malformed("RTP version 1")) { try parseRTP([0x40] + valid.dropFirst()) }
        #expect(throws: RTPError.malformed("RTP version 0")) { try parseRTP([0x00] + valid.dropFirst()) }
        #expect(throws: RTPError.self) { try parseRTP([0x81] + valid.dropFirst()) }  // a CSRC is missing
        #expect(throws: RTPError.self) { try parseRTP([0x90] + valid.dropFirst()) }  // no extension header
        #expect(throws: RTPError.self) { try parseRTP([0x90] + valid.dropFirst() + [0xBE, 0xDE, 0, 1, 0x10]) }  // short data
        #expect(throws: RTPError.malformed("RTP padding count 0")) { try parseRTP([0xA0] + valid.dropFirst() + [0]) }
        #expect(throws: RTPError.self) { try parseRTP([0xA0] + valid.dropFirst() + [0, 3]) }  // padding > bytes
        #expect(throws: RTPError.self) { try parseRTP([0xA0] + valid.dropFirst()) }  // the count (the SSRC's last byte, 1) finds no byte after the header
        #expect(throws: RTPError.bufferTooSmall(needed: 12, available: 11)) {
            _ = try written(capacity: 11) { buf throws in
                try RTPHeader(payloadType: 96, sequenceNumber: 0, timestamp: 0, ssrc: 0).write(into: buf)
            }
        }
        #expect(throws: RTPError.malformed("RTP payload type 128 > 127")) {
            _ = try written { buf throws in
                try RTPHeader(payloadType: 128, sequenceNumber: 0, timestamp: 0, ssrc: 0).write(into: buf)
            }
        }
    }

    @Test func paddingMayTakeTheWholePayload() throws {
        let p = try parseRTP([0xA0, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 3])
        #expect(p.payloadRange == 12..<12)
        #expect(p.paddingLength == 3)
    }
}
