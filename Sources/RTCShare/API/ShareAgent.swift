import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP
import RTCShareWHIP
import Synchronization

/// One screen share, complete: the API an embedder (and the CLI, which is a thin layer over it)
/// uses. Creating an agent does everything that can fail up front — opens the source, plans the
/// memory and reserves it inside the process budget, makes the audio path, opens the outputs
/// and sockets — so a share that cannot run says so before the first frame. Then `run` (on the
/// caller's thread) or `start` (on a thread of its own) runs it until the duration passes, the
/// source ends, or `stop`.
///
/// Threading: every method may be called from any thread. Events are delivered on the share's
/// pipeline thread (the caller's for `run`, the agent's own for `start`); a handler must not
/// block for long.
public final class ShareAgent: @unchecked Sendable {
    // @unchecked Sendable: the mutable parts (the thread, the result) are behind `lifecycle`;
    // everything else is set once in init.

    public struct Configuration: Sendable {
        public var share = ShareConfiguration()
        public var source: ShareSourceChoice = .testPattern()
        /// Where the encoded media goes besides the share's files (IVF, Ogg): nowhere, or a peer.
        public var transport: ShareTransport = .none

        public init() {}
    }

    public let configuration: Configuration
    /// The memory plan the share runs with (output size, what each part takes).
    public let plan: MemoryPlan
    /// The source's name for logs ("testsrc", "x11::0", "push", …).
    public let sourceName: String
    /// The audio path's name, when the share has audio.
    public let audioName: String?

    private let session: ShareSession
    private let peer: PeerSink?
    private let whip: WHIPSink?
    private let pushSource: PushSource?
    private let body: () throws(ShareError) -> ShareStats
    private let reservation: ProcessBudget.Reservation?
    private let lifecycle = Mutex(Lifecycle())

    private struct Lifecycle {
        var thread: WorkerThread?
        var used = false
        var result: Result<ShareStats, ShareError>?
    }

    /// Prepares a share. `processBudget`: the process-wide cap shared with other sessions (nil:
    /// this share alone under `configuration.share.memoryCapBytes`). Throws one `ShareError`
    /// (no fit, bad source, output that cannot be opened); nothing is left open on failure.
    ///
    /// The steps: the share's settings for its outputs, the source opened, then (`assemble`)
    /// the memory planned and reserved, the encoder made, the budget mapped, the audio path and
    /// the outputs opened.
    public init(configuration: Configuration, processBudget: ProcessBudget? = nil,
                onEvent: @escaping @Sendable (ShareEvent) -> Void = { _ in }) throws(ShareError) {
        var configuration = configuration
        // A stop of the agent also ends a WHIP request in flight (a reconnect's POST).
        if case .whip(var whip) = configuration.transport, whip.stop == nil {
            whip.stop = WHIPStop()
            configuration.transport = .whip(whip)
        }
        self.configuration = configuration
        let share = Self.settings(configuration, processBudget: processBudget)
        let session = ShareSession(configuration: share, onEvent: onEvent)
        self.session = session
        let context = Context(transport: configuration.transport, session: session, processBudget: processBudget,
                              notice: { onEvent(.notice($0)) }, event: onEvent)
        func open<T>(_ make: () throws(SourceError) -> T) throws(ShareError) -> T {
            do { return try make() } catch { throw .source(error.description) }
        }
        let parts: Assembly
        var push: PushSource?
        switch configuration.source {
        case .testPattern(let fps, let orientation, let stallAfter, let stallFor):
            let size = share.outputSize ?? ShareSourceChoice.defaultTestPatternSize
            let source = TestSource(width: size.width, height: size.height, framesPerSecond: fps,
                                    orientation: orientation, stallAfter: stallAfter, stallFor: stallFor)
            parts = try Self.assemble(source, share, context)
        case .y4m(let path):
            let source = try open { () throws(SourceError) in
                try Y4MSource(path: path, fallbackFramesPerSecond: share.framesPerSecond)
            }
            parts = try Self.assemble(source, share, context)
        case .x11(let display, let cursor):
            let source = try open { () throws(SourceError) in
                try X11Source(display: display, framesPerSecond: share.framesPerSecond, cursor: cursor)
            }
            parts = try Self.assemble(source, source.fit(share), context)
        case .wayland(let output, let cursor):
            let source = try open { () throws(SourceError) in
                try WaylandSource(output: output, framesPerSecond: share.framesPerSecond, cursor: cursor)
            }
            parts = try Self.assemble(source, source.fit(share), context)
        case .portal(let cursor, let tokenFile):
            let source = try open { () throws(SourceError) in
                try PortalSource(framesPerSecond: share.framesPerSecond, cursor: cursor,
                                 tokenFile: (tokenFile ?? PortalRestoreToken.defaultPath).map(PortalRestoreToken.init))
            }
            parts = try Self.assemble(source, source.fit(share), context)
        case .ipc(let path, let maxSize):
            parts = try Self.assemble(IPCSource(path: path, maxSize: maxSize, log: context.notice), share, context)
        case .pushed(let maxSize):
            let source = try open { () throws(SourceError) in try PushSource(maxSize: maxSize) }
            push = source
            parts = try Self.assemble(source, share, context)
        }
        (plan, sourceName, audioName, peer, whip, reservation, body) =
            (parts.plan, parts.sourceName, parts.audioName, parts.peer, parts.whip, parts.reservation, parts.body)
        pushSource = push
    }

