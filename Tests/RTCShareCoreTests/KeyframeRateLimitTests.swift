import RTCShareCore
import Testing

/// The spacing of keyframe requests the encoders and the receive side share.
@Suite struct KeyframeRateLimitTests {
    @Test func theFirstRequestGoesAndTheNextWaitsTheInterval() {
        var limit = KeyframeRateLimit(minimumIntervalMicroseconds: 500_000)
        #expect(limit.nextAccepted == nil)
        let first = limit.accept(at: 1_000_000)
        #expect(first)
        #expect(limit.nextAccepted == 1_500_000)
        let tooSoon = limit.accept(at: 1_499_999)
        #expect(!tooSoon)
        // A refused request does not push the interval out.
        #expect(limit.nextAccepted == 1_500_000)
        let onTime = limit.accept(at: 1_500_000)
        #expect(onTime)
        #expect(limit.nextAccepted == 2_000_000)
    }

    @Test func aForcedKeyframeRestartsTheInterval() {
        var limit = KeyframeRateLimit(minimumIntervalMicroseconds: 500_000)
        let first = limit.accept(at: 0)
        limit.restart(at: 400_000)
        let sinceFirst = limit.accept(at: 600_000)
        let sinceForced = limit.accept(at: 900_000)
        #expect(first && !sinceFirst && sinceForced)
    }

    @Test func aZeroIntervalAcceptsEveryRequest() {
        var limit = KeyframeRateLimit(minimumIntervalMicroseconds: 0)
        let accepted = (0..<3).map { _ in limit.accept(at: 10) }
        #expect(accepted == [true, true, true])
    }
}
