import Glibc
import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP

extension PeerSink {
    /// The SDP a receiver opens to play this share (`--sdp FILE`): one section per stream at the
    /// peer's ports, RTP/SAVP with an inline `a=crypto` key (RTP/AVP when insecure).
    ///
    /// What standard receivers need, checked against ffmpeg 5.1 and GStreamer 1.22: a `c=` line
    /// and `a=rtpmap` for every payload type; a bare `inline:` key (ffmpeg refuses a lifetime or
    /// MKI suffix); each stream's SSRC in `a=ssrc` (GStreamer's srtpdec wants it in its caps);
    /// sections at least two ports apart (ffmpeg binds port and port+1 for every section).
    public func sessionDescription() -> SessionDescription {
        let c = configuration
        var d = SessionDescription(originSessionID: UInt64(video.ssrc) << 16 | UInt64(video.timestampOffset & 0xFFFF),
                                   originAddress: c.videoPeer.family == AF_INET6 ? "::1" : "127.0.0.1",
                                   connectionAddress: c.videoPeer.host)
        let profile = c.protection == nil ? "RTP/AVP" : "RTP/SAVP"
        let crypto = c.protection.map { SDESCrypto(suite: $0.profile.name, keyBase64: $0.base64).value }

        let pt = Int(c.videoPayloadType), rtxType = Int(c.videoRTXPayloadType)
        var v = MediaDescription(kind: .video, port: c.videoPeer.port, transportProtocol: profile,
                                 payloadTypes: rtx == nil ? [pt] : [pt, rtxType])
        v.add("rtpmap", RTPMap(payloadType: pt, encodingName: c.videoCodec.encodingName, clockRate: 90_000).value)
        if c.videoCodec == .h264 { v.add("fmtp", "\(pt) \(H264Level.formatParameters(idc: c.h264LevelIDC))") }
        for fb in ["nack", "nack pli", "ccm fir", "goog-remb", "transport-cc"] { v.add("rtcp-fb", "\(pt) \(fb)") }
        if let rtx {
            v.add("rtpmap", RTPMap(payloadType: rtxType, encodingName: "rtx", clockRate: 90_000).value)
            v.add("fmtp", "\(rtxType) apt=\(pt)")
            v.add("ssrc-group", "FID \(video.ssrc) \(rtx.ssrc)")
        }
        v.add("extmap", "\(PeerConfiguration.absSendTimeID) \(AbsSendTime.uri)")
        v.add("extmap", "\(PeerConfiguration.transportSequenceID) \(TransportSequenceNumber.uri)")
        if c.signalsOrientation {
            v.add("extmap", "\(PeerConfiguration.videoOrientationID) \(RTPVideoOrientation.uri)")
        }
        if let fps = c.framesPerSecond { v.add("framerate", "\(fps)") }
        if !c.separateRTCPPorts { v.add("rtcp-mux") }
        if let crypto { v.add("crypto", crypto) }
        v.add("ssrc", "\(video.ssrc) cname:\(cname)")
        if let rtx { v.add("ssrc", "\(rtx.ssrc) cname:\(cname)") }
        d.media.append(v)

        if let audio {
            let opus = Int(PeerConfiguration.opusPayloadType)
            var a = MediaDescription(kind: .audio, port: c.audioPeer.port, transportProtocol: profile,
                                     payloadTypes: [opus])
            if c.audioPeer.host != c.videoPeer.host { a.connectionAddress = c.audioPeer.host }
            // RFC 7587: opus is always declared as 48000/2, whatever is sent.
            a.add("rtpmap", RTPMap(payloadType: opus, encodingName: "opus", clockRate: 48_000, channels: 2).value)
            a.add("fmtp", "\(opus) minptime=10;useinbandfec=1" + (c.audioChannels == 2 ? ";stereo=1;sprop-stereo=1" : ""))
            a.add("extmap", "\(PeerConfiguration.absSendTimeID) \(AbsSendTime.uri)")
            a.add("extmap", "\(PeerConfiguration.transportSequenceID) \(TransportSequenceNumber.uri)")
            if !c.separateRTCPPorts { a.add("rtcp-mux") }
            if let crypto { a.add("crypto", crypto) }
            a.add("ssrc", "\(audio.ssrc) cname:\(cname)")
            d.media.append(a)
        }
        return d
    }
}
