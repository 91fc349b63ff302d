import TestSupport
import Testing
@testable import RTCShareRTP

/// Per-stream send state: capture clock → RTP clock, sequence numbers, counters, whole
/// packets.
@Suite struct RTPStreamTests {
    @Test func timestampsFollowTheCaptureClock() {
        let video = RTPStream(ssrc: 1, payloadType: 96, clockRate: 90_000, initialSequenceNumber: 0, timestampOffset: 0)
        #expect(video.timestamp(captureMicroseconds: 0) == 0)
        #expect(video.timestamp(captureMicroseconds: 1_000_000) == 90_000)
        #expect(video.timestamp(captureMicroseconds: 33_333) == 2_999)   // 2999.97 → rounded down
        #expect(video.timestamp(captureMicroseconds: -1) == UInt32.max)  // one tick before 0
        // 2^32 ticks at 90 kHz is 47721.858844 s: the timestamp wraps there.
        #expect(video.timestamp(captureMicroseconds: 47_721_858_845) == 0)
        // Large times stay exact (no overflow): 10^12 s x 90000 mod 2^32.
        let t: Int64 = 1_000_000_000_000 * 1_000_000
        #expect(video.timestamp(captureMicroseconds: t) == UInt32(truncatingIfNeeded: UInt64(1_000_000_000_000) &* 90_000))
        let audio = RTPStream(ssrc: 1, payloadType: 111, clockRate: 48_000, initialSequenceNumber: 0,
                              timestampOffset: 0xFFFF_FFFF)
        #expect(audio.timestamp(captureMicroseconds: 20_000) == 959)      // 960 - 1 (offset wraps)
        #expect(audio.timestamp(captureMicroseconds: 40_000) &- audio.timestamp(captureMicroseconds: 20_000) == 960)
    }

    @Test func randomStartValuesDiffer() {
        var rng = SeededRandom(seed: 1)
        let a = RTPStream(payloadType: 96, clockRate: 90_000, using: &rng)
        let b = RTPStream(payloadType: 96, clockRate: 90_000, using: &rng)
        #expect(a.ssrc != b.ssrc && a.ssrc != 0)
        #expect((a.nextSequenceNumber, a.timestampOffset) != (b.nextSequenceNumber, b.timestampOffset))
        let c = RTPStream(payloadType: 111, clockRate: 48_000)
        #expect(c.clockRate == 48_000)
    }

    @Test func packetByteTableAndCounters() throws {
        var s = RTPStream(ssrc: 0x0102_0304, payloadType: 111, clockRate: 48_000, initialSequenceNumber: 0xFFFF,
                          timestampOffset: 0)
        let map = try RTPExtensionMap(absSendTime: 1)
        let first = try written { buf throws in
            try ([0xF8, 0xFF, 0xFE] as [UInt8]).withUnsafeBytes { p throws in
                try s.writePacket(into: buf, timestamp: s.timestamp(captureMicroseconds: 20_000), marker: true,
                                  extensions: RTPExtensionValues(absSendTime: 0x04_0000), map: map, payload: p)
            }
        }
        #expect(first == [
            0x90, 0xEF,             // V=2, X=1; M=1, PT=111
            0xFF, 0xFF,             // sequence number 65535
            0x00, 0x00, 0x03, 0xC0, // timestamp 960
            0x01, 0x02, 0x03, 0x04, // SSRC
            0xBE, 0xDE, 0x00, 0x01, // one-byte extensions, 1 word
            0x12, 0x04, 0x00, 0x00, // id 1, abs-send-time 1 s
            0xF8, 0xFF, 0xFE,       // payload
        ])
        let second = try written { buf throws in
            try ([0x01] as [UInt8]).withUnsafeBytes { p throws in
                try s.writePacket(into: buf, timestamp: 1920, marker: false, payload: p)
            }
        }
        #expect(second == [0x80, 0x6F, 0x00, 0x00, 0, 0, 0x07, 0x80, 1, 2, 3, 4, 0x01])  // seq wrapped to 0
        #expect(s.packetCount == 2 && s.octetCount == 4 && s.nextSequenceNumber == 1 && s.lastTimestamp == 1920)
        #expect(throws: RTPError.bufferTooSmall(needed: 13, available: 12)) {
            _ = try written(capacity: 12) { buf throws in
                try ([0x01] as [UInt8]).withUnsafeBytes { p throws in try s.writePacket(into: buf, timestamp: 0, marker: false, payload: p) }
            }
        }
        #expect(s.packetCount == 2)  // a refused write takes no sequence number
    }
}
