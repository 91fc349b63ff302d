import RTCShare
import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP

/// How `rtcshare receive` listens: where, how protected, which payload types, what it writes.
/// Built from options (`--listen`, `--srtp-key`) or from the SDP the sender wrote (`--sdp`).
public struct ReceiveConfiguration: Sendable {
    /// Video RTP (and muxed RTCP) arrives here; port 0 binds any free port.
    public var videoListen: SocketAddress
    /// Audio RTP (and muxed RTCP) arrives here (default: the video port + 2); nil: no audio.
    public var audioListen: SocketAddress?
    /// nil: plain RTP (`--insecure`). The same key unprotects what arrives and protects the
    /// RTCP we send back.
    public var protection: SRTPMasterKey?
    /// RTCP arrives on the RTP ports (RFC 5761). When false (the SDP has no `a=rtcp-mux`), the
    /// sender's reports arrive at port + 1 of each, which is bound too; our RTCP still goes
    /// back to where the media came from (the sender reads RTCP on all its sockets).
    public var rtcpMux = true
    public var videoPayloadType: UInt8 = PeerConfiguration.vp8PayloadType
    /// What the video payload type carries (from the SDP's rtpmap; VP8 by default).
    public var videoCodec: VideoCodec = .vp8
    /// The RTX payload type (RFC 4588) when the sender declares one.
    public var rtxPayloadType: UInt8?
    public var audioPayloadType: UInt8 = PeerConfiguration.opusPayloadType
    public var audioChannels = 2
    /// SSRCs the SDP names (video, its RTX stream, audio); nil: taken from the first packet.
    public var videoSSRC: UInt32?
    public var rtxSSRC: UInt32?
    public var audioSSRC: UInt32?
    /// Stop after this long (nil: until stopped or idle).
    public var durationMicroseconds: Int64?
    /// Stop when nothing arrived for this long after something did.
    public var idleTimeoutMicroseconds: Int64 = 3_000_000
    /// Decoded frames as YUV4MPEG2 / decoded audio as WAV (s16le), if given.
    public var y4mPath: String?
    /// The frame rate the `.y4m` header states: the SDP's `a=framerate`, else 30.
    public var y4mFramesPerSecond = 30
    public var audioOutputPath: String?
    /// Reorder-buffer capacity (packets) and the least wait for a missing packet.
    public var videoJitterPackets = 1024
    public var audioJitterPackets = 64
    public var minimumJitterWaitMicroseconds: Int64 = 60_000
    public var maximumJitterWaitMicroseconds: Int64 = 320_000
    /// Largest encoded VP8 frame reassembled.
    public var maxFrameBytes = 1 << 20
    /// Interval of receiver reports.
    public var reportIntervalMicroseconds: Int64 = 1_000_000
    /// Decoded frames further apart than this count as a freeze.
    public var freezeThresholdMicroseconds: Int64 = 200_000
    /// Freezes also counted apart for what ends this long after the first decoded frame.
    public var settleMicroseconds: Int64?
    public var nack = NackGenerator.Configuration()
    /// The transport-wide sequence number's extension ID when the SDP names it and asks for
    /// `transport-cc` feedback on the video: then arrivals are reported back for the sender's
    /// delay-based rate control. nil: none is sent.
    public var transportSequenceID: UInt8?

    /// The receive core's part of it.
    public var transport: RTPReceiverConfiguration {
        var t = RTPReceiverConfiguration()
        t.protection = protection
        t.videoPayloadType = videoPayloadType
        t.videoCodec = videoCodec
        t.rtxPayloadType = rtxPayloadType
        t.audioPayloadType = audioPayloadType
        t.videoSSRC = videoSSRC
        t.audioSSRC = audioSSRC
        t.videoJitterPackets = videoJitterPackets
        t.audioJitterPackets = audioJitterPackets
        t.minimumJitterWaitMicroseconds = minimumJitterWaitMicroseconds
        t.maximumJitterWaitMicroseconds = maximumJitterWaitMicroseconds
        t.maxFrameBytes = maxFrameBytes
        t.reportIntervalMicroseconds = reportIntervalMicroseconds
        t.nack = nack
        t.transportSequenceID = transportSequenceID
        return t
    }

