import CCore
import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP
import Synchronization

/// One share: a source on its capture thread, and on the calling thread the pipeline — pacer
/// and filler, stall watchdog, the fused transform into encoder input, the encoder (VP8 or
/// H.264, one `VideoEncoder` either way), and the outputs.
/// All its memory is reserved before the first frame (the budget, the pools, the encoder); a
/// configuration that cannot fit is refused up front by the `MemoryPlanner`.
public final class ShareSession: Sendable {
    public let configuration: ShareConfiguration
    private let stopRequested = Atomic<Bool>(false)
    /// A bitrate change asked for from another thread (0: none pending).
    private let requestedBitrateKbps = Atomic<Int>(0)
    private let keyframeRequested = Atomic<Bool>(false)
    private let pauseRequested = Atomic<Bool>(false)
    /// Why the host stopped the share, when it said.
    private let stopReason = Mutex<String?>(nil)
    /// Wakes the running loop for a request from another thread (nil when not running).
    private let waker = Mutex<EventLoopWaker?>(nil)
    private let onEvent: @Sendable (ShareEvent) -> Void
    /// The encoder made before everything else (`prepareEncoder`), which `run` takes.
    private let preparedEncoder = Mutex<VideoEncoder?>(nil)
    /// How long after media starts the path counts as untried (keyframes capped harder).
    static let untriedPath = MediaDuration.seconds(2)

    public init(configuration: ShareConfiguration,
                onEvent: @escaping @Sendable (ShareEvent) -> Void = { _ in }) {
        self.configuration = configuration
        self.onEvent = onEvent
    }

