import RTCShare

/// Options shared by `share` and `plan`: what is sent and within what memory.
struct ShareOptions: CommandLineOptions {
    var source = "testsrc"
    var size = "auto"
    var fps = 20
    var idleFps: Int?
    var bitrate = 1500
    var codec = "auto"
    var memCap = "50M"
    var memSoftLimit: String?
    var outputOrientation = "landscape"
    var simulateOrientation: Int?
    var ipcMaxSize = "1280x720"
    var audio: String?
    var audioBitrate = AudioConfiguration.defaultBitrate / 1000
    var toneHz = TestTone.defaultFrequency
    var testsrcFps = 30
    var testsrcStall: String?
    var cursor = false
    var portalTokenFile: String?

    static var options: [OptionSpec<ShareOptions>] {
        let d = ShareOptions()
        return [
            .option("source", \.source, help: "Picture source: testsrc, y4m:PATH, y4m:- (standard input), x11[:DISPLAY] (the screen), wayland[:OUTPUT] (an output of a wlroots compositor, sway/labwc/cage, in $WAYLAND_DISPLAY; the first by default), portal (the screen the desktop's ScreenCast portal hands out over PipeWire: GNOME, KDE, wlroots), or ipc:PATH (a producer process, docs/ipc.md).", defaults: d),
            .flag("cursor", \.cursor, help: "Draw the pointer into the picture (x11, wayland and portal sources)."),
            .option("portal-token-file", \.portalTokenFile, value: "path",
                    help: "portal only: where the portal's restore token is kept, so a restarted share needs no dialog (default: $XDG_STATE_HOME/rtcshare/portal-restore-token, else ~/.local/state/rtcshare/portal-restore-token)."),
            .option("size", \.size, help: "Output size WxH (even sides), or auto for the largest that fits the memory cap.", defaults: d),
            .option("fps", \.fps, help: "Frames per second sent (the last frame is repeated to hold it).", defaults: d),
            .option("idle-fps", \.idleFps, help: "Frame rate once the screen has been static for a moment (default: no idle mode)."),
            .option("bitrate", \.bitrate, value: "kbit/s", help: "Video bitrate in kbit/s.", defaults: d),
            .option("codec", \.codec, help: "Video codec: vp8, h264 (constrained baseline, openh264), or auto (VP8 with --peer; with --whip both are offered, VP8 first, and the server picks).", defaults: d),
            .option("mem-cap", \.memCap, value: "bytes", help: "Whole-process memory budget, e.g. 50M or 64M.", defaults: d),
            .option("mem-soft-limit", \.memSoftLimit, value: "bytes",
                    help: "Resident size at which a running share gives way, frame rate first, then output size (default: 90% of --mem-cap; 0: never)."),
            .option("output-orientation", \.outputOrientation, value: "shape",
                    help: "Output shape: landscape, portrait, or source (the first frame's upright shape).", defaults: d),
            .option("simulate-orientation", \.simulateOrientation, value: "N",
                    help: "testsrc only: emit pixels turned as a phone would and tagged N (EXIF 1..8)."),
            .option("ipc-max-size", \.ipcMaxSize, value: "size",
                    help: "ipc only: largest picture a producer may send, either orientation (fixes the frame memory).", defaults: d),
            .option("audio", \.audio, help: "Audio: testtone (a sine), wav:PATH (16-bit PCM WAV or RIFX, mono/stereo, 8-192 kHz), ipc (the producer's PCM, with --source ipc:PATH) or none. Default: ipc with --source ipc:PATH, none otherwise. Sent as Opus, 20 ms at 48 kHz."),
            .option("audio-bitrate", \.audioBitrate, value: "kbit/s", help: "Opus bitrate in kbit/s (6...510).", defaults: d),
            .option("tone-hz", \.toneHz, help: "testtone only: the tone's frequency in Hz.", hidden: true, defaults: d),
            .option("testsrc-fps", \.testsrcFps, help: "testsrc only: its capture rate.", hidden: true, defaults: d),
            .option("testsrc-stall", \.testsrcStall, value: "after:for", help: "testsrc only: simulate a capture stall, AFTER:FOR seconds.", hidden: true),
        ]
    }

