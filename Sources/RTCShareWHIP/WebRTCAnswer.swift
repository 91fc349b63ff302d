import RTCShareDTLS
import RTCShareRTP

/// The server's SDP answer to rtcshare's offer, read strictly and reduced to what it accepted
/// (RFC 3264, RFC 8829 §5.10, RFC 9725): the session uses nothing else.
///
/// Rules, each broken one a `WHIPError` line:
/// - Same sections in the same order as offered, same kinds and `a=mid`s. A section with port 0
///   (and no `a=bundle-only`) is rejected: audio may be, video may not.
/// - Each accepted section is `recvonly` (`inactive` counts as rejected), has `a=rtcp-mux`
///   and is in the answer's BUNDLE group: rtcshare sends everything over one socket.
/// - Codecs are matched by name, clock rate (and channels), never by number; the answer's
///   payload type numbers are the ones to send (RFC 3264 §6.1). RTX counts only with an
///   `apt` naming the chosen codec. Feedback and header extensions are kept when offered, with
///   the answer's extension IDs; an ID outside the one-byte range (1...14) drops that extension,
///   the same ID for two URIs in the bundle is an error.
/// - The transport (ICE credentials, fingerprints, `a=setup`) comes from the BUNDLE-tagged
///   section, falling back to the session level: `ice-ufrag` of 4...256 and `ice-pwd` of
///   22...256 ice-chars (RFC 8839 §5.4), at least one fingerprint of a known hash, and
///   `setup:active` or `setup:passive` — `actpass` is an offerer's word (RFC 5763 §5).
/// Candidates are handed on as the raw `a=candidate` values; the ICE agent parses them.
public struct WebRTCAnswer: Sendable, Equatable {
    /// The answerer's `a=setup`: which DTLS role it takes.
    public enum Setup: String, Sendable {
        /// The server connects: it is the DTLS client, rtcshare the DTLS server.
        case active
        /// The server waits: rtcshare is the DTLS client.
        case passive
    }

    public struct Codec: Sendable, Equatable {
        public var name: String
        /// The answer's number for it: what RTP packets carry.
        public var payloadType: Int
        public var clockRate: Int
        public var channels: Int?
        public var formatParameters: String?
    }

    /// An accepted section: what to send and how.
    public struct Media: Sendable, Equatable {
        public var mid: String
        public var kind: MediaDescription.Kind
        public var codec: Codec
        /// The RTX payload type whose `apt` is `codec.payloadType`, if RTX was offered and kept.
        public var rtxPayloadType: Int?
        /// `a=rtcp-fb` kinds kept for the codec (`nack`, `nack pli`, `goog-remb`, …).
        public var feedback: [String]
        /// Header extensions kept, with the answer's IDs.
        public var extensions: [Extension]

        public func extensionID(for uri: String) -> Int? { extensions.first { $0.uri == uri }?.id }
        public func accepts(feedback kind: String) -> Bool { feedback.contains(kind) }
    }

    public struct Extension: Sendable, Equatable {
        public var id: Int
        public var uri: String
    }

    /// A section the answer turned down, and how.
    public struct Rejected: Sendable, Equatable {
        public var mid: String
        public var kind: MediaDescription.Kind
        public var reason: String
    }

    public var video: Media
    /// nil when audio was not offered or was rejected (then it is in `rejected`).
    public var audio: Media?
    public var rejected: [Rejected]
    public var iceUfrag: String
    public var icePwd: String
    /// `a=ice-lite`: the server sends no checks; rtcshare must be the controlling agent anyway.
    public var iceLite: Bool
    /// At least one.
    public var fingerprints: [DTLSFingerprint]
    public var setup: Setup
    /// The `a=candidate` values of the accepted sections, without duplicates, as written.
    public var candidates: [String]
    /// `a=end-of-candidates` was present: no more will be trickled.
    public var endOfCandidates: Bool
    /// The `c=` address of the BUNDLE-tagged section (or the session's).
    public var connectionAddress: String?
    /// What was offered and not kept, one readable entry each (`video rtcp-fb ccm fir`,
    /// `video extmap urn:3gpp:video-orientation`, `audio rejected (port 0)`): for the log.
    public var dropped: [String]
}