    public init(videoListen: SocketAddress, audioListen: SocketAddress? = nil, protection: SRTPMasterKey? = nil) {
        self.videoListen = videoListen
        self.audioListen = audioListen
            ?? videoListen.with(port: videoListen.port == 0 ? 0 : (videoListen.port <= 65_533 ? videoListen.port + 2 : videoListen.port - 2))
        self.protection = protection
    }

    /// Everything from the SDP a sender wrote (`rtcshare --peer … --sdp FILE`): ports of the
    /// `m=` lines on `host`, the `a=crypto` key and suite, payload types, SSRCs, RTX. Throws
    /// `.invalidConfiguration` with one line for what it cannot use.
    public init(sessionDescription d: SessionDescription, host: String) throws(ShareError) {
        guard let video = d.media.first(where: { $0.kind == .video }) else {
            throw .invalidConfiguration("sdp has no m=video section")
        }
        // VP8, else H.264 (what `rtcshare --peer --codec` writes: one of them).
        let codec: VideoCodec
        let videoPT: Int
        if let vp8 = video.payloadType(for: VideoCodec.vp8.encodingName) {
            (codec, videoPT) = (.vp8, vp8)
        } else if let h264 = video.payloadType(for: VideoCodec.h264.encodingName) {
            (codec, videoPT) = (.h264, h264)
        } else {
            throw .invalidConfiguration("sdp's m=video has no VP8 or H264 rtpmap")
        }
        let address: SocketAddress
        do { address = try SocketAddress(host: host, port: video.port) } catch {
            throw .invalidConfiguration("sdp video port: \(error)")
        }
        let audio = d.media.first(where: { $0.kind == .audio })
        var audioAddress: SocketAddress? = nil
        if let audio {
            do { audioAddress = try SocketAddress(host: host, port: audio.port) } catch {
                throw .invalidConfiguration("sdp audio port: \(error)")
            }
        }
        var key: SRTPMasterKey? = nil
        if video.transportProtocol.contains("SAVP") {
            guard let crypto = video.cryptos.first else {
                throw .invalidConfiguration("sdp's m=video is \(video.transportProtocol) but has no a=crypto inline key")
            }
            guard let profile = SRTPProfile(name: crypto.suite) else {
                throw .invalidConfiguration("sdp crypto suite \(crypto.suite) is not supported")
            }
            do { key = try SRTPMasterKey(profile: profile, base64: crypto.keyBase64) } catch {
                throw .invalidConfiguration("sdp crypto key: \(error)")
            }
        }
        self.init(videoListen: address, audioListen: audioAddress, protection: key)
        if audio == nil { audioListen = nil }
        rtcpMux = video.has("rtcp-mux")
        guard let pt = UInt8(exactly: videoPT), pt < 128 else {
            throw .invalidConfiguration("sdp \(codec) payload type \(videoPT)")
        }
        videoPayloadType = pt
        videoCodec = codec
        if let rtx = video.payloadType(for: "rtx"), let p = UInt8(exactly: rtx), p < 128 {
            rtxPayloadType = p
            // a=ssrc-group:FID <media> <rtx>
            for group in video.values(of: "ssrc-group") {
                let parts = group.split(separator: " ")
                if parts.count == 3, parts[0] == "FID", let m = UInt32(parts[1]), let r = UInt32(parts[2]) {
                    videoSSRC = m
                    rtxSSRC = r
                }
            }
        }
        if videoSSRC == nil { videoSSRC = video.ssrcs.first }
        if video.feedback(for: videoPT).contains("transport-cc"),
           let id = video.extensionID(for: TransportSequenceNumber.uri), let byte = UInt8(exactly: id), (1...14).contains(byte) {
            transportSequenceID = byte
        }
        // RFC 8866 §6.8: a=framerate:<frames per second>, possibly fractional.
        if let text = video.values(of: "framerate").first, let fps = Double(text), fps >= 1, fps <= 240 {
            y4mFramesPerSecond = Int(fps.rounded())
        }
        if let audio {
            if let opus = audio.payloadType(for: "opus"), let p = UInt8(exactly: opus), p < 128 {
                audioPayloadType = p
            }
            audioSSRC = audio.ssrcs.first
            if let fmtp = audio.formatParameters(for: Int(audioPayloadType)) {
                audioChannels = fmtp.contains("stereo=1") ? 2 : 1
            }
        }
    }
}
