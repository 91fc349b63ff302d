import ArgumentParser
import Glibc
import RTCShare
import RTCShareCore
import RTCShareIO
import RTCShareMedia

/// `rtcshare [share]`: runs a share from a source to the outputs given.
struct ShareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Capture, turn upright, encode and send (default command).")

    @OptionGroup var options: ShareOptions

    @Option(help: ArgumentHelp("Write the VP8 stream to an IVF file.", valueName: "file.ivf"))
    var output: String?

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    @Flag(help: "Print only errors.")
    var quiet = false

    func validate() throws {
        if let duration, !(duration > 0 && duration <= 366 * 86_400) {
            throw ValidationError("--duration must be a positive number of seconds")
        }
        guard output != nil else {
            throw ValidationError("nothing to send to: give --output FILE.ivf (--peer and --whip are not available yet)")
        }
    }

    func run() throws {
        var configuration = options.configuration
        configuration.ivfPath = output
        configuration.duration = duration.map { .microseconds(Int64($0 * 1_000_000)) }
        let log = Log(quiet: quiet)

        do {
            if options.source == "testsrc" {
                let asked = configuration.outputSize ?? PictureSize(width: 1280, height: 720)
                let orientation = Orientation(rawValue: options.simulateOrientation ?? 1) ?? .up
                let source = TestSource(width: asked.width, height: asked.height,
                                        framesPerSecond: options.testsrcFps, orientation: orientation,
                                        stallAfter: options.stall?.after, stallFor: options.stall?.duration ?? .zero)
                try runShare(source, configuration, log)
            } else if options.isX11 {
                let source = try X11Source(display: options.x11Display, framesPerSecond: configuration.framesPerSecond)
                try runShare(source, source.fit(configuration), log)
            } else if let path = options.ipcPath {
                let quiet = self.quiet
                let source = IPCSource(path: path, maxSize: PictureSize(parsing: options.ipcMaxSize) ?? IPCSource.defaultMaxSize,
                                       log: { if !quiet { log.line("rtcshare: \($0)") } })
                try runShare(source, configuration, log)
            } else {
                let path = String(options.source.dropFirst("y4m:".count))
                let source = try Y4MSource(path: path, fallbackFramesPerSecond: configuration.framesPerSecond)
                try runShare(source, configuration, log)
            }
        } catch let error as SourceError {
            log.fail(error.description)
        } catch let error as ShareError {
            log.fail(error.description)
        }
    }

    private func runShare<S: VideoSource>(_ source: S, _ configuration: ShareConfiguration, _ log: Log) throws(ShareError) {
        let plan = try MemoryPlanner.resolve(configuration, for: source)
        let budget: MemoryBudget
        do {
            budget = try MemoryBudget(capBytes: plan.budgetBytes)
        } catch {
            throw .doesNotFit("cannot map the \(plan.budgetBytes >> 10) KiB frame budget: \(error)")
        }
        let session = ShareSession(configuration: configuration) { event in log.event(event) }
        let signals = SignalWatcher { session.stop() }
        defer { _ = signals }
        let stats = try session.run(source: source, budget: budget, plan: plan)
        log.summary(stats, plan: plan)
    }
}

/// Lines for the user on standard error: events as they happen and a summary at the end.
struct Log: Sendable {
    let quiet: Bool

    func event(_ event: ShareEvent) {
        guard !quiet else { return }
        switch event {
        case .starting(let source, let output, let fps):
            line("rtcshare: starting: \(source) -> VP8 \(output) at \(fps) fps")
        case .started:
            break
        case .sourceStalled(let attempt):
            line("rtcshare: source stalled; restarting it (attempt \(attempt))")
        case .sourceRecovered(let ms):
            line("rtcshare: source recovered after \(ms) ms")
        case .finished(let reason):
            line("rtcshare: finished: \(reason)")
        }
    }

    func summary(_ s: ShareStats, plan: MemoryPlan) {
        guard !quiet else { return }
        let seconds = Double(s.elapsed.microseconds) / 1_000_000
        let kbps = seconds > 0 ? Double(s.encodedBytes) * 8 / 1000 / seconds : 0
        line("rtcshare: \(s.encodedFrames) frames in \(String(format1: seconds)) s (\(s.repeatedFrames) repeats, "
             + "\(s.keyframes) keyframes), \(Int(kbps)) kbit/s; source \(s.sourceFrames) frames, "
             + "dropped \(s.droppedTooFast) too fast + \(s.droppedByRing) queue + \(s.droppedByEncoder) encoder; "
             + "restarts \(s.sourceRestarts); peak RSS \(PeakMemory.residentBytes() >> 20) MiB")
    }

    func fail(_ message: String) -> Never {
        line("rtcshare: error: \(message)")
        exit(1)
    }

    func line(_ text: String) {
        var text = text
        text.append("\n")
        _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    }
}

extension String {
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}
