import Glibc
import RTCShare

/// `rtcshare plan`: where the memory would go, and whether it fits.
struct PlanCommand: CommandLineCommand {
    static let name = "plan"
    static let abstract = "Print the memory budget per component and the largest output size that fits."

    static let groupTitles = ["peer": "Sending to a peer", "whip": "Publishing to a WebRTC server (WHIP)"]

    var options = ShareOptions()
    var peer = PeerOptions()
    var whip = WHIPOptions()

    static var options: [OptionSpec<PlanCommand>] {
        ShareOptions.options.map { $0.lifted(into: \.options) } + PeerOptions.options.map { $0.lifted(into: \.peer) }
            + WHIPOptions.options.map { $0.lifted(into: \.whip) }
    }

    func validate() throws(ValidationError) {
        try options.validate()
        try peer.validate()
        try whip.validate()
        if whip.whip != nil, peer.peer != nil { throw ValidationError("give --peer or --whip, not both") }
    }

    func run() throws {
        var configuration = options.configuration
        _ = try peer.apply(to: &configuration)
        if let w = try whip.configuration(audio: configuration.audio != nil, framesPerSecond: configuration.framesPerSecond) {
            // What the WHIP session takes (nothing is sent: the plan only counts it).
            configuration.countOutput(whip: w)
        } else {
            // Without a server to answer, auto is VP8.
            configuration.videoCodec = VideoCodecChoice(rawValue: configuration.videoCodec.resolvedAlone.rawValue) ?? .vp8
        }
        do {
            switch options.sourceChoice {
            case .testPattern(_, let orientation, _, _):
                let asked = configuration.outputSize ?? PictureSize(width: 1920, height: 1080)
                report(TestSource(width: asked.width, height: asked.height, orientation: orientation), configuration)
            case .x11(let display, let cursor):
                let source = try X11Source(display: display, framesPerSecond: configuration.framesPerSecond, cursor: cursor)
                var auto = configuration
                auto.outputSize = nil
                let largest = source.fit(auto).outputSize  // the screen is shrunk to the output as it is read
                report(source, source.fit(configuration), largestFitting: largest)
            case .wayland(let output, let cursor):
                let source = try WaylandSource(output: output, framesPerSecond: configuration.framesPerSecond, cursor: cursor)
                var auto = configuration
                auto.outputSize = nil
                let largest = source.fit(auto).outputSize
                report(source, source.fit(configuration), largestFitting: largest)
            case .portal(let cursor, let tokenFile):
                let source = try PortalSource(framesPerSecond: configuration.framesPerSecond, cursor: cursor,
                                              tokenFile: (tokenFile ?? PortalRestoreToken.defaultPath).map(PortalRestoreToken.init))
                var auto = configuration
                auto.outputSize = nil
                let largest = source.fit(auto).outputSize
                report(source, source.fit(configuration), largestFitting: largest)
            case .ipc(let path, let maxSize):
                report(IPCSource(path: path, maxSize: maxSize), configuration)
            case .y4m(let path):
                report(try Y4MSource(path: path), configuration)
            case .pushed:
                preconditionFailure("the CLI has no pushed source (ShareSourceChoice.parse refuses push)")
            }
        } catch {
            Log(quiet: false).fail("\(error)")
        }
    }

    private func report<S: VideoSource>(_ source: S, _ configuration: ShareConfiguration,
                                        largestFitting: PictureSize? = nil) {
        var auto = configuration
        auto.outputSize = nil
        let largest = try? MemoryPlanner.resolve(auto, for: source)
        let plan: MemoryPlan
        do {
            plan = try MemoryPlanner.resolve(configuration, for: source)
        } catch {
            // Show the asked size's plan anyway, then say it does not fit.
            let asked = configuration.outputSize ?? PictureSize(width: source.frameWidth, height: source.frameHeight)
            let p = MemoryPlanner.plan(configuration, for: source, output: asked)
            print(table(p))
            print("does not fit: \(error)")
            exit(1)  // a plan that does not fit is an answer, and a failure for scripts
        }
        print(table(plan))
        if let size = largestFitting ?? largest?.outputSize { print("largest output that fits: \(size)") }
    }

    private func table(_ plan: MemoryPlan) -> String {
        let codec = plan.videoCodec == .auto ? "VP8 or H.264" : plan.videoCodec.resolvedAlone.description
        var lines = ["memory plan for \(codec) \(plan.outputSize), cap \(mib(plan.capBytes)):"]
        for item in plan.items {
            lines.append("  " + pad(item.name) + mib(item.bytes))
        }
        if plan.startupPeakBytes > 0 || plan.closingPeakBytes > 0 || plan.reconnectPeakBytes > 0
            || plan.connectingPeakBytes > 0 {
            lines.append("  " + pad("running") + mib(plan.totalBytes))
        }
        if plan.startupPeakBytes > 0 {
            let encoder = MemoryPlanner.encoderName(plan.videoCodec)
            lines.append("  " + pad("peak at start-up (runtime + \(encoder) encoder)") + mib(plan.startupPeakBytes))
        }
        if plan.connectingPeakBytes > 0 {
            lines.append("  " + pad("peak before the start-up's pages go") + mib(plan.connectingPeakBytes))
        }
        if plan.closingPeakBytes > 0 {
            lines.append("  " + pad("peak at closing (encoder gone, libcurl for the DELETE)") + mib(plan.closingPeakBytes))
        }
        if plan.reconnectPeakBytes > 0 {
            lines.append("  " + pad("peak reconnecting (libcurl for DELETE and POST)") + mib(plan.reconnectPeakBytes))
        }
        lines.append("  " + pad("total") + mib(plan.peakBytes)
                     + (plan.fits ? "  fits" : "  DOES NOT FIT"))
        return lines.joined(separator: "\n")
    }

    private func pad(_ text: String) -> String {
        text.count >= 48 ? text + " " : text + String(repeating: " ", count: 48 - text.count)
    }

    private func mib(_ bytes: Int) -> String {
        // A line may take away (the start-up's pages let go): its sign, then the magnitude.
        let tenths = (abs(bytes) * 10 + (1 << 19)) >> 20
        return "\(bytes < 0 ? "-" : "")\(tenths / 10).\(tenths % 10) MiB"
    }
}
