import RTCShareCore
import RTCShareRTP
import Testing
import TestSupport

@Suite struct FeedbackWatchTests {
    @Test func idleUntilMediaStarts() {
        var watch = FeedbackWatch(silenceLimit: .seconds(5))
        #expect(watch.deadline == nil)
        #expect(watch.check(at: .seconds(100)) == nil)
    }

    @Test func aSilenceIsSaidOnceAndItsEndOnce() {
        var clock = FakeClock()
        var watch = FeedbackWatch(silenceLimit: .seconds(5))
        watch.mediaStarted(at: clock.now)
        #expect(watch.deadline == clock.now + .seconds(5))
        clock.advance(by: .milliseconds(4_999))
        #expect(watch.check(at: clock.now) == nil)
        clock.advance(by: .milliseconds(1))
        #expect(watch.check(at: clock.now) == .silent(forMilliseconds: 5_000))
        #expect(watch.deadline == nil)
        clock.advance(by: .seconds(3))
        #expect(watch.check(at: clock.now) == nil, "one report per silence")
        #expect(watch.heard(at: clock.now) == .resumed(afterMilliseconds: 8_000))
        #expect(watch.heard(at: clock.now) == nil, "the end is said once")
        #expect(watch.deadline == clock.now + .seconds(5))
        #expect(watch.silences == 1)
    }

    @Test func regularReportsKeepItQuiet() {
        var clock = FakeClock()
        var watch = FeedbackWatch(silenceLimit: .seconds(5))
        watch.mediaStarted(at: clock.now)
        for _ in 0..<60 {
            clock.advance(by: .milliseconds(1_500))
            #expect(watch.heard(at: clock.now) == nil)
            #expect(watch.check(at: clock.now) == nil)
        }
        // A later start changes nothing: silence counts from the last report.
        watch.mediaStarted(at: clock.now + .seconds(10))
        #expect(watch.deadline == clock.now + .seconds(5))
    }
}
