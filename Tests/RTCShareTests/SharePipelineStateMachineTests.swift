import RTCShareCore
import RTCShareMedia
import RTCShareRTP
import Testing
@testable import RTCShare

/// The share's policy in fake time: no clock, no encoder, no socket. Each test feeds what
/// happened and checks the actions, in order, the way `ShareSession.run` carries them out.
@Suite struct SharePipelineStateMachineTests {
    typealias Machine = SharePipelineStateMachine
    static let t0 = MediaTime(microseconds: 1_000_000)

    static func machine(fps: Int = 20, kbps: Int = 2500, duration: MediaDuration? = nil, live: Bool = true,
                        memoryLimit: Int? = nil, canResize: Bool = false, releasesEncoder: Bool = false) -> Machine {
        Machine(configuration: .init(framesPerSecond: fps, maximumBitrateKbps: kbps, duration: duration,
                                     sourceIsLive: live, memorySoftLimitBytes: memoryLimit, canResize: canResize,
                                     outputSize: PictureSize(width: 1280, height: 720),
                                     releasesEncoderWhileReconnecting: releasesEncoder),
                startedAt: t0)
    }

    static func actions(_ m: inout Machine) -> [Machine.Action] {
        var out: [Machine.Action] = []
        while let a = m.pollAction() { out.append(a) }
        return out
    }

    static func orders(_ actions: [Machine.Action]) -> [Machine.EncodeOrder] {
        actions.compactMap { if case .encode(let o) = $0 { o } else { nil } }
    }

    /// Carries out an order as an encoder would that always codes: `bytes` a frame.
    static func code(_ m: inout Machine, _ order: Machine.EncodeOrder, bytes: Int = 1000) {
        m.frameCoded(bytes: bytes, isKeyframe: order.keyframe != .no, at: order.at)
        m.encodeFinished(order, delivered: true)
    }

    static func at(_ ms: Int64) -> MediaTime { t0 + .microseconds(ms * 1000) }