    /// Asks a running share to stop; safe from any thread (a signal handler's thread included).
    /// A stop asked for before `run` makes `run` return at once.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        wake()
    }

    /// Stops with a reason the host gives (the share finishes with `.stoppedByHost(reason)`).
    public func stop(reason: String) {
        stopReason.withLock { $0 = reason }
        stop()
    }

    /// Pauses (true) or resumes (false) the share; safe from any thread. While paused, source
    /// frames and audio are let go of and counted, RTCP keeps the peer's session alive; a
    /// resumed share starts again with a keyframe.
    public func setPaused(_ paused: Bool) {
        pauseRequested.store(paused, ordering: .releasing)
        wake()
    }

    private func wake() { waker.withLock { $0?.wake() } }

    public var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    /// Changes the video bitrate (the ceiling the receiver's feedback may lower it from) from the
    /// next frame on; safe from any thread.
    public func setBitrate(kbps: Int) {
        requestedBitrateKbps.store(max(kbps, 1), ordering: .releasing)
        wake()
    }

    /// Asks for a keyframe (a receiver lost the picture); safe from any thread. The pacer sends
    /// the kept frame again at once as a keyframe; the encoder rate-limits such requests.
    public func requestKeyframe() {
        keyframeRequested.store(true, ordering: .releasing)
        wake()
    }

    /// Runs the share until its duration passes, `stop()` is called, or the source ends.
    /// Returns the counters; throws only for failures before anything was sent (a
    /// configuration that does not fit, an output that cannot be opened).
    ///
    /// `sinks` receive the encoded media in order (an `--output` IVF file is added from the
    /// configuration); `audio`, if any, is pumped from the same loop. The session calls each
    /// sink's `finish` once at the end, whatever the reason. `codec` is the one the outputs
    /// agreed on (a WHIP answer); nil: the configuration's choice (`auto` is VP8).
    public func run<S: VideoSource>(source: S, budget: MemoryBudget, plan: MemoryPlan,
                                    sinks extraSinks: [any MediaSink] = [],
                                    audio: (any AudioPath)? = nil,
                                    codec: VideoCodec? = nil) throws(ShareError) -> ShareStats {
        // Fixed unless the memory governor steps the size down (a share with a transform stage).
        var output = plan.outputSize
        let codec = codec ?? configuration.videoCodec.resolvedAlone
        onEvent(.starting(source: source.name, output: output, framesPerSecond: configuration.framesPerSecond,
                          codec: codec))

        // Everything the pipeline holds, reserved now.
        let sourcePool: FramePool
        let ring: FrameRing
        let outputPool: FramePool?
        let transformer: FrameTransformer?
        do {
            sourcePool = try FramePool(budget: budget, format: source.format, maxWidth: source.frameWidth,
                                       maxHeight: source.frameHeight, count: MemoryPlan.sourceSlots)
            ring = try FrameRing(pool: sourcePool, capacity: MemoryPlan.ringCapacity, policy: .dropOldest)
            if plan.needsTransform {
                outputPool = try FramePool(budget: budget, format: .i420, maxWidth: output.width,
                                           maxHeight: output.height, count: MemoryPlan.outputSlots)
                transformer = try FrameTransformer(budget: budget, maxSourceWidth: source.frameWidth,
                                                   maxSourceHeight: source.frameHeight,
                                                   maxOutputWidth: output.width, maxOutputHeight: output.height)
            } else {
                outputPool = nil
                transformer = nil
            }
        } catch {
            throw .doesNotFit("reserving frame memory: \(error)")
        }
        do {
            try source.prepare(budget: budget)
        } catch {
            throw .source(error.description)
        }
        // Optional only so it can be let go before the outputs finish (below).
        var encoder: VideoEncoder?
        if let prepared = preparedEncoder.withLock({ $0.take() }), prepared.codec == codec,
           prepared.width == output.width, prepared.height == output.height {
            encoder = consume prepared
        } else {
            // Not the one prepared (a WHIP answer chose the other codec): it is let go first.
            encoder = try makeEncoder(codec, output)
        }
        var sinks = extraSinks
        if let path = configuration.ivfPath {
            sinks.insert(try IVFSink(path: path, codec: codec, width: output.width, height: output.height), at: 0)
        }
        var sinksFinished = false
        defer {
            // A failure before the loop still closes what was opened.
            if !sinksFinished { for sink in sinks { try? sink.finish(.failed(.pipeline("not started"))) } }
        }

        // The loop waits on the sinks' sockets, the capture thread's wake-ups and the deadlines.
        let loop: EventLoop
        do {
            loop = try EventLoop()
            for sink in sinks { for fd in sink.descriptors { try loop.watch(fd, token: Int(fd)) } }
        } catch {
            throw .output("event loop: \(error)")
        }
        let loopWaker = loop.waker
        waker.withLock { $0 = loopWaker }
        defer { waker.withLock { $0 = nil } }

        // The capture thread.
        let capture = CaptureLoop()
        // The source object moves to the capture thread: from here on only that thread calls it
        // (the pipeline reads its immutable description only).
        let handOff = UncheckedBox(source)
        guard let captureThread = WorkerThread.start(name: "rtcshare-capture", {
            capture.run(handOff.value, pool: sourcePool, ring: ring, waker: loopWaker)
        }) else {
            throw .output("cannot start the capture thread")
        }
        defer {
            capture.stop()
            captureThread.join()
        }

        var pacer = FramePacerStateMachine(configuration: .init(
            targetFramesPerSecond: configuration.framesPerSecond,
            idleFramesPerSecond: configuration.idleFramesPerSecond))
        var governor = configuration.memorySoftLimitBytes.map {
            // A smaller encoder needs less only when its start-up zero pages are given back
            // too (CLI); and only a share with a transform stage can scale to it.
            MemoryGovernor(limitBytes: $0, framesPerSecond: configuration.framesPerSecond, outputSize: output,
                           canResize: transformer != nil && configuration.reclaimEncoderStartupMemory)
        }
        let startedAt = MonotonicClock.now()
        var watchdog = StallWatchdogStateMachine(
            configuration: .init(stallThreshold: configuration.stallThreshold), startedAt: startedAt)
        var stats = ShareStats()
        stats.videoCodec = codec
        stats.audioExpectedLossPercent = audio?.expectedLossPercent ?? 0
        // The video bitrate: the configured one (or the host's), lowered by the delay-based
        // estimate, REMB and loss. The sinks pace by it; the encoder is asked for it less what
        // the transport adds (`EncoderBitrate`, measured every second), and reconfigured when that moved by 2 % or more (the delay-based estimate
        // moves a little with every feedback); the frame rate gives way first when the target
        // is short and the encoder spends it (`ScreenFrameRate`, looked at every second, on the
        // target as before: asked against the smaller ask it gave up frames on paths with room).
        var rate = SendBitrateController(maximumKbps: configuration.bitrateKbps)
        var encoderBitrate = EncoderBitrate()
        stats.targetBitrateKbps = rate.targetKbps
        stats.encoderBitrateKbps = rate.targetKbps
        stats.targetFramesPerSecond = pacer.framesPerSecond
        var sinksKbps = rate.targetKbps
        for sink in sinks { sink.targetBitrateChanged(kbps: sinksKbps, maximumKbps: rate.maximumKbps, at: startedAt) }
        // What the encoder made in the last two seconds (kbit/s), for the frame-rate rule; what
        // went on the wire in the last second.
        var encodedKbps = 0
        var encodedBeforeKbps = 0
        // Seconds in a row the encoder dropped a fifth or more of its frames (a second made at a
        // target 15 % higher or more does not count), and its counts at the last second.
        var encoderDroppingSeconds = 0
        var encoderCountsAtLastSecond = (encoded: 0, dropped: 0)
        var encodedBytesAtLastSecond: UInt64 = 0
        var sentBytesAtLastSecond: UInt64? = nil
        var targetAtLastSecond = rate.targetKbps
        // The target at the encoder's last change: a change the target did not cause (the
        // overhead measured) is not counted as one.
        var targetAtLastChange = rate.targetKbps
        // Seconds the frame rate in force has held (a lowered one rises only after a few).
        var frameRateHeldSeconds = 0
        func updateFrameRate() {
            let before = pacer.framesPerSecond
            pacer.setFramesPerSecond(min(ScreenFrameRate.next(
                current: pacer.framesPerSecond, encodedKbps: encodedKbps, encodedBeforeKbps: encodedBeforeKbps,
                targetKbps: rate.targetKbps,
                configuredKbps: rate.maximumKbps, width: output.width, height: output.height,
                configured: configuration.framesPerSecond, heldSeconds: frameRateHeldSeconds,
                encoderDropping: encoderDroppingSeconds >= 2),
                governor?.frameRateCap ?? Int.max))
            frameRateHeldSeconds = pacer.framesPerSecond == before ? frameRateHeldSeconds + 1 : 0
            stats.targetFramesPerSecond = pacer.framesPerSecond
        }
        // Until this time the path has not shown it takes the configured rate: the first
        // keyframes go out before any feedback (and a server asks for several at the start), and
        // at the configured rate's cap each is a burst a thin path's queue cannot take (a 140 KB
        // keyframe into a 1 Mbit/s path with a 250 ms queue) — and more packets than some
        // receivers' jitter buffers hold. Media start (a WHIP connection) moves it.
        var pathTriedAt = startedAt + Self.untriedPath
        func applyRate(at now: MediaTime) throws(ShareError) {
            let kbps = rate.targetKbps
            if kbps != sinksKbps {
                sinksKbps = kbps
                stats.targetBitrateKbps = kbps
                for sink in sinks { sink.targetBitrateChanged(kbps: kbps, maximumKbps: rate.maximumKbps, at: now) }
            }
            // A keyframe's burst is capped harder while the path holds the rate down, and while
            // the path is untried (`pathTriedAt`).
            do { try encoder!.setKeyframeCap(constrained: kbps < rate.maximumKbps || now < pathTriedAt) } catch {
                throw .pipeline("keyframe cap: \(error)")
            }
            let ask = encoderBitrate.askKbps(target: kbps)
            let current = stats.encoderBitrateKbps
            guard ask != current, abs(ask - current) * 50 >= current || kbps == rate.maximumKbps else { return }
            do { try encoder!.setBitrate(kbps: ask) } catch { throw .pipeline("bitrate \(ask) kbit/s: \(error)") }
            stats.encoderBitrateKbps = ask
            if kbps != targetAtLastChange { stats.bitrateChanges += 1 }
            targetAtLastChange = kbps
        }
        try applyRate(at: startedAt)
        var nextProgress = startedAt + .seconds(1)
        onEvent(.started)

        // The frame the source delivered last ("kept") and the encoder input made from it.
        var kept: FrameSlot?
        var keptOrientation = Orientation.up
        var keptGeneration = 0
        // Keyframes on request (held while the path is congested) and periodic ones for a
        // receiver that never asks; the receiver's last reported loss for the hold.
        var keyframes = KeyframeSchedule(periodicMicroseconds: configuration.keyframeInterval?.microseconds)
        var reportedLoss: Double? = nil
        var encoderInput: FrameSlot?
        var inputGeneration = -1
        var restartsSeen = 0
        var heartbeatsSeen = 0
        var paused = false
        var keyframeNow = false
        var reason = FinishReason.stopped
        // When the encoder last coded a frame (for `ScreenFrameRate.mayDrop`), and what it may
        // still spend.
        var lastCodedAt: MediaTime?
        var frameBudget = FrameBudget()

        func encodeKept(at now: MediaTime, mediaTimestamp: UInt32, forceKeyframe: Bool,
                        isRepeat: Bool) throws(ShareError) {
            guard kept != nil else { return }
            // Nobody can receive it yet (a WHIP connection being made): not encoded. The
            // connection's first frame is then the encoder's first, a keyframe, instead of a
            // second keyframe after frames that were encoded only to be dropped.
            guard sinks.isEmpty || sinks.contains(where: { $0.acceptsVideo }) else {
                stats.notEncodedConnecting += 1
                return
            }
            if let outputPool, let transformer {
                if inputGeneration != keptGeneration || encoderInput == nil {
                    encoderInput = nil  // give its slot back before taking the next
                    do {
                        var next = try outputPool.acquire(format: .i420, width: output.width, height: output.height)
                        // With CVO the pixels stay as stored; the tag travels instead.
                        try transformer.apply(kept!, into: &next,
                                              orientation: configuration.signalsOrientation ? .up : nil)
                        encoderInput = consume next
                    } catch {
                        throw .pipeline("transform: \(error)")
                    }
                    inputGeneration = keptGeneration
                }
                encoderInput!.ptsMicroseconds = now.microseconds
            } else {
                kept!.ptsMicroseconds = now.microseconds
            }
            let wantsKeyframe = forceKeyframe || keyframes.periodicDue(at: now.microseconds)
            // A streak of encoder drops is a freeze: the frame that would make it too long is
            // coded whatever it costs (`ScreenFrameRate.mayDrop`). Otherwise a frame the
            // encoder cannot afford (`FrameBudget`) is skipped before it is encoded.
            let frameInterval = 1_000_000 / Int64(max(pacer.framesPerSecond, 1))
            let gapForces = !ScreenFrameRate.mayDrop(
                sinceLastCoded: lastCodedAt.map { now.microseconds - $0.microseconds }, frameInterval: frameInterval)
            let mayDrop = !keyframeNow && !wantsKeyframe && !gapForces
            // Skipped for the budget only while the path holds the rate down
            // (`SendBitrateController.pathHoldsTarget`). A REMB that follows what an
            // application-limited sender sent (aiortc's fell to ~50 kbit/s behind a still
            // testsrc) would otherwise hold back the frames after a still picture on a clean
            // path: an H.264 publication into aiortc coded 71 frames of 100 in 5 s.
            if mayDrop, rate.pathHoldsTarget,
               !frameBudget.allows(at: now.microseconds, askKbps: stats.encoderBitrateKbps) {
                stats.droppedByEncoder += 1
                stats.skippedOverBudget += 1
                encoder!.noteSkipped(frameIntervalMicroseconds: frameInterval)
                return
            }
            if keyframeNow {
                encoder!.forceKeyframe(nowMicroseconds: now.microseconds)
                keyframeNow = false
            } else if wantsKeyframe {
                encoder!.requestKeyframe(nowMicroseconds: now.microseconds)
            }
            do { try encoder!.setFrameDropping(allowed: mayDrop) } catch { throw .pipeline("frame dropping: \(error)") }
            var sendError: ShareError?
            func encodeSlot(_ slot: borrowing FrameSlot) throws(MediaError) -> Bool {
                try encoder!.encode(slot) { frame in
                    stats.encodedBytes += UInt64(frame.bytes.count)
                    frameBudget.coded(bytes: frame.bytes.count, isKeyframe: frame.isKeyframe, at: now.microseconds, askKbps: stats.encoderBitrateKbps)
                    if frame.isKeyframe {
                        stats.keyframes += 1
                        keyframes.keyframeSent(at: now.microseconds)
                    }
                    let outgoing = OutgoingVideoFrame(
                        bytes: frame.bytes, isKeyframe: frame.isKeyframe, isDroppable: frame.isDroppable,
                        captureTime: now, mediaTimestamp: mediaTimestamp,
                        orientation: configuration.signalsOrientation ? keptOrientation : .up,
                        width: output.width, height: output.height)
                    for sink in sinks where sendError == nil {
                        do throws(ShareError) { try sink.send(video: outgoing) } catch { sendError = error }
                    }
                }
            }
            let delivered: Bool
            do {
                if encoderInput != nil {
                    delivered = try encodeSlot(encoderInput!)
                } else {
                    delivered = try encodeSlot(kept!)
                }
            } catch {
                throw .pipeline("encode: \(error)")
            }
            if let sendError { throw sendError }
            if delivered {
                lastCodedAt = now
                if gapForces { stats.codedAgainstDrop += 1 }
                stats.encodedFrames += 1
                if isRepeat { stats.repeatedFrames += 1 }
            } else {
                stats.droppedByEncoder += 1
            }
        }

        func handle(_ action: FramePacerStateMachine.Action?, at now: MediaTime) throws(ShareError) {
            guard let action else { return }
            switch action {
            case .encode(let which, _, let timestamp, let forceKeyframe, _):
                try encodeKept(at: now, mediaTimestamp: timestamp, forceKeyframe: forceKeyframe,
                               isRepeat: which == .repeatLast)
            case .dropSourceFrame(let why):
                if why == .tooFast { stats.droppedTooFast += 1 }
            }
        }

        func handle(_ action: StallWatchdogStateMachine.Action?) {
            guard let action else { return }
            switch action {
            case .restartSource(let attempt):
                capture.requestRestart()
                onEvent(.sourceStalled(restartAttempt: attempt))
            case .report(.recovered(let after)):
                onEvent(.sourceRecovered(afterMilliseconds: after.microseconds / 1000))
            case .report:
                break
            }
        }

        do throws(ShareError) {
            while true {
                let now = MonotonicClock.now()
                if stopRequested.load(ordering: .acquiring) {
                    reason = stopReason.withLock { $0 }.map { .stoppedByHost($0) } ?? .stopped
                    break
                }
                let wantsPause = pauseRequested.load(ordering: .acquiring)
                if wantsPause != paused {
                    paused = wantsPause
                    onEvent(paused ? .paused : .resumed)
                    if !paused { keyframeRequested.store(true, ordering: .releasing) }
                }
                if paused {
                    while ring.pop() != nil {
                        stats.droppedWhilePaused += 1
                        if source.isLive { handle(watchdog.frameArrived(at: now)) }
                    }
                }
                if let duration = configuration.duration, now - startedAt >= duration {
                    reason = .durationReached
                    break
                }
                while let frame = ring.pop() {
                    stats.sourceFrames += 1
                    let orientation = frame.orientation
                    let captureTime = MediaTime(microseconds: frame.ptsMicroseconds)
                    kept = consume frame
                    keptOrientation = orientation
                    keptGeneration += 1
                    if source.isLive { handle(watchdog.frameArrived(at: now)) }
                    let action = pacer.frameArrived(at: now, captureTime: captureTime,
                                                    orientation: orientation.rawValue, contentChanged: true)
                    try handle(action, at: now)
                }
                let kbps = requestedBitrateKbps.exchange(0, ordering: .acquiringAndReleasing)
                if kbps > 0 {
                    rate.setMaximum(kbps: kbps)
                    try applyRate(at: now)
                }
                if !paused, keyframeRequested.exchange(false, ordering: .acquiringAndReleasing) {
                    try handle(pacer.keyframeRequested(at: now), at: now)
                }
                if !paused, let wake = pacer.nextWakeup, wake <= now { try handle(pacer.tick(at: now), at: now) }
                if let audio {
                    try audio.pump(at: now) { (packet: OutgoingAudioPacket) throws(ShareError) in
                        guard !paused else { return }
                        stats.audioPackets += 1
                        stats.audioBytes += UInt64(packet.bytes.count)
                        for sink in sinks { try sink.send(audio: packet) }
                    }
                }
                var sinkWakeup: MediaTime? = nil
                for sink in sinks {
                    let requests = try sink.service(at: now)
                    for line in sink.takeNotices() { onEvent(.notice(line)) }
                    if requests.mediaStarted {
                        keyframeNow = true
                        pathTriedAt = now + Self.untriedPath
                        // The round trip with no media queued: what a queue is measured against.
                        if let rtt = requests.pathRoundTripMicroseconds { rate.roundTrip(microseconds: rtt) }
                        // No delay signal of our own: not the maximum into a path nobody tried.
                        if requests.withoutTransportFeedback,
                           rate.startBelowMaximum(kbps: SendBitrateController.untriedStartKbps) {
                            onEvent(.notice("rate: no transport-wide feedback on this path: starting at "
                                + "\(rate.targetKbps) kbit/s, × \(SendBitrateController.startGrowth) a clean receiver report"))
                        }
                    }
                    switch requests.feedback {
                    case .silent(let ms)?: onEvent(.receiverSilent(output: sink.name, milliseconds: ms))
                    case .resumed(let ms)?: onEvent(.receiverHeardAgain(output: sink.name, afterMilliseconds: ms))
                    case nil: break
                    }
                    if requests.keyframe {
                        if paused { keyframeRequested.store(true, ordering: .releasing) } else {
                            keyframes.requested(fromReceiver: requests.keyframeAsked)
                        }
                    }
                    if let ceiling = requests.bitrateCeilingKbps { rate.remb(kbps: ceiling) }
                    if let estimate = requests.delayBasedKbps { rate.delayBased(kbps: estimate) }
                    if let lost = requests.videoFractionLost {
                        if let rtt = sink.transportStats?.roundTripMicroseconds { rate.roundTrip(microseconds: rtt) }
                        rate.receiverReport(fractionLost: lost, now: now.microseconds)
                        reportedLoss = Double(lost) / 256
                    }
                    if let lost = requests.audioFractionLost, let audio {
                        audio.receiverReport(fractionLost: lost)
                        stats.audioExpectedLossPercent = audio.expectedLossPercent
                    }
                    try applyRate(at: now)
                    keyframes.path(lossFraction: reportedLoss, roundTrip: sink.transportStats?.roundTripMicroseconds,
                                   belowMaximum: rate.targetKbps < rate.maximumKbps)
                    if let w = requests.nextWakeup, w < (sinkWakeup ?? w + .microseconds(1)) { sinkWakeup = w }
                }
                if !paused, keyframes.takeRequest(at: now.microseconds) {
                    try handle(pacer.keyframeRequested(at: now), at: now)
                }
                if source.isLive {
                    let heartbeats = capture.heartbeats
                    if heartbeats > heartbeatsSeen {
                        heartbeatsSeen = heartbeats
                        handle(watchdog.frameArrived(at: now))
                    }
                    handle(watchdog.tick(at: now))
                    let restarts = capture.restarts
                    if restarts > restartsSeen {
                        restartsSeen = restarts
                        handle(watchdog.restartFinished(at: now, succeeded: true))
                    }
                }
                if capture.hasEnded {
                    if let failure = capture.failure { reason = .failed(.source(failure)); break }
                    if ring.stats.count == 0 { reason = .sourceEnded; break }
                }
                if now >= nextProgress {
                    nextProgress = nextProgress + .seconds(1)
                    // A second made at a target 15 % higher or more says nothing of this one.
                    let targetFell = rate.targetKbps * 100 < targetAtLastSecond * 85
                    targetAtLastSecond = rate.targetKbps
                    encodedBeforeKbps = targetFell ? 0 : encodedKbps
                    encodedKbps = Int((stats.encodedBytes - encodedBytesAtLastSecond) * 8 / 1000)
                    encodedBytesAtLastSecond = stats.encodedBytes
                    let encodedFrames = stats.encodedFrames - encoderCountsAtLastSecond.encoded
                    let droppedFrames = stats.droppedByEncoder - encoderCountsAtLastSecond.dropped
                    encoderCountsAtLastSecond = (stats.encodedFrames, stats.droppedByEncoder)
                    let dropping = droppedFrames * 5 >= encodedFrames + droppedFrames && droppedFrames > 0
                    encoderDroppingSeconds = dropping ? (targetFell ? 1 : encoderDroppingSeconds + 1) : 0
                    let transport = sinks.lazy.compactMap { $0.transportStats }.first
                    let sentBytes = transport?.bytesSent
                    var sentKbps: Int? = nil
                    if let sentBytes, let before = sentBytesAtLastSecond { sentKbps = Int((sentBytes &- before) * 8 / 1000) }
                    sentBytesAtLastSecond = sentBytes
                    encoderBitrate.second(encodedKbps: encodedKbps, sentKbps: sentKbps)
                    try applyRate(at: now)
                    updateFrameRate()
                    let resident = PeakMemory.currentResidentBytes()
                    if let step = governor?.sample(residentBytes: resident, at: now) {
                        switch step {
                        case .frameRate:
                            updateFrameRate()
                        case .outputSize(let size):
                            // The old encoder goes first: the point is to need less.
                            encoderInput = nil
                            encoder = nil
                            _ = ccore_release_free_heap()  // its pages back to the system, not kept by malloc
                            encoder = try makeEncoder(codec, size)
                            output = size
                            do { try encoder!.setBitrate(kbps: stats.encoderBitrateKbps) } catch {
                                throw .pipeline("bitrate \(stats.encoderBitrateKbps) kbit/s: \(error)")
                            }
                            inputGeneration = -1
                        case .exhausted:
                            break
                        }
                        onEvent(.memoryPressure(residentBytes: resident, limitBytes: governor!.limitBytes, step: step))
                    }
                    stats.elapsed = now - startedAt
                    stats.droppedByRing = ring.stats.droppedOldest
                    stats.sourceRestarts = watchdog.counters.restarts
                    stats.wakeups = loop.wakeups
                    onEvent(.progress(ShareProgress(
                        stats: stats, transport: transport,
                        residentBytes: resident, peakResidentBytes: PeakMemory.residentBytes())))
                }
                // Wait for a frame, feedback or a request from another thread, or the next
                // deadline: the pacer, the watchdog, audio, the sinks' reports, the progress
                // line, the end of the duration.
                var wake = nextProgress
                if let duration = configuration.duration, startedAt + duration < wake { wake = startedAt + duration }
                if !paused, let p = pacer.nextWakeup, p < wake { wake = p }
                // Only a live source has a watchdog running (a file's is never told of frames).
                if source.isLive, let w = watchdog.nextWakeup, w < wake { wake = w }
                if let w = audio?.nextWakeup, w < wake { wake = w }
                if let w = sinkWakeup, w < wake { wake = w }
                if !paused, let k = keyframes.nextDeadline, k < wake.microseconds {
                    wake = MediaTime(microseconds: max(k, now.microseconds))
                }
                loop.wait(until: wake)
            }
        } catch {
            reason = .failed(error)
        }

        capture.stop()
        encoderInput = nil
        kept = nil
        // The encoder's memory (most of the share's) goes back before the outputs finish: a
        // WHIP output loads libcurl again for its DELETE, which then meets little else.
        encoder = nil
        sinksFinished = true
        for sink in sinks {
            do { try sink.finish(reason) } catch {
                if case .failed = reason {} else { reason = .failed(error) }
            }
        }
        stats.droppedByRing = ring.stats.droppedOldest
        stats.sourceRestarts = watchdog.counters.restarts
        stats.elapsed = MonotonicClock.now() - startedAt
        stats.wakeups = loop.wakeups
        onEvent(.finished(reason))
        if case .failed(let error) = reason { throw error }
        return stats
    }
}