extension WebRTCAnswer {
    /// Reads `text` as the answer to the offer made from `offer`.
    public static func parse(_ text: String, offer: WebRTCOfferConfiguration) throws(WHIPError) -> WebRTCAnswer {
        let sdp: SessionDescription
        do { sdp = try SessionDescription.parse(text) } catch { throw .answerSyntax(error) }
        return try read(sdp, offer: offer)
    }

    /// Reads a parsed description as the answer to the offer made from `offer`.
    public static func read(_ sdp: SessionDescription, offer: WebRTCOfferConfiguration) throws(WHIPError) -> WebRTCAnswer {
        let offered: [(mid: String, kind: MediaDescription.Kind)] =
            [(WebRTCOfferConfiguration.videoMID, .video)] + (offer.audio == nil ? [] : [(WebRTCOfferConfiguration.audioMID, .audio)])
        guard sdp.media.count == offered.count else {
            throw .badAnswer("has \(sdp.media.count) media sections; the offer had \(offered.count)")
        }
        let bundle = sdp.attributes.first { $0.name == "group" && ($0.value ?? "").hasPrefix("BUNDLE") }
            .map { ($0.value ?? "").split(separator: " ").dropFirst().map(String.init) } ?? []

        var accepted: [(MediaDescription, Media)] = []
        var rejected: [Rejected] = []
        var dropped: [String] = []
        for (section, expected) in zip(sdp.media, offered) {
            guard section.kind == expected.kind else {
                throw .badAnswer("section \(expected.mid) is \(section.kind.rawValue); \(expected.kind.rawValue) was offered")
            }
            let mid = section.values(of: "mid").first
            if section.port == 0 && !section.has("bundle-only") || section.has("inactive") {
                let reason = section.port == 0 ? "port 0" : "inactive"
                rejected.append(Rejected(mid: mid ?? expected.mid, kind: section.kind, reason: reason))
                dropped.append("\(section.kind.rawValue) rejected (\(reason))")
                continue
            }
            guard mid == expected.mid else {
                throw .badAnswer("\(section.kind.rawValue) section has mid '\(mid ?? "")'; '\(expected.mid)' was offered")
            }
            guard section.has("recvonly") else {
                throw .badAnswer("\(section.kind.rawValue) section must be recvonly to a sendonly offer (RFC 3264 §6.1)")
            }
            guard section.has("rtcp-mux") else {
                throw .badAnswer("\(section.kind.rawValue) section has no a=rtcp-mux; RTP and RTCP must share the socket")
            }
            guard bundle.contains(expected.mid) else {
                throw .badAnswer("\(section.kind.rawValue) section (mid \(expected.mid)) is not in the answer's BUNDLE group")
            }
            let media: Media?
            switch section.kind {
            case .video: media = videoMedia(section, mid: expected.mid, offer: offer, dropped: &dropped)
            case .audio: media = audioMedia(section, mid: expected.mid, offer: offer, dropped: &dropped)
            case .application: media = nil
            }
            guard let media else {
                if section.kind == .video {
                    throw .noUsableVideoCodec(offered: offer.videoCodecs.map { "\($0.name.rawValue)/\($0.clockRate)" })
                }
                rejected.append(Rejected(mid: expected.mid, kind: section.kind, reason: "no common codec"))
                dropped.append("\(section.kind.rawValue) rejected (no common codec)")
                continue
            }
            accepted.append((section, media))
        }
        guard let video = accepted.first(where: { $0.1.kind == .video })?.1 else {
            throw .noUsableVideoCodec(offered: offer.videoCodecs.map { "\($0.name.rawValue)/\($0.clockRate)" })
        }
        try checkExtensionIDs(accepted.map(\.1))

        // The transport is the BUNDLE-tagged section's (the first mid of the group).
        let tagged = accepted.first { $0.1.mid == bundle.first }?.0 ?? accepted[0].0
        func transport(_ name: String) -> [String] {
            let own = tagged.values(of: name)
            return own.isEmpty ? sdp.attributes.compactMap { $0.name == name ? ($0.value ?? "") : nil } : own
        }
        guard let ufrag = transport("ice-ufrag").first else { throw .badAnswer("has no a=ice-ufrag") }
        guard let pwd = transport("ice-pwd").first else { throw .badAnswer("has no a=ice-pwd") }
        guard isICEChars(ufrag, 4...256) else { throw .badAnswer("a=ice-ufrag is not 4...256 ice-chars (RFC 8839)") }
        guard isICEChars(pwd, 22...256) else { throw .badAnswer("a=ice-pwd is not 22...256 ice-chars (RFC 8839)") }
        let fingerprintValues = transport("fingerprint")
        guard !fingerprintValues.isEmpty else { throw .badAnswer("has no a=fingerprint; DTLS could not be authenticated") }
        var fingerprints: [DTLSFingerprint] = []
        for value in fingerprintValues {
            guard let f = try? DTLSFingerprint(attributeValue: value) else {
                throw .badAnswer("a=fingerprint is not a known hash with a digest of its length")
            }
            fingerprints.append(f)
        }
        guard let setupValue = transport("setup").first else { throw .badAnswer("has no a=setup") }
        guard let setup = Setup(rawValue: setupValue) else {
            if setupValue == "actpass" {
                throw .badAnswer("a=setup:actpass; an answer must choose active or passive (RFC 5763 §5)")
            }
            throw .badAnswer("a=setup must be active or passive")
        }

        var candidates: [String] = []
        for (section, _) in accepted {
            for value in section.values(of: "candidate") where !candidates.contains(value) { candidates.append(value) }
        }
        return WebRTCAnswer(
            video: video, audio: accepted.first { $0.1.kind == .audio }?.1, rejected: rejected,
            iceUfrag: ufrag, icePwd: pwd,
            iceLite: sdp.attributes.contains { $0.name == "ice-lite" },
            fingerprints: fingerprints, setup: setup, candidates: candidates,
            endOfCandidates: accepted.contains { $0.0.has("end-of-candidates") } || sdp.attributes.contains { $0.name == "end-of-candidates" },
            connectionAddress: tagged.connectionAddress ?? sdp.connectionAddress,
            dropped: dropped)
    }

