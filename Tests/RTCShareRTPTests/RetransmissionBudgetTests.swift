import Testing
@testable import RTCShareRTP

/// The retransmission token bucket, driven by a fake clock.
@Suite struct RetransmissionBudgetTests {
    @Test func burstThenRate() {
        var b = RetransmissionBudget(bytesPerSecond: 1000, burstBytes: 1500)
        #expect(b.allow(bytes: 1200, nowMicroseconds: 0) == true)
        #expect(b.allow(bytes: 1200, nowMicroseconds: 0) == false)        // 300 left
        #expect(b.available(nowMicroseconds: 500_000) == 800)     // + 500 in 0.5 s
        #expect(b.allow(bytes: 1200, nowMicroseconds: 500_000) == false)
        #expect(b.allow(bytes: 1200, nowMicroseconds: 900_000) == true)   // 300 + 900
        #expect(b.available(nowMicroseconds: 900_000) == 0)
        #expect(b.available(nowMicroseconds: 100_000_000) == 1500) // capped at the burst
        #expect(b.allow(bytes: 1501, nowMicroseconds: 100_000_000) == false) // never more than a burst
        #expect(b.allowedBytes == 2400 && b.refusedPackets == 3)
    }

    @Test func timeGoingBackwardsRefillsNothing() {
        var b = RetransmissionBudget(bytesPerSecond: 1000, burstBytes: 1000)
        #expect(b.allow(bytes: 1000, nowMicroseconds: 5_000_000) == true)
        #expect(b.available(nowMicroseconds: 1_000_000) == 0)
        #expect(b.available(nowMicroseconds: 5_000_000) == 0)   // no credit for the jump back
        #expect(b.available(nowMicroseconds: 5_500_000) == 500)
    }

    @Test func aNackStormIsCappedAtRatePlusBurst() {
        var b = RetransmissionBudget(bytesPerSecond: 50_000, burstBytes: 10_000)
        var sent = 0
        for i in 0..<100_000 {  // 100k NACKs of 1200-byte packets in 1 s
            if b.allow(bytes: 1200, nowMicroseconds: Int64(i) * 10) { sent += 1200 }
        }
        #expect(sent <= 10_000 + 50_000)
        #expect(sent >= 50_000)
        #expect(b.refusedPackets > 99_000)
    }

    @Test func aZeroRateOnlyGivesTheBurst() {
        var b = RetransmissionBudget(bytesPerSecond: 0, burstBytes: 100)
        #expect(b.allow(bytes: 100, nowMicroseconds: 0) == true)
        #expect(b.allow(bytes: 1, nowMicroseconds: 1_000_000_000) == false)
    }

    @Test func itSaysWhenBytesWillBeThere() {
        var b = RetransmissionBudget(bytesPerSecond: 10_000, burstBytes: 3_000)
        #expect(b.time(forBytes: 3_000, nowMicroseconds: 0) == 0, "full at the start")
        #expect(b.allow(bytes: 3_000, nowMicroseconds: 0) == true)
        // 1 200 bytes at 10 000 a second: 120 ms.
        #expect(b.time(forBytes: 1_200, nowMicroseconds: 0) == 120_000)
        #expect(b.allow(bytes: 1_200, nowMicroseconds: 119_999) == false)
        #expect(b.allow(bytes: 1_200, nowMicroseconds: 120_000) == true)
        #expect(b.time(forBytes: 3_001, nowMicroseconds: 120_000) == nil, "more than a burst never fits")
        var idle = RetransmissionBudget(bytesPerSecond: 0, burstBytes: 3_000)
        #expect(idle.allow(bytes: 3_000, nowMicroseconds: 0) == true)
        #expect(idle.time(forBytes: 1, nowMicroseconds: 5) == nil, "no refill: never")
    }
}
