import TestSupport
import Testing
import RTCShareCore
@testable import RTCShareMedia

private typealias Pacer = FramePacerStateMachine

/// An encode decision as the tests look at it, with the time it was made.
private struct Encoded: Equatable {
    var at: MediaTime
    var source: Pacer.Source
    var captureTime: MediaTime
    var rtpTimestamp: UInt32
    var forceKeyframe: Bool
    var reason: Pacer.EncodeReason
}

/// Drives a pacer the way the run loop does: source frames and due ticks in time order (a frame
/// and a tick due at the same instant: the frame first), ticks drained after every input.
/// Times given to it are offsets from the start of the run.
private struct PacerRun {
    let start: MediaTime
    var clock: FakeClock
    var pacer: Pacer
    private(set) var encodes: [Encoded] = []
    private(set) var drops: [(at: MediaTime, reason: Pacer.DropReason)] = []

    init(_ configuration: Pacer.Configuration = .init()) {
        clock = FakeClock()
        start = clock.now
        pacer = Pacer(configuration: configuration)
    }

    @discardableResult
    mutating func frame(at offset: MediaDuration, orientation: Int = 1, changed: Bool = true,
                        capturedBefore lag: MediaDuration = .zero) -> Pacer.Action {
        let time = start + offset
        runTicks(until: time, includingNow: false)
        clock.advance(to: time)
        let action = pacer.frameArrived(at: time, captureTime: time - lag, orientation: orientation,
                                        contentChanged: changed)
        record(action)
        runTicks(until: time, includingNow: true)
        return action
    }

    /// A source at `fps` from `from` up to (not including) `to`; frame k at from + k/fps.
    mutating func source(fps: Int64, from: MediaDuration, to: MediaDuration,
                         changed: (MediaDuration) -> Bool = { _ in true },
                         capturedBefore lag: MediaDuration = .zero) {
        var k: Int64 = 0
        while true {
            let offset = from + .microseconds(k * 1_000_000 / fps)
            guard offset < to else { break }
            frame(at: offset, changed: changed(offset), capturedBefore: lag)
            k += 1
        }
    }

    /// The run loop was held up (a CPU quota ran out) from `stalledSince` until `offset`: the
    /// ticks due meanwhile run late, the first of them before anything else, then the frames
    /// captured meanwhile arrive together, each with its capture time.
    mutating func burst(at offset: MediaDuration, stalledSince: MediaDuration, captured: [MediaDuration]) {
        let time = start + offset
        runTicks(until: start + stalledSince, includingNow: false)
        clock.advance(to: time)
        if let wake = pacer.nextWakeup, wake <= time, let action = pacer.tick(at: time) { record(action) }
        for capture in captured {
            record(pacer.frameArrived(at: time, captureTime: start + capture, orientation: 1, contentChanged: true))
        }
        runTicks(until: time, includingNow: true)
    }

    /// A source at `fps` on a process that runs the first half of every `period` and is held up
    /// the other half: frames captured while it runs arrive at once, the others together at the
    /// end of their period's stall.
    mutating func throttledSource(fps: Int64, period: MediaDuration, until end: MediaDuration) {
        var periodStart = MediaDuration.zero
        var k: Int64 = 0
        func captureTime(_ k: Int64) -> MediaDuration { .microseconds(k * 1_000_000 / fps) }
        while periodStart < end {
            let stall = periodStart + .microseconds(period.microseconds / 2), next = periodStart + period
            while captureTime(k) < stall {
                frame(at: captureTime(k))
                k += 1
            }
            var held: [MediaDuration] = []
            while captureTime(k) < next {
                held.append(captureTime(k))
                k += 1
            }
            burst(at: next, stalledSince: stall, captured: held)
            periodStart = next
        }
    }

    @discardableResult
    mutating func requestKeyframe(at offset: MediaDuration) -> Pacer.Action? {
        let time = start + offset
        runTicks(until: time, includingNow: false)
        clock.advance(to: time)
        let action = pacer.keyframeRequested(at: time)
        if let action { record(action) }
        runTicks(until: time, includingNow: true)
        return action
    }

