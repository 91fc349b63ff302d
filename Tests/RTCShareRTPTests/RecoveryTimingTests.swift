@testable import RTCShareRTP
import Testing

@Suite struct RecoveryTimingTests {
    @Test func beforeAnyAnswerTheDefaultStandsForTheRoundTrip() {
        let t = RecoveryTiming()
        #expect(t.smoothedRoundTripMicroseconds == nil)
        // 100 ms + half of it as variation + 15 ms margin.
        #expect(t.answerMicroseconds == 165_000)
        #expect(t.playoutWaitMicroseconds(reorderWaitMicroseconds: 5_000, minimum: 60_000, maximum: 320_000) == 320_000)
    }

    @Test func samplesAreSmoothedAsRFC6298AndTheWaitsFollowThem() {
        var t = RecoveryTiming()
        t.roundTripSample(40_000)
        #expect(t.smoothedRoundTripMicroseconds == 40_000 && t.roundTripVariationMicroseconds == 20_000)
        t.roundTripSample(48_000)
        // srtt += (48 - 40)/8 = 41 ms; rttvar += (|48 - 40| - 20)/4 = 17 ms.
        #expect(t.smoothedRoundTripMicroseconds == 41_000 && t.roundTripVariationMicroseconds == 17_000)
        for _ in 0..<40 { t.roundTripSample(41_000) }
        #expect(t.roundTripVariationMicroseconds < 1_000)
        let answer = t.answerMicroseconds
        #expect(answer >= 56_000 && answer <= 57_000)
        let wait = t.playoutWaitMicroseconds(reorderWaitMicroseconds: 5_000, minimum: 60_000, maximum: 320_000)
        #expect(wait == 5_000 + 4 * answer)
    }

    @Test func aMeasuredRoundTripIsAskedAgainSoonerThanTheAnswerTime() throws {
        var t = RecoveryTiming()
        // Unmeasured: the answer time (the default round trip is only a guess).
        #expect(t.retryMicroseconds == t.answerMicroseconds)
        // The bench path's figures: 42.7 ms with 2.2 ms of variation.
        t.roundTripSample(42_700)
        for _ in 0..<40 { t.roundTripSample(Int64.random(in: 40_500...44_900)) }
        let srtt = try #require(t.smoothedRoundTripMicroseconds)
        #expect(t.retryMicroseconds == srtt + 2 * t.roundTripVariationMicroseconds + 5_000)
        #expect(t.retryMicroseconds < t.answerMicroseconds, "asked again before the playout's answer time")
        #expect(t.retryMicroseconds > srtt, "never before an answer could arrive")
        // A very jittery path: never later than the answer time.
        for _ in 0..<40 { t.roundTripSample(Int64.random(in: 10_000...200_000)) }
        #expect(t.retryMicroseconds <= t.answerMicroseconds)
    }

    @Test func waitsStayWithinTheirBoundsAndBadSamplesAreIgnored() {
        var t = RecoveryTiming()
        t.roundTripSample(-5)
        t.roundTripSample(60_000_000)
        #expect(t.samples == 0)
        t.roundTripSample(200)
        // Loopback: 5 ms + 4 x (0.2 + 0.1 + 15 ms), or the minimum when that is more.
        #expect(t.playoutWaitMicroseconds(reorderWaitMicroseconds: 5_000, minimum: 60_000, maximum: 320_000) == 66_200)
        #expect(t.playoutWaitMicroseconds(reorderWaitMicroseconds: 5_000, minimum: 80_000, maximum: 320_000) == 80_000)
        t.roundTripSample(2_000_000)
        #expect(t.playoutWaitMicroseconds(reorderWaitMicroseconds: 5_000, minimum: 60_000, maximum: 320_000) == 320_000)
    }

    @Test func theMediaRateIsTheLastSecondsBytes() {
        var m = MediaRateMeter()
        for i in 0..<20 { m.add(bytes: 5_000, nowMicroseconds: 10_000_000 + Int64(i) * 50_000) }
        #expect(m.bytesPerSecond(nowMicroseconds: 10_999_999) == 100_000)
        // Two idle seconds later nothing is left.
        #expect(m.bytesPerSecond(nowMicroseconds: 13_000_000) == 0)
    }
}
