import Glibc
import RTCShare
import RTCShareReceive

/// `rtcshare receive`: the built-in receiver, to check and benchmark a sender on this host.
struct ReceiveCommand: CommandLineCommand {
    static let name = "receive"
    static let abstract = "Receive, decode and check what `rtcshare --peer` sends (frames, loss, latency)."
    static let discussion: String? =
        "Give --sdp FILE (the SDP the sender wrote: key, payload types, SSRCs and ports) or --listen HOST:PORT "
        + "with --srtp-key KEY or --insecure. It stops when nothing arrived for --idle-timeout seconds, on the "
        + "sender's BYE, after --duration, or on SIGINT/SIGTERM, and ends with one line: \"rtcshare receive: "
        + "frames N lost N skipped N repeated N out-of-order N freezes N latency p50 X ms p99 X ms; packets N lost N "
        + "nacked N recovered N; plis N; audio packets N concealed N\"."

    var listen: String?
    var audioListen: String?
    var sdp: String?
    var srtpKey: String?
    var srtpProfile = SRTPProfile.aesCM128HmacSHA1_80.name
    var codec: String?
    var insecure = false
    var duration: Double?
    var idleTimeout = 3.0
    var settle: Double?
    var y4m: String?
    var audioOutput: String?
    var statsJSON: String?
    var quiet = false

    static var options: [OptionSpec<ReceiveCommand>] {
        let d = ReceiveCommand()
        return [
            .option("listen", \.listen, value: "host:port",
                    help: "Receive video RTP/RTCP here (audio at port + 2). Needed unless --sdp gives the ports."),
            .option("audio-listen", \.audioListen, value: "host:port", help: "Receive audio here instead."),
            .option("sdp", \.sdp, value: "file",
                    help: "The SDP the sender wrote: key, profile, payload types, SSRCs, RTX and ports."),
            .option("srtp-key", \.srtpKey, value: "base64", help: "The SRTP master key + salt (as the sender's)."),
            .option("srtp-profile", \.srtpProfile, value: "name",
                    help: "AES_CM_128_HMAC_SHA1_80 or AEAD_AES_128_GCM.", defaults: d),
            .option("codec", \.codec, value: "vp8|h264",
                    help: "What the video carries with --listen: vp8 (payload type 96, the default) or h264 "
                        + "(payload type 102). With --sdp the SDP says."),
            .flag("insecure", \.insecure, help: "Plain RTP, no SRTP."),
            .option("duration", \.duration, value: "seconds", help: "Stop after this many seconds."),
            .option("idle-timeout", \.idleTimeout, value: "seconds",
                    help: "Stop when nothing arrived for this long after something did.", defaults: d),
            .option("settle", \.settle, value: "seconds",
                    help: "Also give the longest freeze and the freezes for what ends this long after the first "
                        + "decoded frame (a sender's start left out), as \"settled\" in --stats-json."),
            .option("y4m", \.y4m, value: "file.y4m", help: "Write the decoded frames as YUV4MPEG2."),
            .option("audio-output", \.audioOutput, value: "file.wav", help: "Write the decoded audio as WAV (s16le)."),
            .option("stats-json", \.statsJSON, value: "file", help: "Write the final counters as one JSON object."),
            .flag("quiet", \.quiet, help: "Print only errors and the summary line."),
        ]
    }

    func validate() throws(ValidationError) {
        if sdp == nil && listen == nil {
            throw ValidationError("give --listen HOST:PORT or --sdp FILE")
        }
        if sdp == nil && srtpKey == nil && !insecure {
            throw ValidationError("give --srtp-key KEY (the sender's), --sdp FILE, or --insecure")
        }
        if let codec {
            guard VideoCodec(rawValue: codec) != nil else {
                throw ValidationError("--codec must be vp8 or h264, not '\(codec)'")
            }
            if sdp != nil { throw ValidationError("--codec is for --listen: with --sdp the SDP names the codec") }
        }
        if insecure && srtpKey != nil {
            throw ValidationError("--insecure and --srtp-key exclude each other")
        }
        if let duration, !(duration > 0 && duration <= 366 * 86_400) {
            throw ValidationError("--duration must be a positive number of seconds")
        }
        if let settle, !(settle > 0 && settle <= 86_400) {
            throw ValidationError("--settle must be a positive number of seconds")
        }
        guard idleTimeout > 0 && idleTimeout <= 86_400 else {
            throw ValidationError("--idle-timeout must be a positive number of seconds")
        }
        if SRTPProfile(name: srtpProfile) == nil {
            throw ValidationError("--srtp-profile must be AES_CM_128_HMAC_SHA1_80 or AEAD_AES_128_GCM, not '\(srtpProfile)'")
        }
        // A bad key is a bad command line (exit 2), as it is for the sender.
        if let srtpKey, let profile = SRTPProfile(name: srtpProfile) {
            do { _ = try SRTPMasterKey(profile: profile, base64: srtpKey) } catch {
                throw ValidationError("--srtp-key: \(error)")
            }
        }
    }

