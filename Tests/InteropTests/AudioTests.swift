import Foundation
import RTCShareMedia
import TestSupport
import Testing

/// `--audio` end to end with the real `rtcshare` binary, decoded by ffmpeg (libopus) as an
/// independent receiver: the tone that went in is the tone that comes out of the Ogg Opus file,
/// within 1% in frequency — from the built-in test tone, and from an IPC producer sending
/// big-endian and little-endian PCM at 44.1 kHz stereo while its pictures are turned
/// (orientation 6) and it is killed and restarted mid-share.
@Suite(.serialized) struct AudioTests {
    /// Decodes an Ogg Opus file to 48 kHz mono s16 with ffmpeg.
    static func decodePCM(_ path: String) throws -> [Int16] {
        let ffmpeg = try #require(Tools.which("ffmpeg"), "ffmpeg is not installed (scripts/setup installs it)")
        let result = try Tools.run(ffmpeg, ["-v", "error", "-i", path, "-f", "s16le", "-ac", "1", "-ar", "48000", "-"])
        guard result.status == 0 else { throw Tools.DecodeError(message: result.stderr) }
        return result.stdout.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// The tone's frequency: the mean period between rising zero crossings (interpolated, with
    /// hysteresis), over periods within 10% of the median — silence filling a gap does not count.
    static func frequency(_ samples: [Int16], sampleRate: Double = 48_000) -> Double? {
        var crossings: [Double] = []
        var armed = false
        for i in 1..<max(samples.count, 1) {
            if samples[i] < -500 { armed = true }
            if armed, samples[i - 1] < 0, samples[i] >= 0 {
                let a = Double(samples[i - 1]), b = Double(samples[i])
                crossings.append(Double(i - 1) - a / (b - a))
                armed = false
            }
        }
        guard crossings.count > 20 else { return nil }
        let periods = zip(crossings, crossings.dropFirst()).map { $1 - $0 }
        let median = periods.sorted()[periods.count / 2]
        let good = periods.filter { abs($0 - median) < 0.1 * median }
        return sampleRate * Double(good.count) / good.reduce(0, +)
    }

    /// Seconds of audio that are not silence (|sample| above a threshold, per 20 ms block).
    static func audibleSeconds(_ samples: [Int16]) -> Double {
        stride(from: 0, to: samples.count - 960, by: 960).filter { start in
            samples[start..<start + 960].contains { abs(Int($0)) > 1_000 }
        }.count.double * 0.02
    }

    @Test func theTestToneDecodesToItsFrequency() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ogg = dir.appendingPathComponent("x.ogg").path, ivf = dir.appendingPathComponent("x.ivf").path
        let tone = 1_000.0
        let result = try Tools.run(Tools.rtcshare, ["--source", "testsrc", "--size", "320x240", "--audio", "testtone",
                                                    "--tone-hz", "\(Int(tone))", "--audio-output", ogg,
                                                    "--output", ivf, "--duration", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("audio: testtone 1000 Hz"), "\(result.stderr)")
        let summary = try #require(result.stderr.split(separator: "\n").last { $0.contains("frames in") })
        #expect(summary.contains("audio 14") || summary.contains("audio 15"), "about 150 packets in 3 s: \(summary)")

        let pcm = try Self.decodePCM(ogg)
        #expect(abs(Double(pcm.count) / 48_000 - 3) < 0.15, "\(pcm.count) samples decoded")
        let measured = try #require(Self.frequency(Array(pcm[4_800..<pcm.count - 4_800])))
        #expect(abs(measured - tone) / tone < 0.01, "measured \(measured) Hz")

        let ffprobe = try #require(Tools.which("ffprobe"))
        let probe = try Tools.run(ffprobe, ["-v", "error", "-show_streams", ogg])
        let text = String(decoding: probe.stdout, as: UTF8.self)
        #expect(probe.status == 0 && text.contains("codec_name=opus") && text.contains("sample_rate=48000"), "\(text)")
        // The video went on beside it, all the 3 s (its frames' times span 2.5 s of them); the
        // count is not a speed figure (a loaded machine misses ticks): at least half of 3 s at
        // 20 fps.
        let times = try Tools.ivfFrameTimes(ivf)
        #expect(try Tools.decodeLuma(ivf, width: 320, height: 240).count >= 30)
        let span = (times.last ?? 0) - (times.first ?? 0)  // outside #expect: Swift 6.0's type checker gave up on it
        #expect(span >= 2.5, "video over \(span) s")
    }

    @Test func aMissingOrBadWAVFileIsOneErrorLine() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("x.ivf").path
        let missing = try Tools.run(Tools.rtcshare, ["--audio", "wav:/nonexistent.wav", "--output", ivf, "--duration", "1"])
        #expect(missing.status == 1)
        #expect(missing.stderr.split(separator: "\n").last { $0.contains("error") }?
            .contains("--audio wav:/nonexistent.wav: open: No such file or directory") == true, "\(missing.stderr)")
        let bad = dir.appendingPathComponent("bad.wav")
        try Data("RIFF\0\0\0\0WAVEfmt \u{10}\0\0\0\u{3}\0\u{1}\0".utf8).write(to: bad)
        let result = try Tools.run(Tools.rtcshare, ["--audio", "wav:\(bad.path)", "--output", ivf, "--duration", "1"])
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").filter { $0.contains("error") }
        #expect(lines.count == 1 && lines[0].contains("WAV"), "\(result.stderr)")
        let usage = try Tools.run(Tools.rtcshare, ["--audio", "mp3:x", "--output", ivf])
        #expect(usage.status != 0 && usage.stderr.contains("--audio must be testtone, wav:PATH, ipc or none"))
        let ipc = try Tools.run(Tools.rtcshare, ["--audio", "ipc", "--output", ivf])
        #expect(ipc.status != 0 && ipc.stderr.contains("--audio ipc needs --source ipc:PATH"))
    }

    @Test func aWAVFilePlaysAtRealTimePaceAndItsEndDoesNotEndTheShare() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // 1.5 s of 700 Hz, 22050 Hz stereo, big-endian RIFX.
        let rate = 22_050, tone = 700.0
        var pcm = Data()
        for i in 0..<Int(1.5 * Double(rate)) {
            let s = UInt16(bitPattern: Int16(9_000 * sin(2 * .pi * tone * Double(i) / Double(rate))))
            for _ in 0..<2 { pcm.append(contentsOf: [UInt8(s >> 8), UInt8(s & 0xFF)]) }
        }
        func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        var file = Data("RIFX".utf8) + be32(36 + pcm.count) + Data("WAVEfmt ".utf8) + be32(16)
        file += [0, 1, 0, 2] + be32(rate) + be32(rate * 4) + [0, 4, 0, 16]
        file += Data("data".utf8) + be32(pcm.count) + pcm
        let wav = dir.appendingPathComponent("tone.wav")
        try file.write(to: wav)
        let ogg = dir.appendingPathComponent("x.opus").path, ivf = dir.appendingPathComponent("x.ivf").path
        let result = try Tools.run(Tools.rtcshare, ["--source", "testsrc", "--size", "320x240", "--audio", "wav:\(wav.path)",
                                                    "--audio-output", ogg, "--output", ivf, "--duration", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("ended; the share goes on without audio"), "\(result.stderr)")
        #expect(result.stderr.contains("finished: duration reached"))
        let decoded = try Self.decodePCM(ogg)
        #expect(abs(Double(decoded.count) / 48_000 - 1.5) < 0.1, "\(decoded.count) samples")
        let measured = try #require(Self.frequency(Array(decoded[2_400..<decoded.count - 2_400])))
        #expect(abs(measured - tone) / tone < 0.01, "measured \(measured) Hz")
    }

    // MARK: the acceptance test

    /// One share from an IPC producer sending pictures turned as orientation 6 and a tone as
    /// 44.1 kHz stereo PCM in `endian` byte order; with `restart`, the producer is killed
    /// (SIGKILL) after 2 s and a new one started. Returns the measured frequency.
    private func ipcShare(endian: String, restart: Bool, tone: Double) throws -> Double {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = dir.appendingPathComponent("x.sock").path
        let ogg = dir.appendingPathComponent("a.ogg").path, ivf = dir.appendingPathComponent("v.ivf").path
        let (w, h) = (IPCSourceTests.width, IPCSourceTests.height)
        let seconds = restart ? 6 : 4
        let rtcshare = try BackgroundProcess(Tools.rtcshare, [
            "--source", "ipc:\(socket)", "--audio", "ipc", "--audio-output", ogg, "--output", ivf,
            "--duration", "\(seconds)", "--size", "\(w)x\(h)",
        ], in: dir, name: "rtcshare")
        defer { rtcshare.kill() }
        waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: socket) || !rtcshare.isRunning }

        let producerArguments = [socket, "--size", "\(w)x\(h)", "--orientation", "6", "--format", "bgra",
                                 "--audio-endian", endian, "--audio-rate", "44100", "--audio-channels", "2",
                                 "--tone", "\(tone)"]
        if restart {
            let first = try BackgroundProcess(IPCSourceTests.producer, producerArguments, in: dir, name: "producer1")
            // Streaming starts when rtcshare takes the producer (its start-up before that takes
            // a while on a loaded machine, and sends nothing).
            #expect(rtcshare.waitForOutput(containing: " connected\n", timeout: 10),
                    "rtcshare never took the first producer: \(rtcshare.stderr)")
            // A fixed wait on purpose: the scenario is a producer killed after 2 s of streaming.
            usleep(2_000_000)
            first.kill()
            #expect(rtcshare.waitForOutput(containing: " disconnected after ", timeout: 5),
                    "rtcshare never saw the first producer go: \(rtcshare.stderr)")
            // A fixed wait on purpose: the producer stays away 0.8 s, the gap the filler (and the
            // audio's silence) must bridge.
            usleep(800_000)
        }
        let last = try BackgroundProcess(IPCSourceTests.producer, producerArguments + ["--duration", "2.5"],
                                                 in: dir, name: "producer2")
        #expect(last.wait(timeout: 20) == 0, "producer: \(last.stderr)")
        let status = rtcshare.wait(timeout: 30)
        let log = rtcshare.stderr
        #expect(status == 0, "rtcshare: \(log)")
        #expect(log.contains("audio: ipc -> Opus stereo"), "\(log)")
        if restart { #expect(log.components(separatedBy: "connected\n").count - 1 == 2, "two producers connected: \(log)") }

        // Upright and decodable video: every frame, and at least half of the share's time at
        // 20 fps (4 or 6 s; not a speed figure, a loaded machine misses ticks).
        let frames = try Tools.decodeLuma(ivf, width: w, height: h)
        #expect(frames.count >= seconds * 20 / 2, "decoded \(frames.count) frames")
        let unreadable = frames.indices.filter { i in
            frames[i].withUnsafeBytes { raw in
                FrameMarker.read(luma: raw.bindMemory(to: UInt8.self).baseAddress!, stride: w, width: w, rows: h) == nil
            }
        }
        #expect(unreadable.isEmpty, "markers unreadable (not upright) in frames \(unreadable)")

        // Decodable audio: one unbroken stream from the first sample to the end of the share
        // (the gap while no producer was there is silence, not a hole), the tone audible for
        // about as long as producers sent it.
        let pcm = try Self.decodePCM(ogg)
        let total = Double(pcm.count) / 48_000
        #expect(total > Double(seconds) - 1.5 && total < Double(seconds) + 0.2, "\(total) s of audio")
        let audible = Self.audibleSeconds(pcm)
        // What the producers sent: by the clock, 2 s (the first) and 2.5 s (the last). A
        // producer never waits on rtcshare, so on a loaded machine it lets go what rtcshare has
        // no room for yet; the clock is then only the upper bound, and what reached rtcshare
        // the lower one: the audio messages (20 ms) the last producer says it sent, and the
        // frames (30 a second) rtcshare says it got from the first, killed before it could say.
        let clock = restart ? 2 + 2.5 : 2.5
        func number(before word: String, in text: String) -> Int? {
            guard let range = text.range(of: word) else { return nil }
            return Int(text[..<range.lowerBound].split(separator: " ").last ?? "")
        }
        let lastAudio = Double(number(before: " audio messages", in: last.stderr) ?? 0) * 0.02
        let firstFrames = restart ? number(before: " frames: it closed the connection", in: log) ?? 0 : 0
        let reached = lastAudio + Double(firstFrames) / 30
        #expect(audible > reached - 0.6 && audible < clock + 0.6,
                "\(audible) s audible; \(clock) s sent by the clock, \(reached) s reached rtcshare")
        return try #require(Self.frequency(pcm), "no tone in the decoded audio")
    }

    @Test func bigAndLittleEndianProducerPCMDecodeToTheSameTone() throws {
        let tone = 1_000.0
        let big = try ipcShare(endian: "big", restart: true, tone: tone)
        let little = try ipcShare(endian: "little", restart: false, tone: tone)
        #expect(abs(big - tone) / tone < 0.01, "big-endian: \(big) Hz")
        #expect(abs(little - tone) / tone < 0.01, "little-endian: \(little) Hz")
        #expect(abs(big - little) / tone < 0.01, "big \(big) Hz vs little \(little) Hz")
    }
}

private extension Int {
    var double: Double { Double(self) }
}
