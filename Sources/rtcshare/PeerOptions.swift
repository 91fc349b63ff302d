import ArgumentParser
import RTCShare
import RTCShareIO
import RTCShareRTP

/// Options of `--peer host:port`: RTP/SRTP straight to a receiver, and the SDP it opens.
struct PeerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Send RTP to this receiver: video to host:port, audio to port+2 (SRTP unless --insecure).",
                               valueName: "host:port"))
    var peer: String?

    @Option(name: .customLong("audio-peer"), help: ArgumentHelp("Send audio here instead of the peer's port+2.",
                                                              valueName: "host:port"))
    var audioPeer: String?

    @Option(help: ArgumentHelp("Largest UDP payload sent, in bytes.", valueName: "bytes"))
    var mtu = 1200

    @Option(name: .customLong("srtp-profile"),
            help: "SRTP protection: AES_CM_128_HMAC_SHA1_80 (default, what ffmpeg and VLC take) or AEAD_AES_128_GCM.")
    var srtpProfile = "AES_CM_128_HMAC_SHA1_80"

    @Option(name: .customLong("srtp-key"),
            help: ArgumentHelp("SRTP master key and salt, base64 (30 bytes for AES_CM, 28 for GCM); default: a new random key, written to the SDP.",
                               valueName: "base64"))
    var srtpKey: String?

    @Flag(help: "Send plain RTP without encryption (anyone on the path can watch).")
    var insecure = false

    @Option(help: ArgumentHelp("Write an SDP for the receiver (ffplay, ffmpeg, GStreamer, VLC) before sending.",
                               valueName: "file.sdp"))
    var sdp: String?

    @Option(name: .customLong("start-delay"),
            help: ArgumentHelp("Wait this long after writing the SDP before sending, so a receiver can open it.",
                               valueName: "seconds"))
    var startDelay: Double = 0

    @Flag(help: "Signal the orientation with each frame (urn:3gpp:video-orientation) instead of turning the pixels.")
    var cvo = false

    @Flag(help: "Retransmit NACKed packets on a separate RTX stream (RFC 4588) instead of resending them as they were.")
    var rtx = false

    @Option(name: .customLong("keyframe-interval"),
            help: ArgumentHelp("With --peer, a keyframe at least this often, for receivers that join late and send no PLI.",
                               valueName: "seconds"))
    var keyframeInterval: Double = 3

    @Flag(name: .customLong("separate-rtcp"),
          help: "Send RTCP to port+1 of each receiver instead of muxing it on the RTP port.")
    var separateRTCP = false

    @Option(name: .customLong("history-kib"), help: ArgumentHelp("Bytes of sent video kept for retransmission, in KiB.",
                                                               valueName: "KiB"))
    var historyKiB = 512

    func validate() throws {
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
        guard keyframeInterval > 0, keyframeInterval <= 3600 else {
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
        if peer != nil, sdp == nil, srtpKey == nil, !insecure {
            throw ValidationError("with --peer, give --sdp FILE (it carries the generated key), --srtp-key, or --insecure")
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
