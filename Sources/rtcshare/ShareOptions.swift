import ArgumentParser
import RTCShare
import RTCShareCore
import RTCShareMedia

/// Options shared by `share` and `plan`: what is sent and within what memory.
struct ShareOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Picture source: testsrc, y4m:PATH, y4m:- (standard input), x11[:DISPLAY] (the screen), or ipc:PATH (a producer process, docs/ipc.md).",
                               valueName: "source"))
    var source = "testsrc"

    @Option(help: ArgumentHelp("Output size WxH (even sides), or auto for the largest that fits the memory cap.",
                               valueName: "size"))
    var size = "auto"

    @Option(help: "Frames per second sent (the last frame is repeated to hold it).")
    var fps = 20

    @Option(name: .customLong("idle-fps"), help: "Frame rate once the screen has been static for a moment (default: no idle mode).")
    var idleFps: Int?

    @Option(help: "VP8 bitrate in kbit/s.")
    var bitrate = 1500

    @Option(name: .customLong("mem-cap"), help: ArgumentHelp("Whole-process memory budget, e.g. 50M or 64M.",
                                                           valueName: "bytes"))
    var memCap = "50M"

    @Option(name: .customLong("output-orientation"),
            help: "Output shape: landscape, portrait, or source (the first frame's upright shape).")
    var outputOrientation = "landscape"

    @Option(name: .customLong("simulate-orientation"),
            help: "testsrc only: emit pixels turned as a phone would and tagged N (EXIF 1..8).")
    var simulateOrientation: Int?

    @Option(name: .customLong("ipc-max-size"),
            help: ArgumentHelp("ipc only: largest picture a producer may send, either orientation (fixes the frame memory).",
                               valueName: "size"))
    var ipcMaxSize = "1280x720"

    @Option(help: ArgumentHelp("Audio: testtone (a sine), wav:PATH (16-bit PCM WAV or RIFX, mono/stereo, 8-192 kHz), ipc (the producer's PCM, with --source ipc:PATH) or none. Default: ipc with --source ipc:PATH, none otherwise. Sent as Opus, 20 ms at 48 kHz.",
                               valueName: "audio"))
    var audio: String?

    @Option(name: .customLong("audio-bitrate"), help: "Opus bitrate in kbit/s (6...510).")
    var audioBitrate = AudioConfiguration.defaultBitrate / 1000

    @Option(name: .customLong("tone-hz"), help: ArgumentHelp("testtone only: the tone's frequency in Hz.", visibility: .hidden))
    var toneHz = TestTone.defaultFrequency

    @Option(name: .customLong("testsrc-fps"), help: ArgumentHelp("testsrc only: its capture rate.", visibility: .hidden))
    var testsrcFps = 30

    @Option(name: .customLong("testsrc-stall"),
            help: ArgumentHelp("testsrc only: simulate a capture stall, AFTER:FOR seconds.", visibility: .hidden))
    var testsrcStall: String?

    /// The parsed --testsrc-stall.
    var stall: (after: MediaDuration, duration: MediaDuration)? {
        guard let text = testsrcStall else { return nil }
        let parts = text.split(separator: ":")
        guard parts.count == 2, let a = Double(parts[0]), let b = Double(parts[1]), a >= 0, b > 0 else { return nil }
        return (.microseconds(Int64(a * 1_000_000)), .microseconds(Int64(b * 1_000_000)))
    }

    func validate() throws {
        if testsrcStall != nil, stall == nil {
            throw ValidationError("--testsrc-stall must be AFTER:FOR in seconds, e.g. 1:3")
        }
        guard (1...60).contains(fps) else { throw ValidationError("--fps must be 1...60, not \(fps)") }
        if let idleFps, !(1...fps).contains(idleFps) {
            throw ValidationError("--idle-fps must be 1...\(fps) (at most --fps), not \(idleFps)")
        }
        guard (50...20_000).contains(bitrate) else {
            throw ValidationError("--bitrate must be 50...20000 kbit/s, not \(bitrate)")
        }
        guard size == "auto" || PictureSize(parsing: size) != nil else {
            throw ValidationError("--size must be auto or WxH with even sides in 16...4096, not '\(size)'")
        }
        guard Self.parseBytes(memCap) != nil else {
            throw ValidationError("--mem-cap must be a size such as 50M, 64M or 1G, not '\(memCap)'")
        }
        guard OutputOrientation(rawValue: outputOrientation) != nil else {
            throw ValidationError("--output-orientation must be landscape, portrait or source, not '\(outputOrientation)'")
        }
        if let n = simulateOrientation {
            guard (1...8).contains(n) else { throw ValidationError("--simulate-orientation must be 1...8, not \(n)") }
            guard source == "testsrc" else { throw ValidationError("--simulate-orientation works with --source testsrc only") }
        }
        guard source == "testsrc" || source.hasPrefix("y4m:") || source == "x11" || source.hasPrefix("x11:")
                || source.hasPrefix("ipc:") else {
            throw ValidationError("--source must be testsrc, y4m:PATH, y4m:-, x11[:DISPLAY] or ipc:PATH, not '\(source)'")
        }
        guard source != "ipc:" else { throw ValidationError("--source ipc: needs the path of the socket to listen on") }
        guard PictureSize(parsing: ipcMaxSize) != nil else {
            throw ValidationError("--ipc-max-size must be WxH with even sides in 16...4096, not '\(ipcMaxSize)'")
        }
        if let audio, audio != "none", audio != "testtone", audio != "ipc", !audio.hasPrefix("wav:") {
            throw ValidationError("--audio must be testtone, wav:PATH, ipc or none, not '\(audio)'")
        }
        guard audio != "wav:" else { throw ValidationError("--audio wav: needs the path of a WAV file") }
        if audio == "ipc", !source.hasPrefix("ipc:") {
            throw ValidationError("--audio ipc needs --source ipc:PATH (the producer sends the audio)")
        }
        guard (6...510).contains(audioBitrate) else {
            throw ValidationError("--audio-bitrate must be 6...510 kbit/s, not \(audioBitrate)")
        }
        guard TestTone.frequencies.contains(toneHz) else {
            throw ValidationError("--tone-hz must be 20...20000 Hz, not \(toneHz)")
        }
        guard source != "x11:" else { throw ValidationError("--source x11: needs a display, e.g. x11::0 (or x11 for $DISPLAY)") }
        guard source != "y4m:" else { throw ValidationError("--source y4m: needs a path (or - for standard input)") }
    }

    /// "50M", "64MiB", "1G", "52428800" → bytes.
    static func parseBytes(_ text: String) -> Int? {
        var digits = Substring(text.uppercased())
        var unit = 1
        for (suffix, factor) in [("MIB", 1 << 20), ("GIB", 1 << 30), ("KIB", 1 << 10), ("M", 1 << 20),
                                 ("G", 1 << 30), ("K", 1 << 10)] where digits.hasSuffix(suffix) {
            digits = digits.dropLast(suffix.count)
            unit = factor
            break
        }
        guard let n = Int(digits), n > 0, n <= (1 << 40) / unit else { return nil }
        return n * unit
    }

    var configuration: ShareConfiguration {
        var c = ShareConfiguration()
        c.outputSize = PictureSize(parsing: size)
        c.outputOrientation = OutputOrientation(rawValue: outputOrientation) ?? .landscape
        c.framesPerSecond = fps
        c.idleFramesPerSecond = idleFps
        c.bitrateKbps = bitrate
        c.memoryCapBytes = Self.parseBytes(memCap) ?? (50 << 20)
        c.audio = audioInput.map { AudioConfiguration(input: $0, bitrate: audioBitrate * 1000) }
        return c
    }
}

extension ShareOptions {
    /// Whether the source is the X11 screen (`x11` or `x11:DISPLAY`).
    var isX11: Bool { source == "x11" || source.hasPrefix("x11:") }
    /// The display of `x11:DISPLAY`; nil for plain `x11` (which takes $DISPLAY).
    var x11Display: String? { source.hasPrefix("x11:") ? String(source.dropFirst("x11:".count)) : nil }
}

extension ShareOptions {
    /// The socket path of `ipc:PATH`, or nil for other sources.
    var ipcPath: String? { source.hasPrefix("ipc:") ? String(source.dropFirst("ipc:".count)) : nil }
}

extension ShareOptions {
    /// The parsed --audio, with its default (ipc for an ipc source, else none); nil: no audio.
    var audioInput: AudioConfiguration.Input? {
        switch audio ?? (ipcPath != nil ? "ipc" : "none") {
        case "testtone": .testTone(frequency: toneHz)
        case "ipc": .ipc
        case let text where text.hasPrefix("wav:"): .wav(path: String(text.dropFirst("wav:".count)))
        default: nil
        }
    }
}
