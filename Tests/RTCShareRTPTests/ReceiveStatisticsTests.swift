import Testing
@testable import RTCShareRTP

/// RFC 3550 A.3 / A.8 receive counters with a fake clock.
@Suite struct ReceiveStatisticsTests {
    @Test func countsLossAndFractionPerInterval() throws {
        var s = ReceiveStatistics(ssrc: 9, clockRate: 90_000)
        for seq: UInt16 in [1, 2, 3, 5, 6, 8] {
            s.received(sequenceNumber: seq, rtpTimestamp: 0, arrival: 0)
        }
        let block = s.makeReportBlock(now: 0)
        let b = try #require(block)
        #expect(b.ssrc == 9)
        #expect(b.extendedHighestSequence == 8)
        #expect(b.cumulativeLost == 2)  // 4 and 7 of 8 expected
        #expect(b.fractionLost == UInt8(2 * 256 / 8))
        // Next interval without loss: fraction 0, cumulative unchanged.
        for seq: UInt16 in 9...12 { s.received(sequenceNumber: seq, rtpTimestamp: 0, arrival: 0) }
        let block2 = s.makeReportBlock(now: 0)
        let b2 = try #require(block2)
        #expect(b2.fractionLost == 0)
        #expect(b2.cumulativeLost == 2)
    }

    /// Repairs do not hide the loss: the report gives the path's loss before repair.
    @Test func aRetransmissionFillsNoLossInTheReport() throws {
        var s = ReceiveStatistics(ssrc: 9, clockRate: 90_000)
        for seq: UInt16 in [1, 2, 4, 5] { s.received(sequenceNumber: seq, rtpTimestamp: 0, arrival: 0) }
        s.received(sequenceNumber: 3, rtpTimestamp: 0, arrival: 0, isRetransmission: true)
        // A repair past the highest still moves it (the original was lost on the way).
        s.received(sequenceNumber: 6, rtpTimestamp: 0, arrival: 0, isRetransmission: true)
        let block = s.makeReportBlock(now: 0)
        let b = try #require(block)
        #expect(b.extendedHighestSequence == 6)
        #expect(b.cumulativeLost == 2)
        #expect(b.fractionLost == UInt8(2 * 256 / 6))
    }

    @Test func wrapAddsACycle() {
        var s = ReceiveStatistics(ssrc: 1, clockRate: 90_000)
        for seq: UInt16 in [65_534, 65_535, 0, 1] { s.received(sequenceNumber: seq, rtpTimestamp: 0, arrival: 0) }
        #expect(s.extendedHighestSequence == 65_536 + 1)
        #expect(s.cumulativeLost == 0)
    }

    @Test func duplicatesMakeLossNegativeAndReorderIsNotLoss() {
        var s = ReceiveStatistics(ssrc: 1, clockRate: 90_000)
        for seq: UInt16 in [10, 12, 11, 12] { s.received(sequenceNumber: seq, rtpTimestamp: 0, arrival: 0) }
        #expect(s.expected == 3)
        #expect(s.cumulativeLost == -1)
    }

    @Test func largeJumpIsBelievedOnlyWhenFollowed() {
        var s = ReceiveStatistics(ssrc: 1, clockRate: 90_000)
        s.received(sequenceNumber: 100, rtpTimestamp: 0, arrival: 0)
        let jumped = s.received(sequenceNumber: 40_000, rtpTimestamp: 0, arrival: 0)
        #expect(!jumped)
        #expect(s.extendedHighestSequence == 100)
        let followed = s.received(sequenceNumber: 40_001, rtpTimestamp: 0, arrival: 0)
        #expect(followed)
        #expect(s.extendedHighestSequence == 40_001)
        #expect(s.cumulativeLost == 0)
    }

    @Test func jitterOfAConstantDelayIsZeroAndGrowsWithVariation() {
        var s = ReceiveStatistics(ssrc: 1, clockRate: 90_000)
        // 30 fps, 3000 ticks apart, arriving exactly 33 333.3 µs apart: no jitter.
        for i in 0..<30 {
            s.received(sequenceNumber: UInt16(i), rtpTimestamp: UInt32(i * 3000), arrival: Int64(i) * 100_000 / 3)
        }
        #expect(s.jitter <= 1)
        // Alternate ±10 ms (900 ticks): J converges toward ~1800·(something) > 0.
        for i in 30..<200 {
            let wobble: Int64 = i % 2 == 0 ? 10_000 : 0
            s.received(sequenceNumber: UInt16(i), rtpTimestamp: UInt32(i * 3000), arrival: Int64(i) * 100_000 / 3 + wobble)
        }
        #expect(s.jitter > 700 && s.jitter < 1000, "jitter \(s.jitter)")
        // Retransmissions do not move it.
        let before = s.jitter
        s.received(sequenceNumber: 150, rtpTimestamp: 150 * 3000, arrival: 99_000_000, isRetransmission: true)
        #expect(s.jitter == before)
    }

    @Test func lastSenderReportAndDelayAreEchoed() throws {
        var s = ReceiveStatistics(ssrc: 1, clockRate: 90_000)
        s.received(sequenceNumber: 1, rtpTimestamp: 0, arrival: 0)
        let first = s.makeReportBlock(now: 0)
        #expect(first?.lastSenderReport == 0)
        let ntp = NTPTime(seconds: 0x1234_5678, fraction: 0x9ABC_DEF0)
        s.senderReportReceived(ntpTime: ntp, arrival: 1_000_000)
        let later = s.makeReportBlock(now: 1_500_000)
        let b = try #require(later)
        #expect(b.lastSenderReport == 0x5678_9ABC)
        #expect(b.delaySinceLastSenderReport == 32_768)  // 0.5 s in 1/65536 s
    }

    @Test func noBlockBeforeTheFirstPacket() {
        var s = ReceiveStatistics(ssrc: 1, clockRate: 48_000)
        let block = s.makeReportBlock(now: 0)
        #expect(block == nil)
    }
}