    // ---- sections ----

    private static func videoMedia(_ m: MediaDescription, mid: String, offer: WebRTCOfferConfiguration,
                                   dropped: inout [String]) -> Media? {
        // The first payload type in the answer's order that is a codec we offered.
        let maps = m.rtpMaps
        for pt in m.payloadTypes {
            guard let map = maps.first(where: { $0.payloadType == pt }),
                  let codec = offer.videoCodecs.first(where: {
                      $0.name.rawValue.lowercased() == map.encodingName.lowercased() && $0.clockRate == map.clockRate
                  }) else { continue }
            // H.264 only in the mode rtcshare packetizes in (RFC 6184 §8.1: absent means 0).
            if codec.name == .h264, packetizationMode(m.formatParameters(for: pt)) != 1 { continue }
            var rtx: Int? = nil
            if offer.rtxSSRC != nil, codec.rtxPayloadType != nil {
                rtx = maps.first { r in
                    r.encodingName.lowercased() == "rtx" && r.clockRate == map.clockRate && m.payloadTypes.contains(r.payloadType)
                        && m.formatParameters(for: r.payloadType).map { apt($0) == pt } == true
                }?.payloadType
                if rtx == nil { dropped.append("video rtx") }
            }
            return Media(mid: mid, kind: .video,
                         codec: Codec(name: map.encodingName, payloadType: pt, clockRate: map.clockRate,
                                      channels: nil, formatParameters: m.formatParameters(for: pt)),
                         rtxPayloadType: rtx,
                         feedback: keptFeedback(m, pt, offered: WebRTCOfferConfiguration.videoFeedback, "video", &dropped),
                         extensions: keptExtensions(m, offered: offer.videoExtensions, "video", &dropped))
        }
        return nil
    }