    /// The share's settings as its outputs need them: the process's budget, the codec (decided
    /// alone, or offered to a WHIP server), what the output takes of memory.
    private static func settings(_ configuration: Configuration, processBudget: ProcessBudget?) -> ShareConfiguration {
        var share = configuration.share
        if let processBudget { share.memoryCapBytes = processBudget.availableBytes + MemoryPlanner.runtimeBytes }
        switch configuration.transport {
        case .none:
            share.videoCodec = VideoCodecChoice(rawValue: share.videoCodec.resolvedAlone.rawValue) ?? .vp8
        case .peer(let peer):
            // rtcshare decides alone: the SDP it writes names the one codec it sends.
            share.videoCodec = VideoCodecChoice(rawValue: share.videoCodec.resolvedAlone.rawValue) ?? .vp8
            share.outputBudgetBytes = PeerSink.budgetBytes(peer)
            share.outputHeapBytes = PeerSink.heapBytes(peer)
            share.outputReleasedStartupBytes = PeerSink.releasedStartupBytes(peer)
        case .whip(let whip):
            share.countOutput(whip: whip)
            // Pixels are turned at the source: not every server keeps CVO.
            share.signalsOrientation = false
        }
        return share
    }

    /// What every step of the assembly needs besides the source.
    private struct Context {
        let transport: ShareTransport
        let session: ShareSession
        let processBudget: ProcessBudget?
        let notice: @Sendable (String) -> Void
        let event: @Sendable (ShareEvent) -> Void
    }

    /// A share ready to run.
    private struct Assembly {
        var plan: MemoryPlan
        var sourceName: String
        var audioName: String?
        var peer: PeerSink?
        var whip: WHIPSink?
        var reservation: ProcessBudget.Reservation?
        var body: () throws(ShareError) -> ShareStats
    }

    /// Plans and reserves the memory, makes the encoder first (its start-up peak then meets
    /// little else resident), maps the budget, opens the audio path and the outputs.
    private static func assemble<S: VideoSource>(_ source: S, _ share: ShareConfiguration,
                                                 _ context: Context) throws(ShareError) -> Assembly {
        let plan = try MemoryPlanner.resolve(share, for: source)
        let reservation = try context.processBudget?.reserve(plan.peakBytes - MemoryPlanner.runtimeBytes,
                                                             for: source.name)
        try context.session.prepareEncoder(share.videoCodec.resolvedAlone, for: plan.outputSize)
        let budget: MemoryBudget
        do {
            budget = try MemoryBudget(capBytes: plan.budgetBytes)
        } catch {
            throw .resource("cannot map the \(plan.budgetBytes >> 10) KiB frame budget: \(error)")
        }
        let (audio, audioSinks) = try openAudio(share, for: source, budget: budget, notice: context.notice)
        let (peer, whip) = try openOutputs(context.transport, share, plan: plan, budget: budget, context)
        let sinks: [any MediaSink] = audioSinks + [peer as (any MediaSink)?, whip].compactMap { $0 }
        let codec = whip?.videoCodec ?? share.videoCodec.resolvedAlone
        let session = context.session
        let body: () throws(ShareError) -> ShareStats = { () throws(ShareError) in
            try session.run(source: source, budget: budget, plan: plan, sinks: sinks, audio: audio, codec: codec)
        }
        return Assembly(plan: plan, sourceName: source.name, audioName: audio?.name, peer: peer, whip: whip,
                        reservation: reservation, body: body)
    }

