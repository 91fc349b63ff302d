import ArgumentParser

/// `rtcshare`: the command-line front of the library.
@main
struct RTCShareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtcshare",
        abstract: "Screen-sharing sender: VP8 (+ Opus) within a fixed memory budget.",
        discussion: """
            Streaming to a peer (--peer host:port) and publishing over WHIP (--whip URL) are not
            available yet; `rtcshare share --output FILE.ivf` encodes to a file.
            """,
        version: BuildInfo.versionLine,
        subcommands: [ShareCommand.self, PlanCommand.self, BuildInfoCommand.self],
        defaultSubcommand: ShareCommand.self
    )
}

struct BuildInfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build-info",
        abstract: "Print the linked libraries and the CPU features the pixel kernels use.")

    func run() throws { print(BuildInfo.report) }
}
