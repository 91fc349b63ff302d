import Glibc

/// `rtcshare`: the command-line front of the library.
@main
enum RTCShareCommand {
    static func main() {
        // libcurl's chain loads GnuTLS (for librtmp and libldap, never used here; HTTPS goes
        // through OpenSSL), whose constructor initialises itself and, when memory is short,
        // prints "Error in GnuTLS initialization" on stderr. Its documented switch skips that
        // implicit init. Set while the process has one thread, before any library is loaded.
        setenv("GNUTLS_NO_IMPLICIT_INIT", "1", 0)
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