    /// The parsed --testsrc-stall.
    var stall: (after: MediaDuration, duration: MediaDuration)? {
        guard let text = testsrcStall else { return nil }
        let parts = text.split(separator: ":")
        guard parts.count == 2, let a = Double(parts[0]), let b = Double(parts[1]), a >= 0, b > 0 else { return nil }
        return (.microseconds(Int64(a * 1_000_000)), .microseconds(Int64(b * 1_000_000)))
    }

    func validate() throws(ValidationError) {
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
        guard VideoCodecChoice(rawValue: codec) != nil else {
            throw ValidationError("--codec must be vp8, h264 or auto, not '\(codec)'")
        }
        guard size == "auto" || PictureSize(parsing: size) != nil else {
            throw ValidationError("--size must be auto or WxH with even sides in 16...4096, not '\(size)'")
        }
        if let memSoftLimit, memSoftLimit != "0", Self.parseBytes(memSoftLimit) == nil {
            throw ValidationError("--mem-soft-limit must be a size such as 45M, or 0, not '\(memSoftLimit)'")
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
        do { _ = try ShareSourceChoice.parse(source) } catch { throw ValidationError("--source \(error)") }
        guard PictureSize(parsing: ipcMaxSize) != nil else {
            throw ValidationError("--ipc-max-size must be WxH with even sides in 16...4096, not '\(ipcMaxSize)'")
        }
        if let audio, audio != "none", audio != "testtone", audio != "ipc", !audio.hasPrefix("wav:") {
            throw ValidationError("--audio must be testtone, wav:PATH, ipc or none, not '\(audio)'")
        }
        guard audio != "wav:" else { throw ValidationError("--audio wav: needs the path of a WAV file") }
        if audio == "ipc", ipcPath == nil {
            throw ValidationError("--audio ipc needs --source ipc:PATH (the producer sends the audio)")
        }
        guard (6...510).contains(audioBitrate) else {
            throw ValidationError("--audio-bitrate must be 6...510 kbit/s, not \(audioBitrate)")
        }
        guard TestTone.frequencies.contains(toneHz) else {
            throw ValidationError("--tone-hz must be 20...20000 Hz, not \(toneHz)")
        }
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
        c.videoCodec = VideoCodecChoice(rawValue: codec) ?? .auto
        c.memoryCapBytes = Self.parseBytes(memCap) ?? (50 << 20)
        switch memSoftLimit {
        case nil: c.memorySoftLimitBytes = c.memoryCapBytes / 10 * 9
        case "0"?: c.memorySoftLimitBytes = nil
        case let text?: c.memorySoftLimitBytes = Self.parseBytes(text)
        }
        c.audio = audioInput.map { AudioConfiguration(input: $0, bitrate: audioBitrate * 1000) }
        // The CLI owns every thread of its process, and they allocate only at their start.
        c.reclaimEncoderStartupMemory = true
        return c
    }
}

extension ShareOptions {
    /// The socket path of `ipc:PATH`, or nil for other sources.
    var ipcPath: String? {
        if case .ipc(let path, _)? = try? ShareSourceChoice.parse(source) { path } else { nil }
    }

    /// The source as the library names it, with the options that tune it (validated first).
    var sourceChoice: ShareSourceChoice {
        switch (try? ShareSourceChoice.parse(source)) ?? .testPattern() {
        case .testPattern:
            .testPattern(framesPerSecond: testsrcFps,
                         orientation: Orientation(rawValue: simulateOrientation ?? 1) ?? .up,
                         stallAfter: stall?.after, stallFor: stall?.duration ?? .zero)
        case .ipc(let path, _):
            .ipc(path: path, maxSize: PictureSize(parsing: ipcMaxSize) ?? IPCSource.defaultMaxSize)
        case .x11(let display, _):
            .x11(display: display, cursor: cursor)
        case .wayland(let output, _):
            .wayland(output: output, cursor: cursor)
        case .portal:
            .portal(cursor: cursor, tokenFile: portalTokenFile)
        case let other:
            other
        }
    }
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