extension ShareSession {
    /// Makes the encoder now, before the share's other memory: libvpx zero-fills its token
    /// buffer at init, and the pages given back after (`reclaimEncoderStartupMemory`) still
    /// count in the process's peak unless little else is resident yet. `run` takes it when the
    /// codec and size are still those.
    public func prepareEncoder(_ codec: VideoCodec, for output: PictureSize) throws(ShareError) {
        var encoder: VideoEncoder? = try makeEncoder(codec, output)
        preparedEncoder.withLock { $0 = encoder.take() }
    }

    private func makeEncoder(_ codec: VideoCodec, _ output: PictureSize) throws(ShareError) -> VideoEncoder {
        do {
            return try VideoEncoder(codec: codec, width: output.width, height: output.height,
                                    bitrateKbps: configuration.bitrateKbps, frameRate: configuration.framesPerSecond,
                                    reclaimStartupZeroPages: configuration.reclaimEncoderStartupMemory)
        } catch {
            throw .output("\(codec) encoder: \(error)")
        }
    }
}

/// Carries a value to another thread when the code guarantees only one thread uses it.
private struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// Why a share could not run: one line for the user.
public enum ShareError: Error, Equatable, CustomStringConvertible {
    case doesNotFit(String)
    case output(String)
    case pipeline(String)
    case source(String)
    case invalidConfiguration(String)
    /// A WebRTC publication could not be made or ended (typed: see `ConnectionFailure`).
    case connection(ConnectionFailure)

    public var description: String {
        switch self {
        case .doesNotFit(let m): "does not fit the memory budget: \(m)"
        case .output(let m): m
        case .pipeline(let m): m
        case .source(let m): m
        case .invalidConfiguration(let m): m
        case .connection(let failure): failure.description
        }
    }
}
