import RTCShare

/// Options of `--peer host:port`: RTP/SRTP straight to a receiver, and the SDP it opens.
struct PeerOptions: CommandLineOptions {
    var peer: String?
    var audioPeer: String?
    var mtu = 1200
    var srtpProfile = "AES_CM_128_HMAC_SHA1_80"
    var srtpKey: String?
    var insecure = false
    var sdp: String?
    var startDelay: Double = 0
    var cvo = false
    var rtx = false
    /// nil: 3 s, and 6 s where VP8 keyframes sweep in hidden (`progressiveKeyframeInterval`).
    var keyframeInterval: Double?
    var separateRTCP = false
    var historyKiB = 512

    static var options: [OptionSpec<PeerOptions>] {
        let d = PeerOptions()
        return [
            .option("peer", \.peer, value: "host:port",
                    help: "Send RTP to this receiver: video to host:port, audio to port+2 (SRTP unless --insecure)."),
            .option("audio-peer", \.audioPeer, value: "host:port", help: "Send audio here instead of the peer's port+2."),
            .option("mtu", \.mtu, value: "bytes", help: "Largest UDP payload sent, in bytes.", defaults: d),
            .option("srtp-profile", \.srtpProfile, value: "profile",
                    help: "SRTP protection: AES_CM_128_HMAC_SHA1_80 (what ffmpeg takes) or AEAD_AES_128_GCM.", defaults: d),
            .option("srtp-key", \.srtpKey, value: "base64",
                    help: "SRTP master key and salt, base64 (30 bytes for AES_CM, 28 for GCM); default: a new random key, written to the SDP."),
            .flag("insecure", \.insecure, help: "Send plain RTP without encryption (anyone on the path can watch)."),
            .option("sdp", \.sdp, value: "file.sdp",
                    help: "Write an SDP for the receiver (ffplay, ffmpeg, GStreamer, rtcshare receive) before sending."),
            .option("start-delay", \.startDelay, value: "seconds",
                    help: "Wait this long after writing the SDP before sending, so a receiver can open it.", defaults: d),
            .flag("cvo", \.cvo, help: "Signal the orientation with each frame (urn:3gpp:video-orientation) instead of turning the pixels."),
            .flag("rtx", \.rtx, help: "Retransmit NACKed packets on a separate RTX stream (RFC 4588) instead of resending them as they were."),
            .option("keyframe-interval", \.keyframeInterval, value: "seconds",
                    help: "With --peer, a keyframe at least this often, for receivers that join late and send no PLI (none once the receiver has sent one); default 3, and 6 above 1600x900 with VP8, whose keyframes hold the viewer's picture for 8 frames."),
            .flag("separate-rtcp", \.separateRTCP, help: "Send RTCP to port+1 of each receiver instead of muxing it on the RTP port."),
            .option("history-kib", \.historyKiB, value: "KiB", help: "Bytes of sent video kept for retransmission, in KiB.", defaults: d),
        ]
    }

