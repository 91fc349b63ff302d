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
    ///
    /// This is the driver: the capture thread fills the ring, and this loop feeds what happened
    /// (frames, host requests, feedback, time) to the pipeline's policy and carries out what it
    /// says (`SharePipelineStateMachine`), waiting on the sockets, the capture thread's wake-ups
    /// and the policy's deadlines in between.
    public func run<S: VideoSource>(source: S, budget: MemoryBudget, plan: MemoryPlan,
                                    sinks extraSinks: [any MediaSink] = [],
                                    audio: (any AudioPath)? = nil,
                                    codec: VideoCodec? = nil) throws(ShareError) -> ShareStats {
        let codec = codec ?? configuration.videoCodec.resolvedAlone
        onEvent(.starting(source: source.name, output: plan.outputSize, framesPerSecond: configuration.framesPerSecond,
                          codec: codec))
        var video = try VideoStage(source: source, budget: budget, plan: plan, codec: codec,
                                   signalsOrientation: configuration.signalsOrientation)
        do { try source.prepare(budget: budget) } catch { throw .source(error.description) }
        video.install(try preparedOrNewEncoder(codec, plan.outputSize))
        let outputs = ShareOutputs(sinks: try openSinks(extraSinks, codec: codec, output: plan.outputSize),
                                   audio: audio, onEvent: onEvent)
        let loop = try outputs.makeEventLoop()
        waker.withLock { $0 = loop.waker }
        defer { waker.withLock { $0 = nil } }
        let capture = CaptureLoop()
        // The source object moves to the capture thread: from here on only that thread calls it
        // (the pipeline reads its immutable description only).
        // Its row counter is atomic, so the pipeline's thread may read it while the capture runs.
        let rowCounter = source as? CountsConvertedRows
        let handOff = UncheckedBox(source)
        let (pool, ring, loopWaker) = (video.sourcePool, video.ring, loop.waker)
        guard let captureThread = WorkerThread.start(name: "rtcshare-capture", {
            capture.run(handOff.value, pool: pool, ring: ring, waker: loopWaker)
        }) else {
            throw .resource("cannot start the capture thread")
        }
        defer {
            capture.stop()
            captureThread.join()
        }

        var pipeline = SharePipelineStateMachine(
            configuration: pipelineConfiguration(plan, sourceIsLive: source.isLive, canResize: video.hasTransform,
                                                 codec: codec, outputs: outputs.sinks.count),
            startedAt: MonotonicClock.now())
        pipeline.stats.videoCodec = codec
        pipeline.audioExpectedLoss(percent: audio?.expectedLossPercent ?? 0)
        pipeline.outputsAcceptVideo(outputs.acceptVideo)
        var reason: FinishReason?
        // After every input, every action, in order.
        func drain(at now: MediaTime) {
            while reason == nil, let action = pipeline.pollAction() {
                do throws(ShareError) { reason = try perform(action, at: now) } catch { reason = .failed(error) }
            }
        }
        func perform(_ action: SharePipelineStateMachine.Action, at now: MediaTime) throws(ShareError) -> FinishReason? {
            switch action {
            case .encode(let order):
                let outcome = try video.encode(order) { (frame, outgoing) throws(ShareError) in
                    pipeline.frameCoded(bytes: frame.bytes.count, isKeyframe: frame.isKeyframe, at: order.at)
                    if !frame.isShown { pipeline.stats.hiddenFrames += 1 }
                    try outputs.send(video: outgoing)
                }
                if outcome == .unchanged {
                    pipeline.pictureUnchanged(order)
                } else {
                    pipeline.encodeFinished(order, delivered: outcome == .coded)
                }
            case .skipped(let interval): video.noteSkipped(frameIntervalMicroseconds: interval)
            case .setOutputMaximum(let kbps): outputs.setMaximumBitrate(kbps: kbps, at: now)
            case .setEncoderBitrate(let kbps): try video.setBitrate(kbps: kbps)
            case .setKeyframeCap(let constrained): try video.setKeyframeCap(constrained: constrained)
            case .restartSource: capture.requestRestart()
            case .resize(let size): try video.resize(to: size, makeEncoder: makeEncoder)
            case .releaseEncoder: video.releaseEncoder()
            case .restoreEncoder: try video.restoreEncoder(makeEncoder: makeEncoder)
            case .event(let event): onEvent(event)
            case .finish(let why): return why
            }
            return nil
        }

        drain(at: pipeline.startedAt)
        while reason == nil {
            let now = MonotonicClock.now()
            takeHostRequests(into: &pipeline, at: now)
            pipeline.endIfDurationPassed(at: now)
            drain(at: now)
            while reason == nil, let frame = ring.pop() {
                let (captureTime, orientation) = (MediaTime(microseconds: frame.ptsMicroseconds), frame.orientation)
                if !pipeline.isPaused { video.keep(frame) }
                pipeline.frameArrived(at: now, captureTime: captureTime, orientation: orientation)
                drain(at: now)
            }
            var outputsWake: MediaTime?
            do throws(ShareError) {
                try outputs.pumpAudio(at: now, pipeline: &pipeline)
                outputsWake = try outputs.service(at: now, pipeline: &pipeline)
            } catch {
                reason = .failed(error)
            }
            drain(at: now)
            pipeline.tick(at: now, source: .init(heartbeats: capture.heartbeats, restarts: capture.restarts,
                                                 ended: capture.hasEnded, failure: capture.failure,
                                                 framesWaiting: ring.stats.count))
            if pipeline.secondDue(at: now) {
                pipeline.stats.droppedByRing = ring.stats.droppedOldest
                pipeline.stats.wakeups = loop.wakeups
                pipeline.stats.sourceRowsConverted = rowCounter?.rowsConverted ?? 0
                pipeline.second(at: now, PipelineSecond(
                    sentBytes: outputs.transportStats?.bytesSent, transport: outputs.transportStats,
                    residentBytes: PeakMemory.currentResidentBytes(), peakResidentBytes: PeakMemory.residentBytes()))
            }
            drain(at: now)
            guard reason == nil else { break }
            var wake = pipeline.nextWakeup
            if let w = audio?.nextWakeup, w < wake { wake = w }
            if let w = outputsWake, w < wake { wake = w }
            loop.wait(until: wake) { outputs.ready(descriptor: Int32($0)) }
        }

        capture.stop()
        // The encoder's memory (most of the share's) goes back before the outputs finish: a
        // WHIP output loads libcurl again for its DELETE, which then meets little else.
        video.release()
        var finalReason = reason ?? .stopped
        if let failure = outputs.finish(finalReason) {
            if case .failed = finalReason {} else { finalReason = .failed(failure) }
        }
        pipeline.stats.droppedByRing = ring.stats.droppedOldest
        pipeline.stats.wakeups = loop.wakeups
        pipeline.stats.sourceRowsConverted = rowCounter?.rowsConverted ?? 0
        pipeline.finalCounts(elapsed: MonotonicClock.now() - pipeline.startedAt)
        onEvent(.finished(finalReason))
        if case .failed(let error) = finalReason { throw error }
        return pipeline.stats
    }

    /// What another thread asked for since the last look: stop, pause or resume, a bitrate, a keyframe.
    private func takeHostRequests(into pipeline: inout SharePipelineStateMachine, at now: MediaTime) {
        if stopRequested.load(ordering: .acquiring) { pipeline.stop(reason: stopReason.withLock { $0 }) }
        pipeline.setPaused(pauseRequested.load(ordering: .acquiring), at: now)
        let kbps = requestedBitrateKbps.exchange(0, ordering: .acquiringAndReleasing)
        if kbps > 0 { pipeline.setMaximumBitrate(kbps: kbps, at: now) }
        if keyframeRequested.exchange(false, ordering: .acquiringAndReleasing) { pipeline.keyframeRequested(at: now) }
    }

    /// `keyframeInterval`, or `progressiveKeyframeInterval` where VP8 keyframes sweep in.
    private func periodicKeyframeInterval(_ codec: VideoCodec, _ size: PictureSize) -> MediaDuration? {
        guard codec == .vp8, configuration.reclaimEncoderStartupMemory,
              VP8Encoder.codesProgressiveKeyframes(width: size.width, height: size.height),
              let progressive = configuration.progressiveKeyframeInterval else { return configuration.keyframeInterval }
        return progressive
    }

    private func pipelineConfiguration(_ plan: MemoryPlan, sourceIsLive: Bool, canResize: Bool,
                                       codec: VideoCodec, outputs: Int) -> SharePipelineStateMachine.Configuration {
        SharePipelineStateMachine.Configuration(
            framesPerSecond: configuration.framesPerSecond, idleFramesPerSecond: configuration.idleFramesPerSecond,
            stallThreshold: configuration.stallThreshold, keyframeInterval: periodicKeyframeInterval(codec, plan.outputSize),
            maximumBitrateKbps: configuration.bitrateKbps, duration: configuration.duration,
            sourceIsLive: sourceIsLive, memorySoftLimitBytes: configuration.memorySoftLimitBytes,
            // A smaller encoder needs less only when its start-up zero pages are given back too
            // (CLI); and only a share with a transform stage can scale to it.
            canResize: canResize && configuration.reclaimEncoderStartupMemory, outputSize: plan.outputSize,
            // Only a share whose one output reconnects: another would still take the video.
            releasesEncoderWhileReconnecting: configuration.releasesEncoderWhileReconnecting(codec) && outputs == 1)
    }

    /// The outputs: an `--output` IVF file first when configured, then the caller's.
    private func openSinks(_ extra: [any MediaSink], codec: VideoCodec,
                           output: PictureSize) throws(ShareError) -> [any MediaSink] {
        guard let path = configuration.ivfPath else { return extra }
        return [try IVFSink(path: path, codec: codec, width: output.width, height: output.height)] + extra
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

    /// The encoder `prepareEncoder` made, if it is for this codec and size; else (a WHIP answer
    /// chose the other codec) that one is let go first and a new one made.
    private func preparedOrNewEncoder(_ codec: VideoCodec, _ output: PictureSize) throws(ShareError) -> VideoEncoder {
        if let prepared = preparedEncoder.withLock({ $0.take() }) {
            if prepared.codec == codec, prepared.width == output.width, prepared.height == output.height {
                return prepared
            }
        }
        return try makeEncoder(codec, output)
    }

    private func makeEncoder(_ codec: VideoCodec, _ output: PictureSize) throws(ShareError) -> VideoEncoder {
        do {
            return try VideoEncoder(codec: codec, width: output.width, height: output.height,
                                    bitrateKbps: configuration.bitrateKbps, frameRate: configuration.framesPerSecond,
                                    reclaimStartupZeroPages: configuration.reclaimEncoderStartupMemory)
        } catch {
            switch error {
            case .vpx(.memoryError, _), .library: throw .resource("\(codec) encoder: \(error)")
            default: throw .output("\(codec) encoder: \(error)")
            }
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
    /// The system ran short: memory or address space, a library that cannot be loaded or
    /// initialised, a thread that cannot be started.
    case resource(String)
    /// A WebRTC publication could not be made or ended (typed: see `ConnectionFailure`).
    case connection(ConnectionFailure)

    public var description: String {
        switch self {
        case .doesNotFit(let m): "does not fit the memory budget: \(m)"
        case .output(let m): m
        case .pipeline(let m): m
        case .source(let m): m
        case .invalidConfiguration(let m): m
        case .resource(let m): m
        case .connection(let failure): failure.description
        }
    }
}