    /// The audio path, and its Ogg Opus file when asked for.
    private static func openAudio<S: VideoSource>(_ share: ShareConfiguration, for source: S, budget: MemoryBudget,
                                                  notice: @escaping @Sendable (String) -> Void)
        throws(ShareError) -> ((any AudioPath)?, [any MediaSink])
    {
        guard let settings = share.audio else { return (nil, []) }
        let path = try settings.makePath(for: source, budget: budget, log: notice)
        guard let ogg = settings.oggPath else { return (path, []) }
        let sink = try OggOpusSink(path: ogg, channels: path.channels, preSkip: path.preSkip,
                                   inputSampleRate: path.inputSampleRate,
                                   serial: Int32(truncatingIfNeeded: MonotonicClock.now().microseconds))
        return (path, [sink])
    }

    /// The network output: a peer (`--peer`), a WHIP publication (`--whip`, whose whole
    /// signalling happens here), or none.
    private static func openOutputs(_ transport: ShareTransport, _ share: ShareConfiguration, plan: MemoryPlan,
                                    budget: MemoryBudget, _ context: Context)
        throws(ShareError) -> (PeerSink?, WHIPSink?)
    {
        let h264Level = H264Level.idc(width: plan.outputSize.width, height: plan.outputSize.height,
                                      framesPerSecond: share.framesPerSecond)
        switch transport {
        case .none:
            return (nil, nil)
        case .peer(var peer):
            peer.videoCodec = share.videoCodec.resolvedAlone
            peer.h264LevelIDC = h264Level
            return (try PeerSink(configuration: peer, budget: budget), nil)
        case .whip(var whip):
            // The server's answer picks among the codecs the choice offers.
            whip.videoCodecs = share.videoCodec.offered
            whip.h264LevelIDC = h264Level
            // The agent's `stop` raises `whip.stop` (made in `init`), which ends the waits.
            let deadline = share.duration.map { MonotonicClock.now() + $0 }
            let sink = try WHIPSink(configuration: whip, budget: budget, deadline: deadline) {
                guard case .reconnecting(let attempt, let reason, let ms) = $0 else { return }
                context.event(.reconnecting(output: "whip \(whip.url)", attempt: attempt, reason: reason,
                                            retryInMilliseconds: ms))
            }
            for line in sink.takeNotices() { context.notice(line) }
            if let line = sink.gatheringNotice { context.notice("WHIP: \(line)") }
            for line in sink.negotiated { context.notice("WHIP: \(line)") }
            return (nil, sink)
        }
    }

    deinit {
        lifecycle.withLock { $0.thread }?.join()
    }

    /// The SDP a receiver opens for a `.peer` transport (it holds the SRTP key: keep it private).
    public func peerSessionDescription() -> SessionDescription? { peer?.sessionDescription() }

    /// The transport's figures (packets, RTT, loss, NACKs) for `.peer` transports; read it once the
    /// share has finished (while it runs, the progress events carry them).
    public var transportStats: TransportStats? { peer?.transportStats ?? whip?.transportStats }

    /// The WHIP session's resource URL, for `.whip` transports.
    public var whipResource: String? { whip?.resourceURL }

    /// The codec the share encodes with: the configuration's (`auto` is VP8), or what a WHIP
    /// server's answer kept.
    public var videoCodec: VideoCodec { whip?.videoCodec ?? peer?.configuration.videoCodec
        ?? configuration.share.videoCodec.resolvedAlone }

