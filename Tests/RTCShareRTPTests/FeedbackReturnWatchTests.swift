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
        #expect(watch.limit >= .milliseconds(2_900) && watch.limit <= .seconds(3), "twice the longest gap, 1.5 s")
    }

    @Test func withFeedbackEvery50MillisecondsASilenceOfOneSecondIsAnOutage() {
        var watch = FeedbackReturnWatch()
        var t = MediaTime.seconds(1)
        #expect(watch.limit == .seconds(3), "a peer not heard from yet may report at 1.5 s")
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

    @Test func thePathIsSilentFromTheLimitOnAndOnlyOnceHeardFrom() {
        var watch = FeedbackReturnWatch()
        #expect(!watch.isSilent(at: .seconds(100)), "never heard: a receiver that sends no RTCP is no outage")
        var t = MediaTime.seconds(1)
        for _ in 0..<40 {
            t = t + .milliseconds(50)
            _ = watch.heard(at: t)
        }
        #expect(watch.silenceDeadline == t + .seconds(1))
        #expect(!watch.isSilent(at: t + .milliseconds(999)))
        #expect(watch.isSilent(at: t + .seconds(1)))
        _ = watch.heard(at: t + .seconds(4))
        #expect(!watch.isSilent(at: t + .seconds(4)))
    }

    @Test func aPeerReportingEveryFiveSecondsIsTakenForAnOutageOnceThenItsCadenceRaisesTheLimit() {
        // RFC 3550's 5 s minimum, randomised to 2.5...7.5 s (GStreamer's default, for one).
        var watch = FeedbackReturnWatch()
        var rng = SeededRandom(seed: 5)
        var t = MediaTime.seconds(1)
        for _ in 0..<200 {
            t = t + .microseconds(Int64.random(in: 2_500_000...7_500_000, using: &rng))
            _ = watch.heard(at: t)
        }
        #expect(watch.returns <= 2, "\(watch.returns)")
        #expect(watch.limit >= .seconds(14))
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
        // An outage's own gap keeps the limit long for the next 16 to 32 gaps.
        t = t + .seconds(10)
        #expect(watch.heard(at: t) == .seconds(10))
        #expect(watch.limit == FeedbackReturnWatch.longestLimit)
    }
}
