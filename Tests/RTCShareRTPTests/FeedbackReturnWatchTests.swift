import RTCShareCore
@testable import RTCShareRTP
import TestSupport
import Testing

/// When feedback ends an outage, and when it is only a receiver's regular report.
@Suite struct FeedbackReturnWatchTests {
    @Test func reportsOnlyAtRFC3550sRandomisedSecondAreNeverAReturn() {
        // aiortc's cadence with no media flowing: a report every 0.5...1.5 s, nothing else.
        var watch = FeedbackReturnWatch()
        var rng = SeededRandom(seed: 3)
        var t = MediaTime.seconds(1)
        for _ in 0..<2_000 {
            t = t + .microseconds(Int64.random(in: 500_000...1_500_000, using: &rng))
            #expect(watch.heard(at: t) == nil)
        }
        #expect(watch.returns == 0)
        #expect(watch.limit >= .milliseconds(2_900), "twice the longest gap, 1.5 s")
    }

    @Test func withFeedbackEvery50MillisecondsASilenceOfOneSecondIsAnOutage() {
        var watch = FeedbackReturnWatch()
        var t = MediaTime.seconds(1)
        #expect(watch.limit == FeedbackReturnWatch.longestLimit, "a peer not heard yet may report at 1.5 s")
        for _ in 0..<100 {
            t = t + .milliseconds(50)
            #expect(watch.heard(at: t) == nil)
        }
        #expect(watch.limit == FeedbackReturnWatch.shortestSilence)
        var late = watch
        #expect(late.heard(at: t + .milliseconds(999)) == nil, "just under the limit")
        #expect(watch.heard(at: t + .milliseconds(1_200)) == .milliseconds(1_200))
        #expect(watch.returns == 1)
    }

    @Test func aTenSecondOutageIsReportedOnceByTheFeedbackThatEndsIt() {
        var watch = FeedbackReturnWatch()
        var t = MediaTime.seconds(1)
        for _ in 0..<20 {
            t = t + .milliseconds(700)
            _ = watch.heard(at: t)
        }
        t = t + .seconds(10)
        #expect(watch.heard(at: t) == .seconds(10))
        #expect(watch.heard(at: t + .milliseconds(20)) == nil)
        #expect(watch.heard(at: t) == nil, "the same instant twice is no gap")
        #expect(watch.returns == 1)
    }

    @Test func theLimitFollowsTheCadenceBackDownWithinTwoWindows() {
        var watch = FeedbackReturnWatch()
        var t = MediaTime.seconds(1)
        for _ in 0..<17 {
            t = t + .milliseconds(1_200)
            #expect(watch.heard(at: t) == nil)
        }
        #expect(watch.limit == .milliseconds(2_400))
        for _ in 0..<32 {
            t = t + .milliseconds(100)
            _ = watch.heard(at: t)
        }
        #expect(watch.limit == FeedbackReturnWatch.shortestSilence)
    }
}