    @Test func itStartsWithTheTargetAndACappedKeyframeThenSaysStarted() {
        var m = Self.machine()
        #expect(Self.actions(&m) == [.setOutputMaximum(kbps: 2500),
                                     .setKeyframeCap(constrained: true), .event(.started)])
    }

    @Test func theFirstFrameIsARequestedKeyframeAndAStillScreenIsRepeated() {
        var m = Self.machine()
        _ = Self.actions(&m)
        m.frameArrived(at: Self.t0, captureTime: Self.t0, orientation: .up)
        let first = Self.orders(Self.actions(&m))
        #expect(first.count == 1)
        #expect(first.first?.keyframe == .requested)
        #expect(first.first?.isRepeat == false)
        Self.code(&m, first[0])
        // No new frame: the pacer repeats the kept one once a frame and a half has gone by
        // without one (20 fps: 75 ms), and says so in its wake-up.
        m.tick(at: Self.at(74), source: .init())
        #expect(Self.orders(Self.actions(&m)).isEmpty)
        #expect(m.nextWakeup == Self.at(75))
        m.tick(at: Self.at(75), source: .init())
        let repeats = Self.orders(Self.actions(&m))
        #expect(repeats.count == 1)
        #expect(repeats.first?.isRepeat == true)
        #expect(repeats.first?.keyframe == Machine.Keyframe.no)
        Self.code(&m, repeats[0])
        #expect(m.stats.encodedFrames == 2)
        #expect(m.stats.repeatedFrames == 1)
        #expect(m.stats.keyframes == 1)
    }

    /// Zero-hertz: a still picture (the source says "unchanged" every 100 ms) is repeated (and
    /// refined) for the settle time, then only one repeat a second is encoded; the others cost no
    /// encode, the encoder is told of each (so the next frame is sized for one interval), a
    /// keyframe asked for still goes, and the next source frame goes at once. A stalled source
    /// (it says nothing) keeps every repeat: the filler holds the rate while it is restarted.
    @Test func aStillPictureStopsBeingEncodedAfterTheSettleTimeButForOneRepeatASecond() {
        func run(zeroHertz: Machine.ZeroHertz?, heartbeats: Bool = true)
            -> (repeats: [MediaTime], skipped: Int, keyframeAt: MediaTime?, afterStill: Machine.EncodeOrder?,
                machine: Machine) {
            var m = Self.machine()
            var config = m.configuration
            config.zeroHertz = zeroHertz
            m = Machine(configuration: config, startedAt: Self.t0)
            _ = Self.actions(&m)
            var repeats: [MediaTime] = [], skipped = 0, keyframeAt: MediaTime?
            var unchanged = 0
            // One second of frames at 20 fps, then nothing for five seconds.
            for ms in stride(from: Int64(0), to: 6000, by: 5) {
                let now = Self.at(ms)
                if ms < 1000 && ms % 50 == 0 { m.frameArrived(at: now, captureTime: now, orientation: .up) }
                if ms >= 1000 && ms % 100 == 0 && heartbeats { unchanged += 1 }
                if ms == 4500 { m.keyframeRequested(at: now) }
                m.tick(at: now, source: .init(heartbeats: unchanged))
                for action in Self.actions(&m) {
                    switch action {
                    case .encode(let order):
                        if order.isRepeat {
                            repeats.append(order.at)
                            if order.keyframe != .no { keyframeAt = order.at }
                        }
                        Self.code(&m, order, bytes: order.isRepeat ? 30 : 1000)
                    case .skipped(let interval):
                        #expect(interval == 50_000)
                        skipped += 1
                    default: break
                    }
                }
            }
            // The picture changes again: coded at once.
            m.frameArrived(at: Self.at(6000), captureTime: Self.at(6000), orientation: .up)
            let after = Self.orders(Self.actions(&m)).first
            return (repeats, skipped, keyframeAt, after, m)
        }
        let zero = run(zeroHertz: .init(settle: .seconds(2), refresh: .seconds(1)))
        let every = run(zeroHertz: nil)
        let stalled = run(zeroHertz: .init(settle: .seconds(2), refresh: .seconds(1)), heartbeats: false)
        #expect(stalled.skipped == 0 && stalled.repeats.count == every.repeats.count,
                "stalled: \(stalled.repeats.count) repeats, \(stalled.skipped) skipped")
        // Without it: a repeat every 50 ms for the 5 s still stretch.
        #expect(every.repeats.count >= 95 && every.skipped == 0, "\(every.repeats.count) repeats")
        // With it: repeats for the 2 s settle (the last frame came at 950 ms), then one a second,
        // and the keyframe asked for at 4.5 s.
        let settled = zero.repeats.filter { $0 >= Self.at(2950) }
        let refining = zero.repeats.filter { $0 < Self.at(2950) }
        #expect(refining.count >= 38 && refining.count <= 41, "\(refining.count) repeats while settling")
        #expect(zero.keyframeAt.map { $0 >= Self.at(4500) && $0 < Self.at(4600) } == true)
        let refreshes = settled.filter { $0 != zero.keyframeAt }
        #expect(refreshes.count >= 2 && refreshes.count <= 4, "\(refreshes.map(\.microseconds))")
        // One a second, counted from the last repeat that went (the keyframe's included).
        for (a, b) in zip(settled, settled.dropFirst()) where b != zero.keyframeAt {
            #expect(b - a >= .seconds(1) && b - a < .milliseconds(1100), "\(a.microseconds) → \(b.microseconds)")
        }
        #expect(zero.skipped == zero.machine.repeatsNotEncoded)
        #expect(zero.skipped + settled.count + refining.count == every.repeats.count)
        #expect(zero.afterStill?.isRepeat == false)
        #expect(zero.afterStill?.at == Self.at(6000))
        #expect(zero.machine.stats.repeatedFrames == zero.repeats.count)
    }

    /// Zero-hertz for a source that cannot say its picture is unchanged (a file, a pipe): each
    /// order may be left uncoded when nothing in the picture changed lately (the stage's change
    /// map decides), but for one a second, which goes whatever; keyframes always go. The
    /// encoder is told of each picture left out.
    @Test func anUnchangedPictureMayGoUncodedButForOneASecond() {
        var m = Self.machine()
        _ = Self.actions(&m)
        var coded: [MediaTime] = [], mayBeLeft = 0, left = 0, skippedTold = 0
        // Frames at 20 fps for 4 s; from 0.5 s on the picture no longer changes.
        for ms in stride(from: Int64(0), to: 4000, by: 50) {
            let now = Self.at(ms)
            m.frameArrived(at: now, captureTime: now, orientation: .up)
            if ms == 2000 { m.keyframeRequested(at: now) }
            m.tick(at: now, source: .init())
            for action in Self.actions(&m) {
                switch action {
                case .encode(let order):
                    if order.keyframe != .no { #expect(!order.skipIfUnchanged, "a keyframe always goes") }
                    if order.skipIfUnchanged { mayBeLeft += 1 }
                    if order.skipIfUnchanged && ms >= 500 {
                        left += 1
                        m.pictureUnchanged(order)
                    } else {
                        coded.append(order.at)
                        Self.code(&m, order)
                    }
                case .skipped(let interval):
                    #expect(interval == 50_000)
                    skippedTold += 1
                default: break
                }
            }
        }
        skippedTold += Self.actions(&m).filter { if case .skipped = $0 { true } else { false } }.count
        #expect(mayBeLeft >= 70, "every order but the refreshes and keyframes may be left: \(mayBeLeft)")
        let still = coded.filter { $0 >= Self.at(500) }
        // A second after the last coded frame (450 ms), the keyframe asked for at 2 s, and a
        // second after that.
        #expect(still == [Self.at(1450), Self.at(2000), Self.at(3000)], "\(still.map(\.microseconds))")
        #expect(left == m.unchangedNotEncoded && skippedTold == left && left >= 60)
        #expect(m.stats.encodedFrames == coded.count)
    }

    @Test func nothingIsEncodedWhileNoOutputCanTakeItAndTheConnectionsFirstFrameIsForced() {
        var m = Self.machine()
        _ = Self.actions(&m)
        m.outputsAcceptVideo(false)
        m.frameArrived(at: Self.t0, captureTime: Self.t0, orientation: .up)
        #expect(Self.orders(Self.actions(&m)).isEmpty)
        #expect(m.stats.notEncodedConnecting == 1)
        // The connection comes up: media starts, and the next frame is a keyframe whatever
        // the encoder's request limit says.
        var started = TransportRequests(keyframe: true)
        started.mediaStarted = true
        m.transport(started, output: "whip", roundTripMicroseconds: nil, at: Self.at(100))
        m.outputsAcceptVideo(true)
        _ = Self.actions(&m)
        m.frameArrived(at: Self.at(120), captureTime: Self.at(120), orientation: .up)
        let orders = Self.orders(Self.actions(&m))
        #expect(orders.map(\.keyframe) == [.forced])
        #expect(orders.first?.mayDrop == false)
    }

    @Test func aPausedShareLetsFramesGoAndResumesWithAKeyframe() {
        var m = Self.machine()
        _ = Self.actions(&m)
        m.frameArrived(at: Self.t0, captureTime: Self.t0, orientation: .up)
        Self.orders(Self.actions(&m)).forEach { Self.code(&m, $0) }
        m.setPaused(true, at: Self.at(10))
        #expect(Self.actions(&m) == [.event(.paused)])
        m.frameArrived(at: Self.at(60), captureTime: Self.at(60), orientation: .up)
        m.tick(at: Self.at(200), source: .init(heartbeats: 1))
        #expect(Self.orders(Self.actions(&m)).isEmpty)
        #expect(m.stats.droppedWhilePaused == 1)
        m.setPaused(false, at: Self.at(300))
        #expect(Self.actions(&m) == [.event(.resumed)])
        m.tick(at: Self.at(300), source: .init(heartbeats: 1))
        let orders = Self.orders(Self.actions(&m))
        #expect(orders.count == 1)
        #expect(orders.first?.keyframe == .requested)
    }

    @Test func theDurationEndsTheShareAndNothingComesAfter() {
        var m = Self.machine(duration: .seconds(2))
        _ = Self.actions(&m)
        m.endIfDurationPassed(at: Self.at(1999))
        #expect(Self.actions(&m).isEmpty)
        m.endIfDurationPassed(at: Self.at(2000))
        #expect(Self.actions(&m) == [.finish(.durationReached)])
        m.frameArrived(at: Self.at(2001), captureTime: Self.at(2001), orientation: .up)
        m.stop(reason: "late")
        #expect(Self.actions(&m).isEmpty)
        #expect(m.finished == .durationReached)
    }

    @Test func aHostStopSaysWhy() {
        var m = Self.machine()
        _ = Self.actions(&m)
        m.stop(reason: "the host app closed")
        #expect(Self.actions(&m) == [.finish(.stoppedByHost("the host app closed"))])
    }

    /// What a transport reports once its rate control made a target of the estimates.
    static func target(_ kbps: Int, maximum: Int = 2500, pathHolds: Bool = false) -> TransportRequests {
        var requests = TransportRequests()
        requests.targetKbps = kbps
        requests.maximumKbps = maximum
        requests.pathHoldsTarget = pathHolds
        return requests
    }

    @Test func theTransportsTargetBecomesTheEncodersAsk() {
        var m = Self.machine()
        _ = Self.actions(&m)
        m.transport(Self.target(800), output: "peer", roundTripMicroseconds: nil, at: Self.at(500))
        #expect(Self.actions(&m).contains(.setEncoderBitrate(kbps: 800)))
        #expect(m.stats.targetBitrateKbps == 800)
        // A move under 2 % of the ask is not worth reconfiguring the encoder for.
        m.transport(Self.target(790), output: "peer", roundTripMicroseconds: nil, at: Self.at(600))
        #expect(!Self.actions(&m).contains { if case .setEncoderBitrate = $0 { true } else { false } })
        // The host's new maximum goes down to the outputs; the transport's next target follows.
        m.setMaximumBitrate(kbps: 600, at: Self.at(700))
        let actions = Self.actions(&m)
        #expect(actions.contains(.setOutputMaximum(kbps: 600)))
        #expect(actions.contains(.setEncoderBitrate(kbps: 600)))
    }

    @Test func withoutANetworkOutputTheHostsMaximumIsTheTarget() {
        var m = Self.machine()
        _ = Self.actions(&m)
        m.setMaximumBitrate(kbps: 1200, at: Self.at(100))
        #expect(Self.actions(&m) == [.setOutputMaximum(kbps: 1200), .setEncoderBitrate(kbps: 1200)])
        #expect(m.stats.targetBitrateKbps == 1200)
    }

    @Test func anUntriedPathsLowStartIsSaid() {
        var m = Self.machine()
        _ = Self.actions(&m)
        var started = Self.target(1000)
        started.mediaStarted = true
        started.keyframe = true
        started.startedBelowMaximum = true
        m.transport(started, output: "whip", roundTripMicroseconds: nil, at: Self.at(100))
        #expect(Self.actions(&m).contains(.event(.notice(
            "rate: no transport-wide feedback on this path: starting at 1000 kbit/s, × 1.5 a clean receiver report"))))
    }

    @Test func aReceiversGoodbyeIsAnEventAndTheShareGoesOn() {
        var m = Self.machine()
        _ = Self.actions(&m)
        m.transport(TransportRequests(peerLeft: true), output: "peer 127.0.0.1:5004", roundTripMicroseconds: nil,
                    at: Self.at(100))
        #expect(Self.actions(&m) == [.event(.receiverLeft(output: "peer 127.0.0.1:5004"))])
        #expect(m.finished == nil)
    }

    @Test func aStalledLiveSourceIsRestartedAndItsRecoveryReported() {
        var m = Self.machine()
        _ = Self.actions(&m)
        m.frameArrived(at: Self.t0, captureTime: Self.t0, orientation: .up)
        _ = Self.actions(&m)
        // Nothing for longer than the stall threshold (1 s): stalled, then (the next tick, at
        // once: the watchdog's wake-up is due) restarted.
        m.tick(at: Self.at(1100), source: .init())
        m.tick(at: Self.at(1100), source: .init())
        let actions = Self.actions(&m)
        #expect(actions.contains(.restartSource))
        #expect(actions.contains(.event(.sourceStalled(restartAttempt: 1))))
        m.tick(at: Self.at(1200), source: .init(restarts: 1))
        m.frameArrived(at: Self.at(1300), captureTime: Self.at(1300), orientation: .up)
        #expect(Self.actions(&m).contains { if case .event(.sourceRecovered) = $0 { true } else { false } })
    }

    @Test func aFileSourceHasNoWatchdog() {
        var m = Self.machine(live: false)
        _ = Self.actions(&m)
        m.frameArrived(at: Self.t0, captureTime: Self.t0, orientation: .up)
        _ = Self.actions(&m)
        m.tick(at: Self.at(5000), source: .init())
        #expect(!Self.actions(&m).contains(.restartSource))
    }

    @Test func anEndedSourceFinishesOnceItsFramesAreTakenAndAFailureAtOnce() {
        var m = Self.machine()
        _ = Self.actions(&m)
        m.tick(at: Self.at(10), source: .init(ended: true, framesWaiting: 2))
        #expect(!Self.actions(&m).contains { if case .finish = $0 { true } else { false } })
        m.tick(at: Self.at(20), source: .init(ended: true, framesWaiting: 0))
        #expect(Self.actions(&m).last == .finish(.sourceEnded))

        var failing = Self.machine()
        _ = Self.actions(&failing)
        failing.tick(at: Self.at(10), source: .init(ended: true, failure: "X server gone", framesWaiting: 3))
        #expect(Self.actions(&failing).last == .finish(.failed(.source("X server gone"))))
    }

    @Test func framesOverTheEncodersBudgetAreSkippedOnlyWhileThePathHoldsTheRate() {
        var m = Self.machine()
        _ = Self.actions(&m)
        m.frameArrived(at: Self.t0, captureTime: Self.t0, orientation: .up)
        Self.orders(Self.actions(&m)).forEach { Self.code(&m, $0, bytes: 100_000) }
        // A clean path: the big frame does not hold the next one back.
        m.frameArrived(at: Self.at(50), captureTime: Self.at(50), orientation: .up)
        let clean = Self.actions(&m)
        #expect(Self.orders(clean).count == 1)
        Self.orders(clean).forEach { Self.code(&m, $0, bytes: 100_000) }
        // The path holds the rate down (the transport says so): the next frame is skipped
        // before the encoder, and the encoder is told (it sizes the next for one frame interval).
        m.transport(Self.target(300, pathHolds: true), output: "peer", roundTripMicroseconds: 40_000, at: Self.at(60))
        _ = Self.actions(&m)
        m.frameArrived(at: Self.at(100), captureTime: Self.at(100), orientation: .up)
        #expect(Self.actions(&m) == [.skipped(frameIntervalMicroseconds: 50_000)])
        #expect(m.stats.skippedOverBudget == 1)
        // But never so many in a row that the picture stands still past 300 ms.
        var coded: [Machine.EncodeOrder] = []
        for ms in stride(from: Int64(150), through: 400, by: 50) {
            m.frameArrived(at: Self.at(ms), captureTime: Self.at(ms), orientation: .up)
            coded += Self.orders(Self.actions(&m))
        }
        #expect(coded.first?.againstLongGap == true)
        #expect(coded.first.map { $0.at - Self.at(50) }.map { $0 <= .microseconds(300_000) } == true)
    }

    @Test func everySecondReportsProgressAndTheGovernorLowersTheFrameRateFirst() {
        var m = Self.machine(memoryLimit: 40 << 20, canResize: true)
        _ = Self.actions(&m)
        #expect(!m.secondDue(at: Self.at(999)))
        #expect(m.secondDue(at: Self.at(1000)))
        m.second(at: Self.at(1000), PipelineSecond(sentBytes: nil, transport: nil, residentBytes: 30 << 20,
                                                   peakResidentBytes: 31 << 20))
        let quiet = Self.actions(&m)
        #expect(quiet.count == 1)
        guard case .event(.progress(let p))? = quiet.first else {
            Issue.record("expected a progress event, got \(quiet)")
            return
        }
        #expect(p.residentBytes == 30 << 20)
        #expect(p.stats.elapsed == .seconds(1))
        m.second(at: Self.at(2000), PipelineSecond(sentBytes: nil, transport: nil, residentBytes: 41 << 20,
                                                   peakResidentBytes: 41 << 20))
        let pressed = Self.actions(&m)
        #expect(pressed.contains(.event(.memoryPressure(residentBytes: 41 << 20, limitBytes: 40 << 20,
                                                        step: .frameRate(10)))))
        #expect(m.stats.targetFramesPerSecond == 10)
        #expect(!pressed.contains { if case .resize = $0 { true } else { false } })
    }

    /// A reconnect's new transport counts the bytes it sent from zero: the second that sees the
    /// count fall goes on (no overflow), and a reconnect is counted and reported.
    @Test func aTransportCountingFromZeroAfterAReconnectIsTakenInStride() {
        var m = Self.machine()
        _ = Self.actions(&m)
        m.second(at: Self.at(1000), PipelineSecond(sentBytes: 900_000, transport: nil, residentBytes: 30 << 20,
                                                   peakResidentBytes: 30 << 20))
        m.connection(.reconnecting(attempt: 1, reason: "DTLS: the server closed the association",
                                   retryInMilliseconds: 1000), output: "whip")
        #expect(m.stats.reconnecting)
        m.connection(.reconnected(afterMilliseconds: 1200), output: "whip")
        m.second(at: Self.at(2000), PipelineSecond(sentBytes: 4_000, transport: nil, residentBytes: 30 << 20,
                                                   peakResidentBytes: 30 << 20))
        m.second(at: Self.at(3000), PipelineSecond(sentBytes: 60_000, transport: nil, residentBytes: 30 << 20,
                                                   peakResidentBytes: 30 << 20))
        let actions = Self.actions(&m)
        #expect(m.stats.reconnects == 1 && !m.stats.reconnecting)
        #expect(actions.contains(.event(.reconnected(output: "whip", afterMilliseconds: 1200))))
        #expect(actions.contains { if case .event(.reconnecting(output: "whip", attempt: 1, _, _)) = $0 { true } else { false } })
    }

    static func encoderActions(_ actions: [Machine.Action]) -> [Machine.Action] {
        actions.filter { $0 == .releaseEncoder || $0 == .restoreEncoder }
    }

    /// A lost connection lets the encoder go once, at once (before the event is handled, and so
    /// before the attempt to publish again), and the connection that comes back makes it again
    /// before its first frame, a forced keyframe. The first connection of a share keeps the
    /// encoder made at its start.
    @Test func aReconnectLetsTheEncoderGoAndMakesItAgainForTheKeyframe() {
        var m = Self.machine(releasesEncoder: true)
        _ = Self.actions(&m)
        m.outputsAcceptVideo(false)  // connecting at the start
        #expect(Self.encoderActions(Self.actions(&m)).isEmpty)
        m.outputsAcceptVideo(true)
        m.frameArrived(at: Self.at(50), captureTime: Self.at(50), orientation: .up)
        for order in Self.orders(Self.actions(&m)) { Self.code(&m, order) }
        m.connection(.reconnecting(attempt: 1, reason: "DTLS: the server closed the association",
                                   retryInMilliseconds: 1000), output: "whip")
        m.outputsAcceptVideo(false)
        let lost = Self.actions(&m)
        #expect(Self.encoderActions(lost) == [.releaseEncoder])
        #expect(lost.first == .releaseEncoder, "before the reconnecting event: \(lost)")
        #expect(m.encoderReleased)
        // A failed attempt says reconnecting again: nothing more to let go.
        m.connection(.reconnecting(attempt: 2, reason: "POST: 503", retryInMilliseconds: 2000), output: "whip")
        // Frames arriving meanwhile are not encoded, and nothing asks for the encoder twice.
        m.frameArrived(at: Self.at(500), captureTime: Self.at(500), orientation: .up)
        m.outputsAcceptVideo(false)
        let waiting = Self.actions(&m)
        #expect(Self.orders(waiting).isEmpty && Self.encoderActions(waiting).isEmpty)
        var started = TransportRequests(keyframe: true)
        started.mediaStarted = true
        m.connection(.reconnected(afterMilliseconds: 1200), output: "whip")
        m.transport(started, output: "whip", roundTripMicroseconds: nil, at: Self.at(1300))
        m.outputsAcceptVideo(true)
        let back = Self.actions(&m)
        #expect(Self.encoderActions(back) == [.restoreEncoder])
        #expect(!m.encoderReleased)
        m.frameArrived(at: Self.at(1350), captureTime: Self.at(1350), orientation: .up)
        let after = Self.actions(&m)
        #expect(Self.orders(after).map(\.keyframe) == [.forced])
        #expect(Self.encoderActions(after).isEmpty)
    }

    /// Where the encoder is kept (H.264, or another output beside: the configuration says so),
    /// a reconnect asks for nothing of it.
    @Test func anEncoderThatIsKeptIsNotLetGoForAReconnect() {
        var m = Self.machine(releasesEncoder: false)
        _ = Self.actions(&m)
        m.connection(.reconnecting(attempt: 1, reason: "ICE failed", retryInMilliseconds: 0), output: "whip")
        m.outputsAcceptVideo(false)
        m.connection(.reconnected(afterMilliseconds: 300), output: "whip")
        m.outputsAcceptVideo(true)
        #expect(Self.encoderActions(Self.actions(&m)).isEmpty)
        #expect(!m.encoderReleased)
    }
}
