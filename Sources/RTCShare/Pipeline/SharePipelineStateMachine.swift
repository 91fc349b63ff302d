import RTCShareCore
import RTCShareMedia
import RTCShareRTP

// The policy of one share, sans-IO: what to encode and when, how a frame is coded (keyframe or
// not, may the encoder drop it, skip it before the encoder), the bitrate the outputs and the
// encoder get, the frame rate, source stalls, memory pressure, and when the share is over.
//
// Inputs are what happened, with the time: a source frame, a host request, what a transport
// asked for, time passing, a second gone by (with the figures only the edge can read). Actions
// come out in order through `pollAction`; after every input the driver (`ShareRun`) takes them
// all before the next input (one rule for the loop, as for every sans-IO piece here). An
// `.encode` order is answered with `frameCoded` for each frame the encoder puts out and
// `encodeFinished` once it is done, before the next input.
//
// It composes the single-purpose policies, each with its own tests and reasons:
// `FramePacerStateMachine` (pacing, repeating a still screen, idle), `StallWatchdogStateMachine`,
// `KeyframeSchedule`, `FrameBudget`, `EncoderBitrate`, `ScreenFrameRate`, `MemoryGovernor`. The
// one target bitrate comes from the network output's transport, which makes it of every
// estimate under the maximum the share sets (`Transport`, `SendBitrateController`).
//
// Invariants:
// - No clock, socket, thread or random source: every time is passed in, so fake-time tests
//   drive it (SharePipelineStateMachineTests).
// - Nothing after `.finish`: a finished pipeline takes inputs and puts out nothing more.
// - The action queue is reserved at start and does not grow in a running share (at most a
//   handful of actions per input).

