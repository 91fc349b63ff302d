import RTCShareDTLS
import RTCShareRTP

/// rtcshare's WebRTC offer (JSEP, RFC 8829) for a WHIP POST: a pure function of a
/// `WebRTCOfferConfiguration`, built on the shared SDP model and writer.
///
/// What the offer promises, and why:
/// - `sendonly` on every section: rtcshare publishes and receives nothing but RTCP.
/// - BUNDLE of both sections (`a=group:BUNDLE 0 1`, `a=mid`) and `a=rtcp-mux`: one socket per
///   session carries everything. Each section repeats the same port, candidates, ICE
///   credentials and fingerprint, as browsers do once everything is gathered; servers that
///   read only the first section (the BUNDLE tag) and ones that read each find what they need.
/// - All host candidates, then the server-reflexive ones gathered before the offer (`--stun`),
///   then `a=end-of-candidates`: no trickle is needed (RFC 9725 §4.3.2 makes it optional, and
///   aiortc refuses PATCH).
/// - `a=setup:actpass`: the answer picks the DTLS role (RFC 5763 §5).
/// - Video: the codec list in order, each with its RTX (`apt`), one FID group for the RTX SSRC,
///   the RTCP feedback the sender handles, `a=content:slides` (RFC 4796).
/// - Audio: Opus 48000/2 (RFC 7587), `minptime=10;useinbandfec=1`.
/// - `msid` at the section level (RFC 8830) and in `a=ssrc` lines (servers that predate it).
public enum WebRTCOffer {
    /// The offer as a description (render it with `render()`; lines end in CRLF).
    public static func make(_ c: WebRTCOfferConfiguration) -> SessionDescription {
        var d = SessionDescription(originSessionID: c.sessionID, originAddress: "127.0.0.1",
                                   sessionName: "-", connectionAddress: nil)
        d.originVersion = 2
        let mids = [WebRTCOfferConfiguration.videoMID] + (c.audio == nil ? [] : [WebRTCOfferConfiguration.audioMID])
        d.attributes.append(SDPAttribute("group", "BUNDLE " + mids.joined(separator: " ")))
        d.attributes.append(SDPAttribute("msid-semantic", "WMS \(c.streamID)"))
        d.media.append(video(c))
        if let audio = c.audio { d.media.append(self.audio(audio, c)) }
        return d
    }

    /// The offer as text, CRLF line ends, ready to POST.
    public static func text(_ c: WebRTCOfferConfiguration) -> String { make(c).render() }

    private static func video(_ c: WebRTCOfferConfiguration) -> MediaDescription {
        var types: [Int] = []
        for codec in c.videoCodecs {
            types.append(codec.payloadType)
            if c.rtxSSRC != nil, let rtx = codec.rtxPayloadType { types.append(rtx) }
        }
        var m = section(.video, payloadTypes: types, mid: WebRTCOfferConfiguration.videoMID,
                        extensions: c.videoExtensions, trackID: c.videoTrackID, c)
        if c.signalsSlides { m.add("content", "slides") }
        for codec in c.videoCodecs {
            m.add("rtpmap", RTPMap(payloadType: codec.payloadType, encodingName: codec.name.rawValue,
                                   clockRate: codec.clockRate).value)
            if let fmtp = codec.formatParameters { m.add("fmtp", "\(codec.payloadType) \(fmtp)") }
            for fb in WebRTCOfferConfiguration.videoFeedback { m.add("rtcp-fb", "\(codec.payloadType) \(fb)") }
            if c.rtxSSRC != nil, let rtx = codec.rtxPayloadType {
                m.add("rtpmap", RTPMap(payloadType: rtx, encodingName: "rtx", clockRate: codec.clockRate).value)
                m.add("fmtp", "\(rtx) apt=\(codec.payloadType)")
            }
        }
        if let rtx = c.rtxSSRC { m.add("ssrc-group", "FID \(c.videoSSRC) \(rtx)") }
        for ssrc in [c.videoSSRC] + (c.rtxSSRC.map { [$0] } ?? []) {
            m.add("ssrc", "\(ssrc) cname:\(c.cname)")
            m.add("ssrc", "\(ssrc) msid:\(c.streamID) \(c.videoTrackID)")
        }
        return m
    }

    private static func audio(_ a: WebRTCOfferConfiguration.Audio, _ c: WebRTCOfferConfiguration) -> MediaDescription {
        var m = section(.audio, payloadTypes: [a.payloadType], mid: WebRTCOfferConfiguration.audioMID,
                        extensions: c.audioExtensions, trackID: a.trackID, c)
        m.add("rtpmap", RTPMap(payloadType: a.payloadType, encodingName: "opus", clockRate: 48_000, channels: 2).value)
        m.add("fmtp", "\(a.payloadType) minptime=10;useinbandfec=1" + (a.stereo ? ";stereo=1;sprop-stereo=1" : ""))
        for fb in WebRTCOfferConfiguration.audioFeedback { m.add("rtcp-fb", "\(a.payloadType) \(fb)") }
        m.add("ssrc", "\(a.ssrc) cname:\(c.cname)")
        m.add("ssrc", "\(a.ssrc) msid:\(c.streamID) \(a.trackID)")
        return m
    }

    /// The transport and stream lines every section carries, in JSEP's order.
    private static func section(_ kind: MediaDescription.Kind, payloadTypes: [Int], mid: String,
                                extensions: [(id: Int, uri: String)], trackID: String,
                                _ c: WebRTCOfferConfiguration) -> MediaDescription {
        // The default candidate (server-reflexive if any); without one, JSEP's "9 / 0.0.0.0".
        let first = c.defaultCandidate
        var m = MediaDescription(kind: kind, port: first?.port ?? 9, transportProtocol: "UDP/TLS/RTP/SAVPF",
                                 payloadTypes: payloadTypes)
        m.connectionAddress = first?.address ?? "0.0.0.0"
        for candidate in c.candidates { m.add("candidate", candidate.sdpValue) }
        m.add("end-of-candidates")
        m.add("ice-ufrag", c.iceUfrag)
        m.add("ice-pwd", c.icePwd)
        m.add("fingerprint", c.fingerprint.attributeValue)
        m.add("setup", "actpass")
        m.add("mid", mid)
        for e in extensions { m.add("extmap", "\(e.id) \(e.uri)") }
        m.add("sendonly")
        m.add("msid", "\(c.streamID) \(trackID)")
        m.add("rtcp-mux")
        if c.reducedSizeRTCP { m.add("rtcp-rsize") }
        return m
    }
}