    mutating func run(until offset: MediaDuration) {
        runTicks(until: start + offset, includingNow: true)
        clock.advance(to: start + offset)
    }

    private mutating func runTicks(until time: MediaTime, includingNow: Bool) {
        while let wake = pacer.nextWakeup, includingNow ? wake <= time : wake < time {
            clock.advance(to: max(clock.now, wake))
            let action = pacer.tick(at: clock.now)
            if let action { record(action) }
            guard let next = pacer.nextWakeup, next > clock.now else {
                if pacer.nextWakeup != nil { Issue.record("tick at \(clock.now) left the wake-up due") }
                return
            }
        }
    }

    private mutating func record(_ action: Pacer.Action) {
        switch action {
        case let .encode(source, captureTime, rtpTimestamp, forceKeyframe, reason):
            encodes.append(Encoded(at: clock.now, source: source, captureTime: captureTime,
                                   rtpTimestamp: rtpTimestamp, forceKeyframe: forceKeyframe, reason: reason))
        case let .dropSourceFrame(reason):
            drops.append((clock.now, reason))
        }
    }

    func encodes(from: MediaDuration, to: MediaDuration) -> [Encoded] {
        encodes.filter { $0.at >= start + from && $0.at < start + to }
    }

    func drops(from: MediaDuration, to: MediaDuration) -> [Pacer.DropReason] {
        drops.filter { $0.at >= start + from && $0.at < start + to }.map(\.reason)
    }

    /// The longest time between consecutive encodes decided in [from, to).
    func longestGap(from: MediaDuration, to: MediaDuration) -> MediaDuration {
        let times = encodes(from: from, to: to).map(\.at)
        return zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? .zero
    }
}

private func ms(_ value: Int64) -> MediaDuration { .milliseconds(value) }
private func s(_ value: Int64) -> MediaDuration { .seconds(value) }
private let targetInterval = ms(50)

/// 90 kHz ticks of a media time, wrapped and offset as the pacer sends them.
private func rtp(_ time: MediaTime, offset: UInt32 = 0) -> UInt32 {
    offset &+ UInt32(truncatingIfNeeded: time.rtpTicks(clockRate: 90_000))
}

@Suite struct FramePacerTests {
    @Test func nothingIsSentBeforeTheFirstFrame() {
        var pacer = Pacer()
        #expect(pacer.nextWakeup == nil)
        #expect(pacer.tick(at: .seconds(5)) == nil)
        #expect(pacer.keyframeRequested(at: .seconds(6)) == nil)
        #expect(pacer.nextWakeup == nil)
        #expect(pacer.counters == Pacer.Counters())
    }

