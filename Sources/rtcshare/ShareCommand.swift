import Glibc
import RTCShare

/// `rtcshare [share]`: runs a share from a source to the outputs given.
struct ShareCommand: CommandLineCommand {
    static let name = "share"
    static let abstract = "Capture, turn upright, encode and send (default command)."
    static let groupTitles = ["peer": "Sending to a peer", "whip": "Publishing to a WebRTC server (WHIP)",
                              "output": "Local output and reporting"]

    var options = ShareOptions()
    var peer = PeerOptions()
    var whip = WHIPOptions()
    var output: String?
    var audioOutput: String?
    var duration: Double?
    var quiet = false
    var statsJSON: String?

    static var options: [OptionSpec<ShareCommand>] {
        ShareOptions.options.map { $0.lifted(into: \.options) }
        + PeerOptions.options.map { $0.lifted(into: \.peer) }
        + WHIPOptions.options.map { $0.lifted(into: \.whip) }
        + [
            .option("output", \.output, value: "file.ivf", help: "Write the video stream to an IVF file (VP8, or H.264 as fourcc H264)."),
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
        try whip.validate()
        if whip.whip != nil, peer.peer != nil { throw ValidationError("give --peer or --whip, not both") }
        if let duration, !(duration > 0 && duration <= 366 * 86_400) {
            throw ValidationError("--duration must be a positive number of seconds")
        }
        guard output != nil || peer.peer != nil || whip.whip != nil || audioOutput != nil else {
            throw ValidationError("nothing to send to: give --whip URL, --peer HOST:PORT or --output FILE.ivf")
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
        // Before any other thread, and before the agent: a stop while the share is still being
        // made (the WHIP POST, STUN gathering) ends it too (see ShareStop).
        let stop = ShareStop(quiet: quiet)
        let signals = SignalWatcher { stop.stop() }
        defer { _ = signals }
        let log = Log(quiet: quiet, statsJSONPath: statsJSON)
        // Under systemd (Type=notify): readiness, the watchdog's pings and a status line.
        let service = ServiceNotifier()
        if let warning = service?.watchdogWarning { log.line("rtcshare: warning: " + warning, level: .warning) }
        let peerConfiguration: PeerConfiguration?
        do {
            peerConfiguration = try peer.apply(to: &configuration)
        } catch {
            log.fail(error.description)
        }
        if let peerConfiguration, peerConfiguration.protection == nil, !quiet {
            log.line("rtcshare: warning: --insecure: RTP goes unencrypted; anyone on the path can watch the share",
                     level: .warning)
        }

        var agentConfiguration = ShareAgent.Configuration()
        agentConfiguration.share = configuration
        agentConfiguration.source = options.sourceChoice
        agentConfiguration.transport = peerConfiguration.map { .peer($0) } ?? .none
        do {
            if var whipConfiguration = try whip.configuration(audio: configuration.audio != nil,
                                                              framesPerSecond: configuration.framesPerSecond) {
                whipConfiguration.stop = stop.whip
                agentConfiguration.transport = .whip(whipConfiguration)
            }
        } catch {
            // --whip-bind and --stun passed `validate`: what fails here is the token.
            log.fail(error.description, status: .unauthorized)
        }
        let agent: ShareAgent
        do {
            agent = try ShareAgent(configuration: agentConfiguration) { event in
                log.event(event)
                service?.event(event)
            }
        } catch {
            stop.failed()
            if error.failureClass == .stopped {
                if !quiet { log.line(ShareStop.stoppedWhileMaking) }
                exit(ExitStatus.finished.rawValue)
            }
            log.fail(error)
        }
        // A stop that came while the agent was being made ends the share at once (its WHIP
        // session, if one was made, is DELETEd as the run ends).
        stop.made(agent)
        if let name = agent.audioName, !quiet { log.line("rtcshare: audio: \(name)") }
        do {
            if agent.peerAddress != nil {
                try writeSDP(agent, log)
                if peer.startDelay > 0 {
                    // Interruptible: a signal during the wait still ends the run at once.
                    let until = MonotonicClock.now() + .microseconds(Int64(peer.startDelay * 1_000_000))
                    while MonotonicClock.now() < until && !agent.isStopRequested {
                        MonotonicClock.sleep(until: min(until, MonotonicClock.now() + .milliseconds(20)))
                    }
                }
            }
            let stats = try agent.run()
            log.summary(stats, plan: agent.plan, transport: agent.transportStats)
        } catch {
            log.fail(error)
        }
    }
}

extension ShareCommand {
    /// `--sdp FILE`: what a receiver opens, written before the first packet.
    private func writeSDP(_ agent: ShareAgent, _ log: Log) throws(ShareError) {
        guard let description = agent.peerSessionDescription(), let address = agent.peerAddress else { return }
        let text = description.render()
        guard let path = peer.sdp else {
            if !log.quiet { log.line("rtcshare: sending to \(address) (no --sdp: receivers need the key from --srtp-key)") }
            return
        }
        do {
            try FileOutput.write(text, to: path, mode: 0o600)  // it holds the SRTP key
        } catch {
            throw .output("--sdp \(path): \(error)")
        }
        if !log.quiet { log.line("rtcshare: sending to \(address); SDP in \(path)") }
    }
}

extension String {
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}
