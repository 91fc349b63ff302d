import TestSupport
import Testing
import RTCShareCore
@testable import RTCShareMedia

private typealias Watchdog = StallWatchdogStateMachine

/// Drives a watchdog the way the run loop does, with a fake clock and a fake source whose restarts
/// take `restartTakes` and end as `restartSucceeds` says (nil: they never end on their own).
/// Times given to it are offsets from the start of the run.
private struct WatchdogRun {
    let start: MediaTime
    var clock: FakeClock
    var watchdog: Watchdog
    var restartTakes: MediaDuration? = .zero
    var restartSucceeds = true
    private(set) var log: [(at: MediaDuration, action: Watchdog.Action)] = []
    private var restartEndsAt: MediaTime?

    init(_ configuration: Watchdog.Configuration = .init()) {
        clock = FakeClock()
        start = clock.now
        watchdog = Watchdog(configuration: configuration, startedAt: start)
    }

    /// When the restarts were asked for, and with which attempt numbers.
    var restarts: [(at: MediaDuration, attempt: Int)] {
        log.compactMap { entry in
            if case .restartSource(let attempt) = entry.action { return (entry.at, attempt) }
            return nil
        }
    }

    var reports: [(at: MediaDuration, event: Watchdog.Event)] {
        log.compactMap { entry in
            if case .report(let event) = entry.action { return (entry.at, event) }
            return nil
        }
    }

    mutating func frames(every interval: MediaDuration, from: MediaDuration, to: MediaDuration) {
        var offset = from
        while offset < to {
            run(until: offset)
            record(watchdog.frameArrived(at: clock.now))
            drain()
            offset = offset + interval
        }
    }

    mutating func finishRestart(at offset: MediaDuration, succeeded: Bool) {
        run(until: offset)
        restartEndsAt = nil
        record(watchdog.restartFinished(at: clock.now, succeeded: succeeded))
        drain()
    }

    /// Moves time to `offset`, handling due ticks and restart ends on the way.
    mutating func run(until offset: MediaDuration) {
        let end = start + offset
        while true {
            let wake = watchdog.nextWakeup
            let next = [wake, restartEndsAt].compactMap { $0 }.min()
            guard let next, next <= end else { break }
            clock.advance(to: max(clock.now, next))
            if let ends = restartEndsAt, ends <= clock.now {
                restartEndsAt = nil
                record(watchdog.restartFinished(at: clock.now, succeeded: restartSucceeds))
            } else {
                record(watchdog.tick(at: clock.now))
                if let again = watchdog.nextWakeup, again < clock.now {
                    Issue.record("tick at \(clock.now) left the wake-up in the past")
                    return
                }
            }
            if log.count > 10_000 { Issue.record("runaway"); return }
        }
        clock.advance(to: end)
    }

    private mutating func drain() { run(until: clock.now - start) }

    private mutating func record(_ action: Watchdog.Action?) {
        guard let action else { return }
        log.append((clock.now - start, action))
        if case .restartSource = action, let takes = restartTakes { restartEndsAt = clock.now + takes }
    }
}

private func ms(_ value: Int64) -> MediaDuration { .milliseconds(value) }
private func s(_ value: Int64) -> MediaDuration { .seconds(value) }

@Suite struct StallWatchdogTests {
    @Test func steadySourceIsNeverRestarted() {
        var run = WatchdogRun()
        run.frames(every: ms(50), from: ms(10), to: s(60))
        #expect(run.log.isEmpty)
        #expect(run.watchdog.counters == Watchdog.Counters())
        #expect(!run.watchdog.isStalled)
    }

    @Test func sourceSlowerThanTheThresholdIsNotAStall() {
        var run = WatchdogRun()
        run.frames(every: ms(900), from: .zero, to: s(30))
        #expect(run.log.isEmpty)
    }