    func validate() throws(ValidationError) {
        if let peer {
            do { _ = try SocketAddress(parsing: peer) } catch { throw ValidationError("--peer: \(error)") }
        }
        if let audioPeer {
            guard peer != nil else { throw ValidationError("--audio-peer needs --peer") }
            do { _ = try SocketAddress(parsing: audioPeer) } catch { throw ValidationError("--audio-peer: \(error)") }
        }
        guard (256...9000).contains(mtu) else { throw ValidationError("--mtu must be 256...9000 bytes, not \(mtu)") }
        guard !(insecure && srtpKey != nil) else { throw ValidationError("--srtp-key and --insecure contradict each other") }
        guard (0...60).contains(startDelay) else { throw ValidationError("--start-delay must be 0...60 seconds") }
        if let keyframeInterval, !(keyframeInterval > 0 && keyframeInterval <= 3600) {
            throw ValidationError("--keyframe-interval must be in (0, 3600] seconds")
        }
        guard (64...16384).contains(historyKiB) else { throw ValidationError("--history-kib must be 64...16384") }
        guard let profile = SRTPProfile(name: srtpProfile) else {
            throw ValidationError("--srtp-profile must be AES_CM_128_HMAC_SHA1_80 or AEAD_AES_128_GCM, not '\(srtpProfile)'")
        }
        if let srtpKey {
            do { _ = try SRTPMasterKey(profile: profile, base64: srtpKey) } catch {
                throw ValidationError("--srtp-key: \(error)")
            }
        }

        if peer == nil {
            for (given, name) in [(sdp != nil, "--sdp"), (srtpKey != nil, "--srtp-key"), (cvo, "--cvo"), (rtx, "--rtx"),
                                  (insecure, "--insecure"), (separateRTCP, "--separate-rtcp")] where given {
                throw ValidationError("\(name) needs --peer host:port")
            }
        }
    }
}

extension PeerOptions {
    /// A share (not a plan) must leave the receiver a way to the key.
    func validateForSending() throws(ValidationError) {
        if peer != nil, sdp == nil, srtpKey == nil, !insecure {
            throw ValidationError("with --peer, give --sdp FILE (it carries the generated key), --srtp-key, or --insecure")
        }
    }

    /// The peer settings (nil without `--peer`), and what they change in the share's
    /// configuration: CVO, periodic keyframes, and the memory the plan must count.
    func apply(to configuration: inout ShareConfiguration) throws(ValidationError) -> PeerConfiguration? {
        guard let c = try self.configuration(audio: configuration.audio) else { return nil }
        configuration.signalsOrientation = c.signalsOrientation
        configuration.keyframeInterval = .microseconds(Int64((keyframeInterval ?? 3) * 1_000_000))
        // Above 1600x900 each VP8 keyframe holds the viewer's picture for its 8 hidden frames
        // and re-codes the whole picture: a 1080p testsrc share over 30 s was held 19 % of the
        // time at 3 s (216 kbit/s), 9 % at 6 (157), 4 % at 10 (139). 6 s halves that, and a
        // receiver that joins late without a PLI waits at most 6.6 s.
        configuration.progressiveKeyframeInterval = .microseconds(Int64((keyframeInterval ?? 6) * 1_000_000))
        configuration.outputBudgetBytes = PeerSink.budgetBytes(c)
        configuration.outputHeapBytes = PeerSink.heapBytes(c)
        configuration.outputReleasedStartupBytes = PeerSink.releasedStartupBytes(c)
        var peer = c
        peer.framesPerSecond = configuration.framesPerSecond
        return peer
    }

    /// The peer settings, or nil without `--peer`. `audio` says whether an audio stream goes too.
    func configuration(audio: AudioConfiguration?) throws(ValidationError) -> PeerConfiguration? {
        guard let peer else { return nil }
        var c: PeerConfiguration
        do {
            c = PeerConfiguration(videoPeer: try SocketAddress(parsing: peer),
                                  audioPeer: try audioPeer.map { text throws(SocketError) in try SocketAddress(parsing: text) })
        } catch {
            throw ValidationError("--peer: \(error)")
        }
        c.mtu = mtu
        c.releasesStartupCodePages = true
        c.signalsOrientation = cvo
        c.usesRTX = rtx
        c.separateRTCPPorts = separateRTCP
        c.historyBytes = historyKiB << 10
        c.sendsAudio = audio != nil
        if !insecure {
            let profile = SRTPProfile(name: srtpProfile) ?? .aesCM128HmacSHA1_80
            do {
                c.protection = try srtpKey.map { text throws(RTPError) in try SRTPMasterKey(profile: profile, base64: text) }
                    ?? SRTPMasterKey.generate(profile: profile)
            } catch {
                throw ValidationError("--srtp-key: \(error)")
            }
        }
        return c
    }
}