    /// The peer the share sends to, for `.peer` transports.
    public var peerAddress: SocketAddress? { peer?.configuration.videoPeer }

    /// Runs the share on the calling thread until it finishes; returns the counters. A share
    /// runs once: a second `run` or `start` throws.
    public func run() throws(ShareError) -> ShareStats {
        try claim()
        let result: Result<ShareStats, ShareError>
        do throws(ShareError) { result = .success(try body()) } catch { result = .failure(error) }
        finish(result)
        return try result.get()
    }

    /// Runs the share on a thread of its own; returns at once. `wait` gives the outcome.
    public func start() throws(ShareError) {
        try claim()
        let thread = WorkerThread.start(name: "rtcshare-share", stackBytes: 4 << 20) { [self] in
            let result: Result<ShareStats, ShareError>
            do throws(ShareError) { result = .success(try body()) } catch { result = .failure(error) }
            finish(result)
        }
        guard let thread else { throw .output("cannot start the share's thread") }
        lifecycle.withLock { $0.thread = thread }
    }

    /// Waits for a share started with `start` to finish and returns its counters.
    public func wait() throws(ShareError) -> ShareStats {
        let thread = lifecycle.withLock { l -> WorkerThread? in
            let t = l.thread
            l.thread = nil
            return t
        }
        thread?.join()
        guard let result = lifecycle.withLock({ $0.result }) else {
            throw .invalidConfiguration("the share was never started")
        }
        return try result.get()
    }

    /// Whether the share has finished (and `wait` returns at once).
    public var isFinished: Bool { lifecycle.withLock { $0.result != nil } }

    private func claim() throws(ShareError) {
        let first = lifecycle.withLock { l -> Bool in
            defer { l.used = true }
            return !l.used
        }
        guard first else { throw .invalidConfiguration("a share runs once; make a new one") }
    }

    private func finish(_ result: Result<ShareStats, ShareError>) {
        pushSource?.detach()
        reservation?.release()
        lifecycle.withLock { $0.result = result }
    }

    // MARK: Control, from any thread

    /// Stops the share (finished: stopped); with a reason, finished: stopped: reason.
    public func stop(reason: String? = nil) {
        if let reason { session.stop(reason: reason) } else { session.stop() }
        if case .whip(let whip) = configuration.transport { whip.stop?.raise() }
    }

    public var isStopRequested: Bool { session.isStopRequested }
    public func pause() { session.setPaused(true) }
    public func resume() { session.setPaused(false) }
    public func requestKeyframe() { session.requestKeyframe() }
    public func setBitrate(kbps: Int) { session.setBitrate(kbps: kbps) }

    // MARK: Pushed media, from any thread

    /// Hands in a picture (`.pushed` source only); never blocks.
    public func pushVideo(_ frame: PushedFrame) -> PushResult {
        pushSource?.push(frame) ?? .invalid
    }

    /// Hands in interleaved 16-bit PCM (`.pushed` source with `.pushed` audio); never blocks.
    public func pushAudio(_ bytes: UnsafeRawBufferPointer, sampleRate: Int, channels: Int, bigEndian: Bool = false,
                          ptsMicroseconds: Int64? = nil) -> PushResult {
        guard configuration.share.audio?.input == .pushed, let pushSource else { return .invalid }
        return pushSource.pushAudio(bytes, sampleRate: sampleRate, channels: channels, bigEndian: bigEndian,
                                    ptsMicroseconds: ptsMicroseconds)
    }

    /// What happened to pushed pictures so far (nil unless the source is `.pushed`).
    public var pushCounters: PushSource.Counters? { pushSource?.stats }
}

/// Where a share's encoded media goes besides its files.
public enum ShareTransport: Sendable {
    /// Only the files of the configuration (IVF, Ogg).
    case none
    /// RTP/SRTP with RTCP to one receiver (`--peer`).
    case peer(PeerConfiguration)
    /// Published into a WebRTC server over WHIP (`--whip`): ICE, DTLS-SRTP, one socket.
    case whip(WHIPConfiguration)
}