    private static func audioMedia(_ m: MediaDescription, mid: String, offer: WebRTCOfferConfiguration,
                                   dropped: inout [String]) -> Media? {
        let maps = m.rtpMaps
        for pt in m.payloadTypes {
            guard let map = maps.first(where: { $0.payloadType == pt }), map.encodingName.lowercased() == "opus",
                  map.clockRate == 48_000, (map.channels ?? 1) == 2 else { continue }
            return Media(mid: mid, kind: .audio,
                         codec: Codec(name: map.encodingName, payloadType: pt, clockRate: 48_000, channels: 2,
                                      formatParameters: m.formatParameters(for: pt)),
                         rtxPayloadType: nil,
                         feedback: keptFeedback(m, pt, offered: WebRTCOfferConfiguration.audioFeedback, "audio", &dropped),
                         extensions: keptExtensions(m, offered: offer.audioExtensions, "audio", &dropped))
        }
        return nil
    }

    /// The `packetization-mode` of an H.264 `a=fmtp` value; 0 when absent (RFC 6184 §8.1).
    private static func packetizationMode(_ parameters: String?) -> Int? {
        for p in (parameters ?? "").split(separator: ";") {
            let kv = p.split(separator: "=", maxSplits: 1)
            if kv.count == 2, kv[0].trimmingSpaces == "packetization-mode" { return Int(kv[1].trimmingSpaces) }
        }
        return 0
    }

    /// The `apt=` of an RTX `a=fmtp` value (`apt=96`, `apt=96;rtx-time=3000`).
    private static func apt(_ parameters: String) -> Int? {
        for p in parameters.split(separator: ";") {
            let kv = p.split(separator: "=", maxSplits: 1)
            if kv.count == 2, kv[0].trimmingSpaces == "apt" { return Int(kv[1].trimmingSpaces) }
        }
        return nil
    }

    private static func keptFeedback(_ m: MediaDescription, _ pt: Int, offered: [String], _ kind: String,
                                     _ dropped: inout [String]) -> [String] {
        // Normalise "nack  pli" → "nack pli" before comparing with what was offered.
        let answered = m.feedback(for: pt).map { $0.split(separator: " ").joined(separator: " ") }
        var kept: [String] = []
        for fb in offered {
            if answered.contains(fb) { kept.append(fb) } else { dropped.append("\(kind) rtcp-fb \(fb)") }
        }
        return kept
    }

    private static func keptExtensions(_ m: MediaDescription, offered: [(id: Int, uri: String)], _ kind: String,
                                       _ dropped: inout [String]) -> [Extension] {
        let answered = m.extensionMaps
        var kept: [Extension] = []
        for (_, uri) in offered {
            if let e = answered.first(where: { $0.uri == uri }), (1...14).contains(e.id) {
                kept.append(Extension(id: e.id, uri: uri))
            } else {
                dropped.append("\(kind) extmap \(uri)")
            }
        }
        return kept
    }

    /// Within the bundle one ID means one URI, across sections too (RFC 8843 §9.1).
    private static func checkExtensionIDs(_ media: [Media]) throws(WHIPError) {
        var uriOf: [Int: String] = [:]
        for m in media {
            for e in m.extensions {
                if let other = uriOf[e.id], other != e.uri {
                    throw .badAnswer("extmap id \(e.id) names two extensions (\(other) and \(e.uri))")
                }
                uriOf[e.id] = e.uri
            }
        }
    }

    /// RFC 8839 ice-char: ALPHA / DIGIT / "+" / "/".
    private static func isICEChars(_ s: String, _ lengths: ClosedRange<Int>) -> Bool {
        lengths.contains(s.utf8.count) && s.utf8.allSatisfy {
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2B || $0 == 0x2F
        }
    }
}
