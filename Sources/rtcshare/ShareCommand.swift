import Glibc
import RTCShare
import RTCShareCore
import RTCShareIO
import RTCShareMedia

/// `rtcshare [share]`: runs a share from a source to the outputs given.
struct ShareCommand: CommandLineCommand {
    static let name = "share"
    static let abstract = "Capture, turn upright, encode and send (default command)."
    static let groupTitles = ["peer": "Sending to a peer", "output": "Local output and reporting"]

    var options = ShareOptions()
    var peer = PeerOptions()
    var output: String?
    var audioOutput: String?
    var duration: Double?
    var quiet = false
    var statsJSON: String?

    static var options: [OptionSpec<ShareCommand>] {
        ShareOptions.options.map { $0.lifted(into: \.options) }
        + PeerOptions.options.map { $0.lifted(into: \.peer) }
        + [
            .option("output", \.output, value: "file.ivf", help: "Write the VP8 stream to an IVF file."),
            .option("audio-output", \.audioOutput, value: "file.ogg", help: "Write the Opus audio to an Ogg Opus file (.ogg or .opus)."),
            .option("duration", \.duration, value: "seconds", help: "Stop after this many seconds."),
            .option("stats-json", \.statsJSON, value: "file",
                    help: "Write one JSON object per second (the counters so far) to this file."),
            .flag("quiet", \.quiet, help: "Print only errors."),
        ]
    }

    func validate() throws(ValidationError) {
        try options.validate()
        try peer.validate()
        try peer.validateForSending()
        if let duration, !(duration > 0 && duration <= 366 * 86_400) {
            throw ValidationError("--duration must be a positive number of seconds")
        }
        guard output != nil || peer.peer != nil || audioOutput != nil else {
            throw ValidationError("nothing to send to: give --peer HOST:PORT or --output FILE.ivf (--whip is not available yet)")
        }
        if let audioOutput {
            guard options.audioInput != nil else {
                throw ValidationError("--audio-output needs audio: give --audio testtone, wav:PATH or ipc")
            }
            guard audioOutput.hasSuffix(".ogg") || audioOutput.hasSuffix(".opus") else {
                throw ValidationError("--audio-output must name an .ogg or .opus file, not '\(audioOutput)'")
            }
        }
    }

    func run() throws {
        var configuration = options.configuration
        configuration.ivfPath = output
        configuration.audio?.oggPath = audioOutput
        configuration.duration = duration.map { .microseconds(Int64($0 * 1_000_000)) }
        let log = Log(quiet: quiet, statsJSONPath: statsJSON)
        let peerConfiguration: PeerConfiguration?
        do {
            peerConfiguration = try peer.apply(to: &configuration)
        } catch {
            log.fail(error.description)
        }
        if let peerConfiguration, peerConfiguration.protection == nil, !quiet {
            log.line("rtcshare: warning: --insecure: RTP goes unencrypted; anyone on the path can watch the share")
        }

        do {
            if options.source == "testsrc" {
                let asked = configuration.outputSize ?? PictureSize(width: 1280, height: 720)
                let orientation = Orientation(rawValue: options.simulateOrientation ?? 1) ?? .up
                let source = TestSource(width: asked.width, height: asked.height,
                                        framesPerSecond: options.testsrcFps, orientation: orientation,
                                        stallAfter: options.stall?.after, stallFor: options.stall?.duration ?? .zero)
                try runShare(source, configuration, peerConfiguration, log)
            } else if options.isX11 {
                let source = try X11Source(display: options.x11Display, framesPerSecond: configuration.framesPerSecond)
                try runShare(source, source.fit(configuration), peerConfiguration, log)
            } else if let path = options.ipcPath {
                let quiet = self.quiet
                let source = IPCSource(path: path, maxSize: PictureSize(parsing: options.ipcMaxSize) ?? IPCSource.defaultMaxSize,
                                       log: { if !quiet { log.line("rtcshare: \($0)") } })
                try runShare(source, configuration, peerConfiguration, log)
            } else {
                let path = String(options.source.dropFirst("y4m:".count))
                let source = try Y4MSource(path: path, fallbackFramesPerSecond: configuration.framesPerSecond)
                try runShare(source, configuration, peerConfiguration, log)
            }
        } catch let error as SourceError {
            log.fail(error.description)
        } catch let error as ShareError {
            log.fail(error.description)
        }
    }

    private func runShare<S: VideoSource>(_ source: S, _ configuration: ShareConfiguration,
                                          _ peerConfiguration: PeerConfiguration?, _ log: Log) throws(ShareError) {
        let plan = try MemoryPlanner.resolve(configuration, for: source)
        let budget: MemoryBudget
        do {
            budget = try MemoryBudget(capBytes: plan.budgetBytes)
        } catch {
            throw .doesNotFit("cannot map the \(plan.budgetBytes >> 10) KiB frame budget: \(error)")
        }
        let (audio, audioSinks) = try makeAudio(configuration, source, budget, log)
        var sinks = audioSinks
        let session = ShareSession(configuration: configuration) { event in log.event(event) }
        let signals = SignalWatcher { session.stop() }
        defer { _ = signals }
        if let peerConfiguration {
            let sink = try PeerSink(configuration: peerConfiguration, budget: budget)
            try writeSDP(sink, log)
            sinks.append(sink)
            if peer.startDelay > 0 {
                // Interruptible: a signal during the wait still ends the run at once.
                let until = MonotonicClock.now() + .microseconds(Int64(peer.startDelay * 1_000_000))
                while MonotonicClock.now() < until && !session.isStopRequested {
                    MonotonicClock.sleep(until: min(until, MonotonicClock.now() + .milliseconds(20)))
                }
            }
        }
        let stats = try session.run(source: source, budget: budget, plan: plan, sinks: sinks, audio: audio)
        log.summary(stats, plan: plan, transport: sinks.lazy.compactMap { $0.transportStats }.first)
    }
}

extension ShareCommand {
    /// The audio path (`--audio`) and its Ogg Opus output (`--audio-output`), if any.
    private func makeAudio<S: VideoSource>(_ configuration: ShareConfiguration, _ source: S, _ budget: MemoryBudget,
                                           _ log: Log) throws(ShareError) -> ((any AudioPath)?, [any MediaSink]) {
        guard let settings = configuration.audio else { return (nil, []) }
        let audio = try settings.makePath(for: source, budget: budget) { if !log.quiet { log.line("rtcshare: \($0)") } }
        if !log.quiet { log.line("rtcshare: audio: \(audio.name)") }
        guard let path = settings.oggPath else { return (audio, []) }
        let sink = try OggOpusSink(path: path, channels: audio.channels, preSkip: audio.preSkip,
                                   inputSampleRate: audio.inputSampleRate,
                                   serial: Int32(truncatingIfNeeded: MonotonicClock.now().microseconds))
        return (audio, [sink])
    }
}

extension ShareCommand {
    /// `--sdp FILE`: what a receiver opens, written before the first packet.
    private func writeSDP(_ sink: PeerSink, _ log: Log) throws(ShareError) {
        let text = sink.sessionDescription().render()
        guard let path = peer.sdp else {
            if !log.quiet { log.line("rtcshare: sending to \(sink.configuration.videoPeer) (no --sdp: receivers need the key from --srtp-key)") }
            return
        }
        do {
            try FileOutput.write(text, to: path, mode: 0o600)  // it holds the SRTP key
        } catch {
            throw .output("--sdp \(path): \(error)")
        }
        if !log.quiet { log.line("rtcshare: sending to \(sink.configuration.videoPeer); SDP in \(path)") }
    }
}

extension String {
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}