    @Test func sourceStoppingForThreeSecondsIsRestartedOnceAndRecovers() {
        var run = WatchdogRun()
        run.frames(every: ms(50), from: .zero, to: s(10))
        run.run(until: s(13))
        run.frames(every: ms(50), from: s(13), to: s(30))
        let lastFrame = run.start + ms(9950)
        #expect(run.reports.map(\.at) == [ms(10950), s(13), s(23)])
        #expect(run.reports.map(\.event) == [.stalled(lastFrameAt: lastFrame), .recovered(after: ms(3050)),
                                             .backoffReset])
        // A second of silence is a stall, restarted at once; the source stays silent, so the next
        // restart comes 2 s after the first ended; then frames are back and restarts stop.
        #expect(run.restarts.map(\.at) == [ms(10950), ms(12950)])
        #expect(run.restarts.map(\.attempt) == [1, 2])
        #expect(run.watchdog.counters == Watchdog.Counters(stalls: 1, restarts: 2, failedRestarts: 0))
        #expect(!run.watchdog.isStalled)
        // Ten steady seconds after it came back (23 s), the back-off was forgotten.
        #expect(run.watchdog.currentRestartGap == s(2))
    }

    @Test func sourceThatNeverDeliversIsAStallFromTheStart() {
        var run = WatchdogRun()
        run.run(until: ms(1500))
        #expect(run.reports.map(\.event) == [.stalled(lastFrameAt: nil)])
        #expect(run.restarts.map(\.at) == [s(1)])
    }

    @Test func backoffDoublesWhileTheStallContinuesUpToTheMaximum() {
        var run = WatchdogRun()
        run.run(until: s(200))
        #expect(run.restarts.map(\.at) == [1, 3, 7, 15, 31, 61, 91, 121, 151, 181].map { s($0) })
        #expect(run.restarts.map(\.attempt) == Array(1...10))
        #expect(run.watchdog.counters == Watchdog.Counters(stalls: 1, restarts: 10, failedRestarts: 0))
        #expect(run.watchdog.currentRestartGap == s(30))
    }

    @Test func restartsNeverOverlapWhileOneIsInFlight() {
        var run = WatchdogRun()
        run.restartTakes = nil
        run.run(until: s(60))
        #expect(run.restarts.map(\.at) == [s(1)])
        #expect(run.watchdog.isRestarting)
        #expect(run.watchdog.nextWakeup == nil)
        // Once it ends, the next waits the full gap from the end, not from the start.
        run.finishRestart(at: s(60), succeeded: true)
        run.run(until: s(70))
        #expect(run.restarts.map(\.at) == [s(1), s(62)])
        #expect(run.restarts.map(\.attempt) == [1, 2])
    }

    @Test func failedRestartsAreCountedAndBackedOff() {
        var run = WatchdogRun()
        run.restartTakes = ms(500)
        run.restartSucceeds = false
        run.run(until: s(20))
        // Each gap runs from the end of the failed attempt: 2 s, then 4 s, then 8 s.
        #expect(run.restarts.map(\.at) == [ms(1000), ms(3500), ms(8000), ms(16500)])
        #expect(run.watchdog.counters == Watchdog.Counters(stalls: 1, restarts: 4, failedRestarts: 4))
        #expect(!run.watchdog.isRestarting)
    }

    @Test func framesDuringARestartEndTheStall() {
        var run = WatchdogRun()
        run.restartTakes = nil
        run.run(until: s(2))
        run.frames(every: ms(50), from: ms(2500), to: s(3))
        #expect(!run.watchdog.isStalled)
        #expect(run.reports.last?.event == .recovered(after: ms(2500)))
        run.finishRestart(at: s(3), succeeded: true)
        run.frames(every: ms(50), from: s(3), to: s(20))
        #expect(run.restarts.count == 1)
        #expect(run.watchdog.counters == Watchdog.Counters(stalls: 1, restarts: 1, failedRestarts: 0))
    }

    @Test func flappingSourceStaysBackedOffUntilItHasDeliveredSteadily() {
        var run = WatchdogRun()
        run.run(until: ms(7500))  // restarts at 1, 3, 7 s
        #expect(run.restarts.map(\.attempt) == [1, 2, 3])
        run.frames(every: ms(50), from: s(8), to: s(11))
        // Silent again at 10.95 s, stalled at 11.95 s; attempt 4 waits 8 s from the end of 3.
        run.run(until: ms(15500))
        #expect(run.restarts.map(\.at) == [s(1), s(3), s(7), s(15)])
        #expect(run.restarts.last?.attempt == 4)
        // Back at 16 s and steady: after 10 s of that the back-off is forgotten.
        run.frames(every: ms(50), from: s(16), to: s(28))
        #expect(run.reports.contains { $0.at == s(26) && $0.event == .backoffReset })
        #expect(run.watchdog.currentRestartGap == s(2))
        // So the next stall restarts at attempt 1, right when it is detected — not at 31 s, where
        // the forgotten 16 s gap after attempt 4 would have put it.
        run.run(until: s(30))
        #expect(run.restarts.last?.at == ms(28950))
        #expect(run.restarts.last?.attempt == 1)
        #expect(run.watchdog.counters == Watchdog.Counters(stalls: 3, restarts: 5, failedRestarts: 0))
    }

    @Test func restartFinishedWithoutARestartIsIgnored() {
        var run = WatchdogRun()
        run.frames(every: ms(50), from: .zero, to: s(1))
        run.finishRestart(at: s(1), succeeded: false)
        #expect(run.log.isEmpty)
        #expect(run.watchdog.counters == Watchdog.Counters())
    }
}