    @Test func firstFrameIsEncodedAtOnceAsAKeyframe() {
        var pacer = Pacer(configuration: .init(rtpTimestampOffset: 1234))
        let now = MediaTime.seconds(50)
        let action = pacer.frameArrived(at: now, captureTime: now - ms(4), orientation: 1, contentChanged: true)
        #expect(action == .encode(source: .newFrame, captureTime: now - ms(4),
                                  rtpTimestamp: rtp(now - ms(4), offset: 1234), forceKeyframe: true,
                                  reason: .firstFrame))
        #expect(pacer.nextWakeup != nil)
    }

    @Test func sourceAtTheTargetRatePassesThroughUntouched() {
        var run = PacerRun()
        run.source(fps: 20, from: .zero, to: s(5))
        #expect(run.encodes.count == 100)
        #expect(run.encodes.allSatisfy { $0.source == .newFrame })
        #expect(run.drops.isEmpty)
    }

    @Test func thirtyFpsSourceIsThinnedEvenlyToTwentyFps() {
        var run = PacerRun()
        run.source(fps: 30, from: .zero, to: s(4))
        for second in 1..<4 {
            let window = (s(Int64(second)), s(Int64(second + 1)))
            #expect(run.encodes(from: window.0, to: window.1).count == 20)
            #expect(run.drops(from: window.0, to: window.1) == Array(repeating: .tooFast, count: 10))
        }
        #expect(run.encodes.allSatisfy { $0.source == .newFrame })
        #expect(run.longestGap(from: .zero, to: s(4)) <= targetInterval * 3 / 2)
        // Evenly: exactly one of every three source frames goes, always at the same phase.
        let dropPhases = Set(run.drops.map { ($0.at - run.start).microseconds * 30 / 1_000_000 % 3 })
        #expect(dropPhases.count == 1)
    }

    @Test func aLowerFrameRateHoldsUntilItIsRaisedAgain() {
        // The bitrate fell: 5 fps of a 30 fps source; then it recovered: 20 again.
        var run = PacerRun()
        run.source(fps: 30, from: .zero, to: s(1))
        run.pacer.setFramesPerSecond(5)
        #expect(run.pacer.framesPerSecond == 5)
        run.source(fps: 30, from: s(1), to: s(4))
        run.pacer.setFramesPerSecond(50)  // never above the configured rate
        #expect(run.pacer.framesPerSecond == 20)
        run.source(fps: 30, from: s(4), to: s(6))
        for second in 2..<4 {
            #expect(run.encodes(from: s(Int64(second)), to: s(Int64(second + 1))).count == 5)
        }
        #expect(run.encodes(from: s(5), to: s(6)).count == 20)
    }

    @Test func fiveFpsSourceIsFilledWithRepeatsToTwentyFps() {
        var run = PacerRun()
        run.source(fps: 5, from: .zero, to: s(4))
        run.run(until: s(4))
        for second in 1..<4 {
            let window = run.encodes(from: s(Int64(second)), to: s(Int64(second + 1)))
            #expect(window.count == 20)
            #expect(window.filter { $0.source == .newFrame }.count == 5)
            #expect(window.filter { $0.source == .repeatLast }.allSatisfy { $0.reason == .fill && !$0.forceKeyframe })
        }
        #expect(run.drops.isEmpty)
        #expect(run.longestGap(from: .zero, to: s(4)) <= targetInterval * 3 / 2)
    }

    @Test func stoppedSourceIsFilledAtTheTargetRateAndNewFramesResume() {
        var run = PacerRun()
        run.source(fps: 20, from: .zero, to: s(2))
        run.source(fps: 20, from: s(5), to: s(8))
        for second in 1..<7 {
            #expect(run.encodes(from: s(Int64(second)), to: s(Int64(second + 1))).count == 20,
                    "second \(second)")
        }
        #expect(run.longestGap(from: .zero, to: s(8)) <= targetInterval * 3 / 2)
        let silent = run.encodes(from: s(2), to: s(5))
        #expect(silent.count == 60)
        #expect(silent.allSatisfy { $0.source == .repeatLast && $0.captureTime == run.start + ms(1950) })
        let back = run.encodes(from: s(5), to: s(8))
        #expect(back.first == Encoded(at: run.start + s(5), source: .newFrame, captureTime: run.start + s(5),
                                      rtpTimestamp: rtp(run.start + s(5)), forceKeyframe: false,
                                      reason: .sourceFrame))
        #expect(back.allSatisfy { $0.source == .newFrame })
        #expect(!run.pacer.isIdle)
    }

    @Test func frameDroppedAsTooFastIsShownByTheNextRepeat() {
        var run = PacerRun()
        run.frame(at: .zero)
        #expect(run.frame(at: ms(10)) == .dropSourceFrame(reason: .tooFast))
        run.run(until: ms(100))
        // The repeat takes the kept frame, which is the dropped one: its content is not lost.
        #expect(run.encodes.count == 2)
        #expect(run.encodes[1].source == .repeatLast)
        #expect(run.encodes[1].captureTime == run.start + ms(10))
    }

    @Test func keyframeRequestRepeatsTheKeptFrameAtOnceAsAKeyframe() {
        var run = PacerRun()
        run.source(fps: 20, from: .zero, to: ms(1010))
        let request = run.start + ms(1025)
        #expect(run.requestKeyframe(at: ms(1025)) == .encode(
            source: .repeatLast, captureTime: run.start + s(1), rtpTimestamp: rtp(request),
            forceKeyframe: true, reason: .keyframeRequest))
        #expect(run.encodes.filter(\.forceKeyframe).map(\.at) == [run.start, request])
    }

    @Test func burstOfKeyframeRequestsCostsOneExtraKeyframeAndLosesNone() {
        var run = PacerRun()
        run.source(fps: 20, from: .zero, to: ms(1010))
        #expect(run.requestKeyframe(at: ms(1025)) != nil)
        // Within one frame interval of that keyframe: carried by the next output instead.
        #expect(run.requestKeyframe(at: ms(1035)) == nil)
        #expect(run.requestKeyframe(at: ms(1040)) == nil)
        run.source(fps: 20, from: ms(1050), to: s(2))
        let keyframes = run.encodes.filter(\.forceKeyframe)
        #expect(keyframes.map(\.at) == [run.start, run.start + ms(1025), run.start + ms(1050)])
        #expect(keyframes.last?.source == .newFrame)
        #expect(run.pacer.counters.forcedKeyframes == 3)
    }

    @Test func deferredKeyframeRequestGoesOutByItselfWhenNoFrameComes() {
        var run = PacerRun()
        run.frame(at: .zero)
        #expect(run.requestKeyframe(at: ms(20)) == nil)
        run.run(until: ms(200))
        #expect(run.encodes.count >= 2)
        #expect(run.encodes[1].at == run.start + targetInterval)
        #expect(run.encodes[1].forceKeyframe && run.encodes[1].reason == .keyframeRequest)
    }

    @Test func orientationChangeIsEncodedAtOnceAsAKeyframe() {
        var run = PacerRun()
        run.frame(at: .zero, orientation: 1)
        // Far too soon for the rate, but the picture turned: it goes anyway, as a keyframe.
        #expect(run.frame(at: ms(10), orientation: 6) == .encode(
            source: .newFrame, captureTime: run.start + ms(10), rtpTimestamp: rtp(run.start + ms(10)),
            forceKeyframe: true, reason: .orientationChange))
        #expect(run.frame(at: ms(20), orientation: 6) == .dropSourceFrame(reason: .tooFast))
        #expect(run.frame(at: ms(70), orientation: 6) == .encode(
            source: .newFrame, captureTime: run.start + ms(70), rtpTimestamp: rtp(run.start + ms(70)),
            forceKeyframe: false, reason: .sourceFrame))
    }

    @Test func staticContentDropsToTheIdleRateAfterSettlingWithPeriodicKeyframes() {
        let config = Pacer.Configuration(idleFramesPerSecond: 1, idleSettleTime: ms(1500),
                                         idleKeyframeInterval: s(3))
        var run = PacerRun(config)
        // Changing for two seconds, then the same picture over and over.
        run.source(fps: 20, from: .zero, to: s(14), changed: { $0 < s(2) })
        // Settling (last change at 1.95 s, settled at 3.45 s): still the full rate.
        let settling = run.encodes(from: s(2), to: ms(3450))
        #expect(settling.count == 29)
        #expect(settling.allSatisfy { $0.source == .newFrame && $0.reason == .sourceFrame })
        #expect(run.pacer.isIdle)
        #expect(run.pacer.counters.idlePeriods == 1)
        // Idle: one repeat a second; unchanged source frames are let go.
        let idle = run.encodes(from: ms(3450), to: s(14))
        #expect(idle.map { $0.at - run.start } == (0..<11).map { ms(3450) + s($0) })
        #expect(idle.allSatisfy { $0.source == .repeatLast && $0.reason == .idleRefresh })
        #expect(run.drops(from: ms(3450), to: s(14)).allSatisfy { $0 == .unchanged })
        #expect(run.drops(from: ms(3450), to: s(14)).count == 211)
        // The settled picture goes as a keyframe at once, then at least every 3 s.
        let keyframes = idle.filter(\.forceKeyframe).map(\.at)
        #expect(keyframes.first == run.start + ms(3450))
        #expect(zip(keyframes, keyframes.dropFirst()).allSatisfy { $1 - $0 <= s(3) })
        #expect(keyframes.last.map { run.start + s(14) - $0 <= s(3) } == true)
    }

    @Test func newContentLeavesIdleAtOnce() {
        let config = Pacer.Configuration(idleFramesPerSecond: 1, idleSettleTime: s(1),
                                         idleKeyframeInterval: s(3))
        var run = PacerRun(config)
        run.frame(at: .zero)
        run.run(until: ms(5300))
        #expect(run.pacer.isIdle)
        #expect(run.frame(at: ms(5300), changed: true) == .encode(
            source: .newFrame, captureTime: run.start + ms(5300), rtpTimestamp: rtp(run.start + ms(5300)),
            forceKeyframe: false, reason: .leaveIdle))
        #expect(!run.pacer.isIdle)
        // Back at the full rate straight away.
        run.run(until: ms(6300))
        #expect(run.encodes(from: ms(5300), to: ms(6300)).count == 20)
    }

    @Test func stoppedSourceSettlesIntoIdleWhenIdleIsOn() {
        let config = Pacer.Configuration(idleFramesPerSecond: 2, idleSettleTime: s(1),
                                         idleKeyframeInterval: ms(2500))
        var run = PacerRun(config)
        run.frame(at: .zero)
        run.run(until: s(11))
        #expect(run.encodes(from: .zero, to: s(1)).count == 20)
        let idle = run.encodes(from: s(1), to: s(11))
        #expect(idle.count == 20)
        let keyframes = idle.filter(\.forceKeyframe).map(\.at)
        #expect(zip(keyframes, keyframes.dropFirst()).allSatisfy { $1 - $0 <= ms(2500) })
        #expect(keyframes.count >= 4)
    }

    @Test func turnWhileIdleLeavesIdleAtOnceWithAKeyframe() {
        let config = Pacer.Configuration(idleFramesPerSecond: 1, idleSettleTime: s(1),
                                         idleKeyframeInterval: s(3))
        var run = PacerRun(config)
        run.frame(at: .zero, orientation: 1)
        run.run(until: s(4))
        #expect(run.pacer.isIdle)
        #expect(run.frame(at: s(4), orientation: 8, changed: false) == .encode(
            source: .newFrame, captureTime: run.start + s(4), rtpTimestamp: rtp(run.start + s(4)),
            forceKeyframe: true, reason: .orientationChange))
        #expect(!run.pacer.isIdle)
    }

    @Test func keyframeRequestWhileIdleIsAnsweredAtOnce() {
        let config = Pacer.Configuration(idleFramesPerSecond: 1, idleSettleTime: s(1),
                                         idleKeyframeInterval: s(3))
        var run = PacerRun(config)
        run.frame(at: .zero)
        run.run(until: ms(2600))
        #expect(run.requestKeyframe(at: ms(2600)) == .encode(
            source: .repeatLast, captureTime: run.start, rtpTimestamp: rtp(run.start + ms(2600)),
            forceKeyframe: true, reason: .keyframeRequest))
        #expect(run.pacer.isIdle)
    }

    @Test func rtpTimestampsFollowCaptureTimesAndStrictlyIncrease() {
        // An offset just below the wrap, so the 32-bit timestamp wraps during the run.
        var run = PacerRun(Pacer.Configuration(rtpTimestampOffset: 0xFFFF_0000 &- rtp(FakeClock().now)))
        run.source(fps: 7, from: .zero, to: s(3), capturedBefore: ms(8))
        run.source(fps: 30, from: s(3), to: s(6), capturedBefore: ms(12))
        let offset = run.pacer.configuration.rtpTimestampOffset
        // New frames carry their capture time, repeats the tick time — except a frame captured
        // before the previous output went out, which goes one tick after it.
        var previous: Int64 = .min
        var movedOn = 0
        for encode in run.encodes {
            let clockTime = encode.source == .newFrame ? encode.captureTime : encode.at
            let ticks = clockTime.rtpTicks(clockRate: 90_000)
            if ticks <= previous { movedOn += 1 }
            previous = max(ticks, previous + 1)
            #expect(encode.rtpTimestamp == offset &+ UInt32(truncatingIfNeeded: previous))
        }
        #expect(movedOn * 10 < run.encodes.count)
        let steps = zip(run.encodes, run.encodes.dropFirst()).map { $1.rtpTimestamp &- $0.rtpTimestamp }
        #expect(steps.allSatisfy { $0 > 0 && $0 < 1 << 31 })
        #expect(run.encodes.contains { $0.rtpTimestamp < 0x8000_0000 })  // it did wrap
    }

    @Test func frameCapturedBeforeTheLastRepeatStillGetsALaterTimestamp() {
        var run = PacerRun()
        run.frame(at: .zero)
        run.run(until: ms(80))
        let repeatAt = run.start + ms(75)
        #expect(run.encodes.last?.at == repeatAt)
        // Captured before the repeat went out, delivered after it.
        let action = run.frame(at: ms(80), capturedBefore: ms(10))
        #expect(action == .encode(source: .newFrame, captureTime: run.start + ms(70),
                                  rtpTimestamp: rtp(repeatAt) + 1, forceKeyframe: false, reason: .sourceFrame))
    }

    @Test func framesHeldUpByACPUQuotaAllGoWhenCapturedAtTheTargetRate() {
        var run = PacerRun(.init(targetFramesPerSecond: 30))
        run.throttledSource(fps: 30, period: ms(100), until: s(3))
        let newFrames = run.encodes(from: .zero, to: s(4)).filter { $0.source == .newFrame }
        // Every frame fed (90) goes, the last of them with the final burst at 3 s.
        #expect(newFrames.count == 90)
        #expect(run.drops(from: .zero, to: s(4)).isEmpty)
        let stamps = run.encodes.map(\.rtpTimestamp)
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { Int32(bitPattern: $1 &- $0) > 0 })
    }

    @Test func aFastSourceHeldUpByACPUQuotaIsStillThinnedToTheTargetRate() {
        var run = PacerRun(.init(targetFramesPerSecond: 30))
        run.throttledSource(fps: 60, period: ms(100), until: s(3))
        let newFrames = run.encodes(from: .zero, to: s(4)).filter { $0.source == .newFrame }.count
        #expect((88...92).contains(newFrames), "\(newFrames) of 180 frames at a 30 fps target")
    }

    @Test func jitteredSourceKeepsTheTargetRateWithoutLongGaps() {
        var run = PacerRun()
        // 30 fps with up to ±8 ms of jitter, from a fixed-seed generator.
        var random = SeededRandom(seed: 0x9E37_79B9_7F4A_7C15)
        var offsets: [MediaDuration] = []
        for k in 0..<300 {
            let jitter = Int64.random(in: -8_000...8_000, using: &random)
            offsets.append(.microseconds(Int64(k) * 1_000_000 / 30 + 10_000 + jitter))
        }
        for offset in offsets.sorted() { run.frame(at: offset) }
        for second in 1..<9 {
            let count = run.encodes(from: s(Int64(second)), to: s(Int64(second + 1))).count
            #expect((19...21).contains(count), "second \(second): \(count) encodes")
        }
        #expect(run.longestGap(from: .zero, to: s(10)) <= targetInterval * 2)
        #expect(run.encodes(from: .zero, to: s(10)).filter { $0.source == .repeatLast }.count < 10)
    }
}
