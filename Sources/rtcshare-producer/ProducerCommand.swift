import ArgumentParser
import Glibc
import RTCShareCore
import RTCShareMedia

/// `rtcshare-producer SOCKET`: the reference IPC producer (docs/ipc.md). Streams the test
/// pattern, turned and tagged as a phone would, plus a sine tone, into `rtcshare --source
/// ipc:SOCKET`, reconnecting whenever rtcshare is not there.
@main
struct ProducerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtcshare-producer",
        abstract: "Stream the test pattern and a tone into rtcshare --source ipc:SOCKET.")

    @Argument(help: "The socket rtcshare listens on.")
    var socket: String

    @Option(help: ArgumentHelp("Upright picture size WxH (even sides).", valueName: "size"))
    var size = "1280x720"

    @Option(help: "Frames per second.")
    var fps = 30

    @Option(help: "Pixel format written to the shared buffers: i420, nv12 or bgra.")
    var format = "bgra"

    @Option(help: "Turn the pixels as a phone would and tag them N (EXIF 1..8).")
    var orientation = 1

    @Option(help: ArgumentHelp("Sine tone frequency in Hz.", valueName: "hz"))
    var tone = 440.0

    @Option(name: .customLong("audio-endian"), help: "Byte order of the PCM sent: le (little) or be (big).")
    var audioEndian = "le"

    @Option(name: .customLong("audio-rate"), help: "PCM sample rate in Hz (8000...192000, a multiple of 50).")
    var audioRate = 48_000

    @Option(name: .customLong("audio-channels"), help: "PCM channels: 1 or 2.")
    var audioChannels = 2

    @Flag(name: .customLong("no-audio"), help: "Send no audio.")
    var noAudio = false

    @Option(help: "Stop after this many seconds (default: run until interrupted).")
    var duration: Double?

    @Option(name: .customLong("first-counter"), help: "The frame marker's first counter value.")
    var firstCounter: UInt32 = 0

    @Option(help: "Frame buffers in the shared memory ring (1...32).")
    var buffers = 4

    @Option(help: "Producer name sent in HELLO.")
    var name = "rtcshare-producer"

    @Option(name: .customLong("stride-align"),
            help: ArgumentHelp("Row alignment of the buffers in bytes (a power of two).", visibility: .hidden))
    var strideAlign = 16

    @Flag(help: "Print only errors.")
    var quiet = false

    func validate() throws {
        guard Self.parseSize(size) != nil else {
            throw ValidationError("--size must be WxH with even sides in 16...4096, not '\(size)'")
        }
        guard (1...120).contains(fps) else { throw ValidationError("--fps must be 1...120, not \(fps)") }
        guard ProducerFormat(rawValue: format) != nil else {
            throw ValidationError("--format must be i420, nv12 or bgra, not '\(format)'")
        }
        guard (1...8).contains(orientation) else { throw ValidationError("--orientation must be 1...8, not \(orientation)") }
        guard tone > 0, tone < 24_000 else { throw ValidationError("--tone must be in (0, 24000) Hz") }
        guard ["le", "be", "little", "big"].contains(audioEndian) else {
            throw ValidationError("--audio-endian must be le (little) or be (big), not '\(audioEndian)'")
        }
        guard IPCProtocol.sampleRates.contains(UInt32(clamping: audioRate)), audioRate % 50 == 0 else {
            throw ValidationError("--audio-rate must be 8000...192000 Hz and a multiple of 50, not \(audioRate)")
        }
        guard audioChannels == 1 || audioChannels == 2 else {
            throw ValidationError("--audio-channels must be 1 or 2, not \(audioChannels)")
        }
        guard tone < Double(audioRate) / 2 else { throw ValidationError("--tone must be below half the --audio-rate") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds") }
        guard (1...IPCProtocol.maxBuffers).contains(buffers) else {
            throw ValidationError("--buffers must be 1...\(IPCProtocol.maxBuffers), not \(buffers)")
        }
        guard strideAlign >= 1, strideAlign <= 4096, strideAlign & (strideAlign - 1) == 0 else {
            throw ValidationError("--stride-align must be a power of two up to 4096")
        }
    }

    /// "WxH" with even sides in 16...4096.
    static func parseSize(_ text: String) -> (width: Int, height: Int)? {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
              (16...4096).contains(w), (16...4096).contains(h), w % 2 == 0, h % 2 == 0 else { return nil }
        return (w, h)
    }

    func run() throws {
        let settings = Producer.Settings(
            socket: socket, size: Self.parseSize(size)!, framesPerSecond: fps,
            format: ProducerFormat(rawValue: format)!, orientation: Orientation(rawValue: orientation)!,
            toneHz: noAudio ? nil : tone, bigEndianAudio: audioEndian == "be" || audioEndian == "big",
            audioRate: audioRate, audioChannels: audioChannels,
            duration: duration.map { MediaDuration(microseconds: Int64($0 * 1_000_000)) },
            firstCounter: firstCounter, bufferCount: buffers, name: name, strideAlign: strideAlign, quiet: quiet)
        do {
            try Producer(settings).run()
        } catch {
            Producer.say("error: \(error)")
            throw ExitCode(1)
        }
    }
}