    func run() throws {
        let log = Log(quiet: quiet)
        var configuration: ReceiveConfiguration
        do {
            configuration = try makeConfiguration()
        } catch {
            log.fail(error.description)
        }
        configuration.durationMicroseconds = duration.map { Int64($0 * 1_000_000) }
        configuration.idleTimeoutMicroseconds = Int64(idleTimeout * 1_000_000)
        configuration.settleMicroseconds = settle.map { Int64($0 * 1_000_000) }
        configuration.y4mPath = y4m
        configuration.audioOutputPath = audioOutput

        let session: ReceiveSession
        do {
            session = try ReceiveSession(configuration: configuration)
        } catch {
            log.fail(error.description)
        }
        let signals = SignalWatcher { session.stop() }
        defer { _ = signals }
        if !quiet {
            log.line("rtcshare receive: listening on \(session.videoAddress)"
                     + (session.audioAddress.map { " (audio \($0))" } ?? "")
                     + (configuration.protection.map { ", SRTP \($0.profile.name)" } ?? ", insecure"))
        }
        let report: ReceiveReport
        do {
            report = try session.run { notice in if !quiet { log.line("rtcshare receive: \(notice)") } }
        } catch {
            log.fail(error.description)
        }
        log.line(report.summaryLine)
        if let statsJSON {
            do { try FileOutput.write(report.json + "\n", to: statsJSON) } catch {
                log.fail("cannot write --stats-json \(statsJSON): \(error)")
            }
        }
        if let e = report.outputError { log.fail(e) }
        if report.nothingDecrypted {
            log.fail("\(report.srtpFailures) packets arrived and none could be decrypted: "
                     + "the SRTP key or profile is not the sender's")
        }
    }

    /// From --sdp, or from --listen and the key options. Errors are one line.
    private func makeConfiguration() throws(ShareError) -> ReceiveConfiguration {
        var configuration: ReceiveConfiguration
        if let sdp {
            let text = try Self.readText(sdp)
            let description: SessionDescription
            do { description = try SessionDescription.parse(text) } catch {
                throw .invalidConfiguration("\(sdp): \(error)")
            }
            // Listen where the SDP's m= ports are, on the address given (or loopback/any).
            var host = "0.0.0.0"
            if let listen {
                do { host = try SocketAddress(parsing: listen).host } catch {
                    throw .invalidConfiguration("--listen: \(error)")
                }
            } else if let c = description.connectionAddress, c == "127.0.0.1" || c == "::1" {
                host = c
            }
            configuration = try ReceiveConfiguration(sessionDescription: description, host: host)
            if let listen, let a = try? SocketAddress(parsing: listen), a.port != 0 {
                configuration.videoListen = a
            }
            if insecure { configuration.protection = nil }
        } else {
            let address: SocketAddress
            do { address = try SocketAddress(parsing: listen ?? "") } catch {
                throw .invalidConfiguration("--listen: \(error)")
            }
            var key: SRTPMasterKey? = nil
            if let srtpKey {
                let profile = SRTPProfile(name: srtpProfile) ?? .aesCM128HmacSHA1_80
                do { key = try SRTPMasterKey(profile: profile, base64: srtpKey) } catch {
                    throw .invalidConfiguration("--srtp-key: \(error)")
                }
            }
            configuration = ReceiveConfiguration(videoListen: address, protection: key)
            // Without an SDP the wire is `rtcshare --peer`'s: its transport-wide sequence
            // numbers too, so arrivals go back and the sender's delay-based rate control runs.
            configuration.transportSequenceID = PeerConfiguration.transportSequenceID
            if let codec = codec.flatMap(VideoCodec.init(rawValue:)), codec == .h264 {
                configuration.videoCodec = .h264
                configuration.videoPayloadType = PeerConfiguration.h264PayloadType
            }
        }
        if let audioListen {
            do { configuration.audioListen = try SocketAddress(parsing: audioListen) } catch {
                throw .invalidConfiguration("--audio-listen: \(error)")
            }
        }
        return configuration
    }

    private static func readText(_ path: String) throws(ShareError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .invalidConfiguration("cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: SessionDescription.maximumBytes + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw .invalidConfiguration("cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            count += n
        }
        return String(decoding: bytes[0..<count], as: UTF8.self)
    }
}