/// The share's policy as a state machine (see the file's notes).
public struct SharePipelineStateMachine: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var framesPerSecond: Int
        /// The frame rate a still screen falls to (nil: it keeps the full rate).
        public var idleFramesPerSecond: Int?
        public var stallThreshold: MediaDuration
        /// Periodic keyframes for receivers that never ask; nil: none.
        public var keyframeInterval: MediaDuration?
        /// The configured (or host's) video bitrate: the ceiling every estimate lowers from.
        public var maximumBitrateKbps: Int
        public var duration: MediaDuration?
        /// A live source (a screen, a producer) has a stall watchdog; a file does not.
        public var sourceIsLive: Bool
        /// The resident size at which the memory governor gives way; nil: no governor.
        public var memorySoftLimitBytes: Int?
        /// Whether the governor may shrink the picture (a share with a transform stage whose
        /// encoder's start-up pages are given back).
        public var canResize: Bool
        public var outputSize: PictureSize
        /// Zero-hertz: once the picture has stood still this long (no source frame), a repeat of
        /// it is not encoded, but for one each `ZeroHertz.refresh`; nil: every repeat is encoded.
        public var zeroHertz: ZeroHertz? = ZeroHertz()
        /// Whether the encoder is let go while a lost connection is made again (`.releaseEncoder`
        /// as soon as the loss is heard of, `.restoreEncoder` once an output takes video): for
        /// a share whose one output is that connection and whose encoder's start costs little
        /// (VP8 with its start-up zero-fill left out), so the reconnect's HTTP and handshake do
        /// not stand on its buffers; the connection that comes back starts with a keyframe anyway.
        public var releasesEncoderWhileReconnecting = false

        public init(framesPerSecond: Int, idleFramesPerSecond: Int? = nil, stallThreshold: MediaDuration = .seconds(1),
                    keyframeInterval: MediaDuration? = nil, maximumBitrateKbps: Int, duration: MediaDuration? = nil,
                    sourceIsLive: Bool = true, memorySoftLimitBytes: Int? = nil, canResize: Bool = false,
                    outputSize: PictureSize, releasesEncoderWhileReconnecting: Bool = false) {
            self.framesPerSecond = framesPerSecond
            self.idleFramesPerSecond = idleFramesPerSecond
            self.stallThreshold = stallThreshold
            self.keyframeInterval = keyframeInterval
            self.maximumBitrateKbps = maximumBitrateKbps
            self.duration = duration
            self.sourceIsLive = sourceIsLive
            self.memorySoftLimitBytes = memorySoftLimitBytes
            self.canResize = canResize
            self.outputSize = outputSize
            self.releasesEncoderWhileReconnecting = releasesEncoderWhileReconnecting
        }
    }

    /// When a still picture stops being encoded again (`Configuration.zeroHertz`). Only a
    /// source that says its picture is unchanged (a heartbeat: X11's DAMAGE saw nothing drawn,
    /// testsrc's still stretch) counts as still: one that answers nothing is stalled, and the
    /// filler holds the rate for it while the watchdog restarts it. Repeats of an
    /// unchanged frame refine it for a while (the encoder spends the rate on what it coded
    /// coarsely), then cost an encode each for nearly nothing: a still 720p screen took 0.16 CPU
    /// seconds a second to send 30 near-empty frames. After `settle` only one repeat in each
    /// `refresh` is encoded (a near-empty frame): it keeps the stream alive for receivers and
    /// servers that judge a share by its packets, and ends a loss of the frame before it, whose
    /// last packet nobody would otherwise miss. A keyframe (asked for or periodic) always goes.
    public struct ZeroHertz: Sendable, Equatable {
        /// How long without a source frame before repeats stop: the encoder has refined the
        /// picture by then (a coarse 720p keyframe reaches its finest quantizer in ~0.5 s).
        public var settle: MediaDuration = .seconds(2)
        /// One repeat is still encoded this often (libwebrtc's screenshare re-sends about once
        /// a second too).
        public var refresh: MediaDuration = .seconds(1)

        public init(settle: MediaDuration = .seconds(2), refresh: MediaDuration = .seconds(1)) {
            self.settle = settle
            self.refresh = refresh
        }
    }

    /// How the frame of an `.encode` order is to be coded.
    public enum Keyframe: Sendable, Equatable {
        case no
        /// A keyframe if the encoder's request limit allows (a receiver's request, a periodic one).
        case requested
        /// A keyframe whatever the limit says (media just started to flow to a new receiver).
        case forced
    }

    /// Encode the frame the source delivered last (or the one kept from before: a repeat).
    public struct EncodeOrder: Sendable, Equatable {
        public var at: MediaTime
        /// 90 kHz, from the capture clock (no random offset: each RTP sender adds its own).
        public var mediaTimestamp: UInt32
        public var keyframe: Keyframe
        /// Whether the encoder's rate control may drop it.
        public var mayDrop: Bool
        /// The pacer sends the kept frame again (a still screen).
        public var isRepeat: Bool
        /// Coded whatever it costs: the picture has gone too long without a coded frame.
        public var againstLongGap: Bool
        /// Zero-hertz for any source: when not a macroblock of the source's new picture changed
        /// lately (`VideoStage`'s change map), nothing need be encoded. False for a repeat, a
        /// keyframe, and when a frame went out longer than `ZeroHertz.refresh` ago (the still
        /// picture is sent again then).
        public var skipIfUnchanged: Bool = false
    }

    public enum Action: Sendable, Equatable {
        case encode(EncodeOrder)
        /// A frame skipped before the encoder (over its budget): the encoder is told, so it
        /// sizes the next frame for one frame interval (`VideoEncoder.noteSkipped`).
        case skipped(frameIntervalMicroseconds: Int64)
        /// The share's bitrate (configured or the host's): the outputs' transports make their
        /// target under it.
        case setOutputMaximum(kbps: Int)
        case setEncoderBitrate(kbps: Int)
        /// Keyframes capped harder (the path is untried or holds the rate down) or not.
        case setKeyframeCap(constrained: Bool)
        case restartSource
        /// The memory governor shrank the picture: a new encoder at this size.
        case resize(PictureSize)
        /// The share's one output lost its connection and takes no video until it is made
        /// again: the encoder's memory goes back (`Configuration.releasesEncoderWhileReconnecting`).
        case releaseEncoder
        /// An output takes video again: the encoder is made anew (its first frame a keyframe).
        case restoreEncoder
        case event(ShareEvent)
        /// The share is over; nothing comes after this.
        case finish(FinishReason)
    }

    /// What the capture side reports, read by the driver from the capture thread's counters.
    public struct SourceProgress: Sendable, Equatable {
        public var heartbeats: Int
        public var restarts: Int
        public var ended: Bool
        public var failure: String?
        /// Frames still waiting in the ring (a source that ended is over once they are taken).
        public var framesWaiting: Int

        public init(heartbeats: Int = 0, restarts: Int = 0, ended: Bool = false, failure: String? = nil,
                    framesWaiting: Int = 0) {
            self.heartbeats = heartbeats
            self.restarts = restarts
            self.ended = ended
            self.failure = failure
            self.framesWaiting = framesWaiting
        }
    }

    /// How long after media starts the path counts as untried (keyframes capped harder).
    public static let untriedPath = MediaDuration.seconds(2)

    public let configuration: Configuration
    public let startedAt: MediaTime
    /// The counters of the share (the driver adds what only it sees: audio, ring drops, wake-ups).
    public internal(set) var stats = ShareStats()
    public internal(set) var isPaused = false
    public internal(set) var finished: FinishReason?
    /// The picture size in force (the governor may lower it).
    public internal(set) var outputSize: PictureSize

    var pacer: FramePacerStateMachine
    var watchdog: StallWatchdogStateMachine
    var keyframes: KeyframeSchedule
    var frameBudget = FrameBudget()
    var rate: ShareRate
    var encoderBitrate = EncoderBitrate()
    var governor: MemoryGovernor?
    var actions: [Action] = []
    var outputsAcceptVideo = true
    /// The encoder was let go for a reconnect and not made again yet.
    public internal(set) var encoderReleased = false
    /// Set when media starts flowing: the next frame is a keyframe whatever the limit says.
    var keyframeNow = false
    var hostKeyframePending = false
    /// When the encoder last coded a frame (`ScreenFrameRate.mayDrop`).
    var lastCodedAt: MediaTime?
    /// Until then the path has not shown it takes the configured rate: the first keyframes go out
    /// before any feedback (and a server asks for several at the start); at the configured rate's
    /// cap each is a burst a thin path's queue cannot take (a 140 KB keyframe into 1 Mbit/s with a
    /// 250 ms queue). Media start (a WHIP connection) moves it.
    var pathTriedAt: MediaTime
    /// The receiver's last reported video loss (0...1), for the keyframe hold.
    var reportedLoss: Double?
    var keyframeCapConstrained: Bool?
    /// The last source frame, the last time the source said its picture is unchanged, and the
    /// last repeat ordered encoded (zero-hertz).
    var lastSourceFrameAt: MediaTime?
    var lastUnchangedAt: MediaTime?
    var lastRepeatOrderedAt: MediaTime?
    /// Repeats of a still picture not encoded (zero-hertz).
    public internal(set) var repeatsNotEncoded = 0
    /// Pictures not encoded because no macroblock had changed lately (`pictureUnchanged`).
    public internal(set) var unchangedNotEncoded = 0
    var seconds: SecondBookkeeping
    var sourceSeen = SourceProgress()

    public init(configuration: Configuration, startedAt: MediaTime) {
        self.configuration = configuration
        self.startedAt = startedAt
        outputSize = configuration.outputSize
        pacer = FramePacerStateMachine(configuration: .init(
            targetFramesPerSecond: configuration.framesPerSecond,
            idleFramesPerSecond: configuration.idleFramesPerSecond))
        watchdog = StallWatchdogStateMachine(configuration: .init(stallThreshold: configuration.stallThreshold),
                                             startedAt: startedAt)
        keyframes = KeyframeSchedule(periodicMicroseconds: configuration.keyframeInterval?.microseconds)
        rate = ShareRate(maximumKbps: configuration.maximumBitrateKbps)
        governor = configuration.memorySoftLimitBytes.map {
            MemoryGovernor(limitBytes: $0, framesPerSecond: configuration.framesPerSecond,
                           outputSize: configuration.outputSize, canResize: configuration.canResize)
        }
        pathTriedAt = startedAt + Self.untriedPath
        seconds = SecondBookkeeping(firstAt: startedAt + .seconds(1), targetKbps: rate.targetKbps)
        actions.reserveCapacity(16)
        stats.targetBitrateKbps = rate.targetKbps
        stats.encoderBitrateKbps = rate.targetKbps
        stats.targetFramesPerSecond = pacer.framesPerSecond
        push(.setOutputMaximum(kbps: rate.maximumKbps))
        applyRate(at: startedAt)
        push(.event(.started))
    }

    /// The next action to carry out, in order; nil when there is none.
    public mutating func pollAction() -> Action? {
        actions.isEmpty ? nil : actions.removeFirst()
    }

    mutating func push(_ action: Action) {
        guard finished == nil else { return }
        if case .finish(let reason) = action { finished = reason }
        actions.append(action)
    }

    // MARK: Host requests

    /// The host (or a signal) asked the share to stop, with its reason if it gave one.
    public mutating func stop(reason: String?) {
        push(.finish(reason.map { .stoppedByHost($0) } ?? .stopped))
    }

    /// Pause or resume; a resumed share starts again with a keyframe.
    public mutating func setPaused(_ paused: Bool, at now: MediaTime) {
        guard paused != isPaused else { return }
        isPaused = paused
        push(.event(paused ? .paused : .resumed))
        if !paused { hostKeyframePending = true }
    }

    /// The host set the video bitrate: the new ceiling every estimate lowers from (the
    /// transports start their estimates again from it and report the target they make).
    public mutating func setMaximumBitrate(kbps: Int, at now: MediaTime) {
        rate.setMaximum(kbps: kbps)
        push(.setOutputMaximum(kbps: rate.maximumKbps))
        applyRate(at: now)
    }

    /// The host asked for a keyframe; served when not paused.
    public mutating func keyframeRequested(at now: MediaTime) {
        hostKeyframePending = true
    }

    // MARK: Source

    /// A frame from the source arrived (and is kept by the driver, unless paused).
    public mutating func frameArrived(at now: MediaTime, captureTime: MediaTime, orientation: Orientation) {
        if configuration.sourceIsLive { watchdogAction(watchdog.frameArrived(at: now)) }
        if isPaused {
            stats.droppedWhilePaused += 1
            return
        }
        stats.sourceFrames += 1
        lastSourceFrameAt = now
        pacerAction(pacer.frameArrived(at: now, captureTime: captureTime, orientation: orientation.rawValue,
                                       contentChanged: true), at: now)
    }

    // MARK: Time

    /// Time passed: the end of the duration, the host's keyframe, the pacer's next frame, a
    /// keyframe the schedule held back, the source's watchdog and its end.
    public mutating func tick(at now: MediaTime, source: SourceProgress) {
        endIfDurationPassed(at: now)
        guard finished == nil else { return }
        if !isPaused {
            if hostKeyframePending {
                hostKeyframePending = false
                pacerAction(pacer.keyframeRequested(at: now), at: now)
            }
            if let wake = pacer.nextWakeup, wake <= now { pacerAction(pacer.tick(at: now), at: now) }
            if keyframes.takeRequest(at: now.microseconds) { pacerAction(pacer.keyframeRequested(at: now), at: now) }
        }
        sourceProgressed(source, at: now)
    }

    /// The share's duration is over at `now`: it finishes (the driver asks before it takes the
    /// frames waiting, so none is encoded past the end).
    public mutating func endIfDurationPassed(at now: MediaTime) {
        if let duration = configuration.duration, now - startedAt >= duration { push(.finish(.durationReached)) }
    }

    /// When the pipeline next has something to do, without any input (the driver also waits for
    /// frames, feedback, audio and its outputs' timers).
    public var nextWakeup: MediaTime {
        var wake = seconds.nextAt
        if let duration = configuration.duration, startedAt + duration < wake { wake = startedAt + duration }
        if !isPaused, let p = pacer.nextWakeup, p < wake { wake = p }
        if configuration.sourceIsLive, let w = watchdog.nextWakeup, w < wake { wake = w }
        if !isPaused, let k = keyframes.nextDeadline, k < wake.microseconds {
            wake = MediaTime(microseconds: max(k, startedAt.microseconds))
        }
        return wake
    }

    private mutating func sourceProgressed(_ source: SourceProgress, at now: MediaTime) {
        if configuration.sourceIsLive {
            if source.heartbeats > sourceSeen.heartbeats {
                lastUnchangedAt = now
                watchdogAction(watchdog.frameArrived(at: now))
            }
            watchdogAction(watchdog.tick(at: now))
            if source.restarts > sourceSeen.restarts {
                watchdogAction(watchdog.restartFinished(at: now, succeeded: true))
            }
        }
        sourceSeen = source
        if source.ended {
            if let failure = source.failure {
                push(.finish(.failed(.source(failure))))
            } else if source.framesWaiting == 0 {
                push(.finish(.sourceEnded))
            }
        }
    }

    private mutating func watchdogAction(_ action: StallWatchdogStateMachine.Action?) {
        switch action {
        case .restartSource(let attempt)?:
            push(.restartSource)
            push(.event(.sourceStalled(restartAttempt: attempt)))
        case .report(.recovered(let after))?:
            push(.event(.sourceRecovered(afterMilliseconds: after.microseconds / 1000)))
        case .report?, nil:
            break
        }
    }

    // MARK: Encoding

    /// Whether any output can take a video frame now (false while a connection is being made:
    /// nothing is encoded then, so the connection's first frame is the encoder's first, a keyframe).
    public mutating func outputsAcceptVideo(_ accept: Bool) {
        outputsAcceptVideo = accept
        if accept, encoderReleased {
            encoderReleased = false
            push(.restoreEncoder)
        }
    }

    private mutating func pacerAction(_ action: FramePacerStateMachine.Action?, at now: MediaTime) {
        switch action {
        case .encode(let which, _, let timestamp, let forceKeyframe, _)?:
            if which == .repeatLast, !forceKeyframe, stillEnoughToSkip(at: now) {
                repeatsNotEncoded += 1
                // The encoder is told, so the next frame it gets is sized for one frame
                // interval, not for the whole still stretch (a burst a thin path cannot take).
                push(.skipped(frameIntervalMicroseconds: 1_000_000 / Int64(max(pacer.framesPerSecond, 1))))
                return
            }
            if which == .repeatLast { lastRepeatOrderedAt = now }
            order(at: now, mediaTimestamp: timestamp, forceKeyframe: forceKeyframe, isRepeat: which == .repeatLast)
        case .dropSourceFrame(let why)?:
            if why == .tooFast { stats.droppedTooFast += 1 }
        case nil:
            break
        }
    }

    /// Zero-hertz: the picture has stood still for the settle time (and the source said so
    /// within the stall threshold), a repeat went out less than the refresh interval ago, and no
    /// periodic keyframe is due.
    private func stillEnoughToSkip(at now: MediaTime) -> Bool {
        guard let zero = configuration.zeroHertz, let last = lastSourceFrameAt, now - last >= zero.settle,
              let unchanged = lastUnchangedAt, unchanged >= last, now - unchanged < configuration.stallThreshold,
              !keyframeNow, !keyframes.periodicDue(at: now.microseconds) else { return false }
        guard let repeated = lastRepeatOrderedAt, repeated > last else { return false }
        return now - repeated < zero.refresh
    }

    /// Decides how the kept frame is coded: a keyframe or not, whether the encoder may drop it,
    /// or skipped here because the encoder is too far ahead of its ask.
    private mutating func order(at now: MediaTime, mediaTimestamp: UInt32, forceKeyframe: Bool, isRepeat: Bool) {
        guard outputsAcceptVideo else {
            stats.notEncodedConnecting += 1
            return
        }
        let wantsKeyframe = forceKeyframe || keyframes.periodicDue(at: now.microseconds)
        // A streak of encoder drops is a freeze: the frame that would make it too long is coded
        // whatever it costs.
        let frameInterval = 1_000_000 / Int64(max(pacer.framesPerSecond, 1))
        let gapForces = !ScreenFrameRate.mayDrop(
            sinceLastCoded: lastCodedAt.map { now.microseconds - $0.microseconds }, frameInterval: frameInterval)
        let mayDrop = !keyframeNow && !wantsKeyframe && !gapForces
        // Skipped for the budget only while the path holds the rate down: a REMB that follows
        // what an application-limited sender sent (aiortc's fell to ~50 kbit/s behind a still
        // testsrc) would otherwise hold back the frames after a still picture on a clean path.
        if mayDrop, rate.pathHoldsTarget,
           !frameBudget.allows(at: now.microseconds, askKbps: stats.encoderBitrateKbps) {
            stats.droppedByEncoder += 1
            stats.skippedOverBudget += 1
            push(.skipped(frameIntervalMicroseconds: frameInterval))
            return
        }
        let keyframe: Keyframe = keyframeNow ? .forced : (wantsKeyframe ? .requested : .no)
        keyframeNow = false
        var skipIfUnchanged = false
        // A repeat is the filler's: for a stalled source it holds the rate (the watchdog restarts
        // the source meanwhile); a still one is handled by `stillEnoughToSkip`.
        if keyframe == .no, !isRepeat, let zero = configuration.zeroHertz, let coded = lastCodedAt {
            skipIfUnchanged = now - coded < zero.refresh
        }
        push(.encode(EncodeOrder(at: now, mediaTimestamp: mediaTimestamp, keyframe: keyframe, mayDrop: mayDrop,
                                 isRepeat: isRepeat, againstLongGap: gapForces, skipIfUnchanged: skipIfUnchanged)))
    }

    /// `order` was not encoded: nothing in the picture had changed lately. The encoder is
    /// told, so the next frame it gets is sized for one frame interval, not for the stretch.
    public mutating func pictureUnchanged(_ order: EncodeOrder) {
        unchangedNotEncoded += 1
        push(.skipped(frameIntervalMicroseconds: 1_000_000 / Int64(max(pacer.framesPerSecond, 1))))
    }

    /// The encoder put out a frame of `bytes` for the order being carried out.
    public mutating func frameCoded(bytes: Int, isKeyframe: Bool, at now: MediaTime) {
        stats.encodedBytes += UInt64(bytes)
        frameBudget.coded(bytes: bytes, isKeyframe: isKeyframe, at: now.microseconds, askKbps: stats.encoderBitrateKbps)
        if isKeyframe {
            stats.keyframes += 1
            keyframes.keyframeSent(at: now.microseconds)
        }
    }

    /// The encoder is done with `order`: it coded the frame (`delivered`) or its rate control
    /// dropped it.
    public mutating func encodeFinished(_ order: EncodeOrder, delivered: Bool) {
        guard delivered else {
            stats.droppedByEncoder += 1
            return
        }
        lastCodedAt = order.at
        if order.againstLongGap { stats.codedAgainstDrop += 1 }
        stats.encodedFrames += 1
        if order.isRepeat { stats.repeatedFrames += 1 }
    }
}
