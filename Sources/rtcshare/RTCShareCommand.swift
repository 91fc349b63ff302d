/// `rtcshare`: the command-line front of the library.
@main
enum RTCShareCommand {
    static func main() {
        CommandLineTool(
            name: "rtcshare",
            abstract: "Screen-sharing sender: VP8 or H.264 + Opus over RTP/SRTP within a fixed memory budget.",
            version: BuildInfo.versionLine,
            commands: [ShareCommand.self, PlanCommand.self, ReceiveCommand.self, BuildInfoCommand.self],
            defaultCommand: ShareCommand.self
        ).main()
    }
}

struct BuildInfoCommand: CommandLineCommand {
    static let name = "build-info"
    static let abstract = "Print the linked libraries and the CPU features the pixel kernels use."
    static var options: [OptionSpec<BuildInfoCommand>] { [] }

    func run() throws { print(BuildInfo.report) }
}
