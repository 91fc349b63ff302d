import RTCShareCore
import RTCShareDTLS
import RTCShareICE
import RTCShareIO
import RTCShareMedia
import RTCShareRTP
import RTCShareTransport
import RTCShareWHIP

/// One publication on a WHIP server: the session resource the POST created and the transport
/// toward what its answer kept. A reconnect lets it go (its send core's history goes back to
/// the budget) and makes a new one.
final class WHIPPublishedSession {
    let resourceURL: String
    let transport: Transport<SystemRandomNumberGenerator>
    /// The answer's candidates (an ICE restart whose answer names none keeps them) and its
    /// video section, which an ICE restart's fragment names (any section names the bundle's one
    /// ICE transport, RFC 8843).
    let answerCandidates: [String]
    let videoSection: (mid: String, payloadType: Int)
    /// What the server accepted and dropped of the offer, one entry each (for the log).
    let negotiated: [String]
    let videoCodec: VideoCodec
    let createdAt: MediaTime
    /// The stream to the TURN server the connection relays through (TCP, TLS), if any.
    let relayStream: TURNStream?
    var started = false
    /// When its connection came up (media flows).
    var connectedAt: MediaTime?

    init(resourceURL: String, transport: Transport<SystemRandomNumberGenerator>,
         answer: WebRTCAnswer, negotiated: [String], videoCodec: VideoCodec, createdAt: MediaTime,
         relayStream: TURNStream?) {
        self.resourceURL = resourceURL
        self.relayStream = relayStream
        answerCandidates = answer.candidates
        videoSection = (answer.video.mid, answer.video.codec.payloadType)
        self.transport = transport
        self.negotiated = negotiated
        self.videoCodec = videoCodec
        self.createdAt = createdAt
    }
}

extension WHIPSink {
    /// What every publication of the sink shares: the socket, the certificate (its fingerprint
    /// is in every offer), the SSRCs, the HTTP client and the budget.
    final class Publisher {
        let configuration: WHIPConfiguration
        let socket: UDPSocket
        let certificate: DTLSCertificate
        let identity: RTPSenderIdentity
        let client: WHIPClient
        let budget: MemoryBudget
        /// Resources whose DELETE failed (the path was down): tried again once a connection
        /// is up, and at the end. At most `maximumUndeleted`, the oldest given up first.
        private(set) var undeleted: [String] = []
        /// The TURN servers an answer named (RFC 9725 §4.6), offered from in every later offer.
        private(set) var answerTURNServers: [TURNServerConfiguration] = []
        /// The last connection ran through a TURN relay: an offer without one (every TURN server
        /// unreachable for now) would only wait out ICE's timeout, so it is not made; the
        /// attempt fails and the policy tries again after its back-off.
        var lastPathRelayed = false
        static let maximumUndeleted = 8

        init(configuration: WHIPConfiguration, socket: UDPSocket, certificate: consuming DTLSCertificate,
             identity: RTPSenderIdentity, client: WHIPClient, budget: MemoryBudget) {
            self.configuration = configuration
            self.socket = socket
            self.certificate = certificate
            self.identity = identity
            self.client = client
            self.budget = budget
        }

        /// Offer → POST → answer → transport. A failure after the server made the session
        /// DELETEs it (a line in `notices` if that fails too). `codecs`: what the offer names
        /// (once the encoder runs, only its codec).
        func publish(codecs: [VideoCodec], notices: inout [String]) throws(ShareError)
            -> (WHIPPublishedSession, gathering: String?)
        {
            let createdAt = MonotonicClock.now()
            var offer = try Offer(configuration, codecs: codecs, socket: socket, certificate: certificate,
                                  identity: identity, turnServers: configuration.turnServers + answerTURNServers)
            if offer.relay == nil, lastPathRelayed, let failure = offer.relayFailures.first {
                throw .connection(.transport(.relay(failure)))
            }
            let publication: WHIPPublication
            do throws(WHIPError) {
                publication = try client.publish(to: configuration.url, offer: WebRTCOffer.text(offer.sdp),
                                                 token: configuration.token)
            } catch {
                throw .connection(.whip(url: configuration.url, error))
            }
            do throws(ShareError) {
                let answer: WebRTCAnswer
                do throws(WHIPError) {
                    answer = try WebRTCAnswer.parse(publication.answer, offer: offer.sdp)
                } catch {
                    throw .connection(.whip(url: configuration.url, error))
                }
                let codec: VideoCodec = answer.video.codec.name.uppercased() == VideoCodec.h264.encodingName ? .h264 : .vp8
                let linked = try relayFromAnswer(publication.iceServers, offer: &offer)
                let stream = offer.relay?.stream
                let transport = try WHIPSink.connect(&offer, to: answer, codec: codec, certificate: certificate,
                                                     configuration, budget: budget)
                taken(publication.resourceURL)
                let negotiated = WHIPSink.describe(answer) + linked
                return (WHIPPublishedSession(resourceURL: publication.resourceURL,
                                             transport: transport, answer: answer, negotiated: negotiated,
                                             videoCodec: codec, createdAt: createdAt, relayStream: stream),
                        offer.notices)
            } catch {
                if let line = delete(publication.resourceURL) { notices.append(line) }
                throw error
            }
        }

        /// The answer's ICE servers: TURN ones with credentials are remembered for later offers and,
        /// when this offer had no relayed candidate, allocated on now and the relayed candidate
        /// added to the agent (a server answers checks from an address it was not told of: it
        /// learns it as peer-reflexive). Relay-only with no relay at all: the share cannot run.
        /// Returns a line per server for the log.
        func relayFromAnswer(_ servers: [WHIPICEServer], offer: inout Offer) throws(ShareError) -> [String] {
            var lines: [String] = []
            var fresh: [TURNServerConfiguration] = []
            for server in servers {
                guard configuration.usesAnswerICEServers, server.kind == .turn || server.kind == .turns else {
                    lines.append("ICE server \(server) — not used"
                                 + (server.kind == .stun || server.kind == .stuns
                                    ? " (it came after the offer's candidates; give STUN servers with --ice-server)"
                                    : " (the answer's ICE servers are not used in this configuration)"))
                    continue
                }
                do throws(ICEError) {
                    let uri = try ICEServerURI(parsing: server.url)
                    let credentials = try TURNCredentials(username: server.username ?? "", password: server.credential ?? "")
                    let turn = TURNServerConfiguration(uri: uri, credentials: credentials)
                    if !answerTURNServers.contains(turn) && !configuration.turnServers.contains(turn) { fresh.append(turn) }
                    lines.append("ICE server \(server) — used")
                } catch {
                    lines.append("ICE server \(server) — not used: \(error)")
                }
            }
            answerTURNServers = Array((answerTURNServers + fresh).prefix(8))
            if offer.relay == nil, !fresh.isEmpty {
                let (relay, notice, failures) = WHIPSink.allocateRelay(fresh, socket: socket, configuration: configuration)
                offer.relayNotice = [offer.relayNotice, notice].compactMap { $0 }.joined(separator: "; ")
                offer.relayFailures += failures
                if let relay { offer.addRelay(relay) }
            }
            if configuration.iceTransportPolicy == .relay, offer.relay == nil {
                let failure = offer.relayFailures.first(where: \.isPermanent) ?? offer.relayFailures.last
                    ?? .unreachable(server: "(none)", why: "relay-only and no TURN server given (--ice-server turn:…)")
                throw .connection(.transport(.relay(failure)))
            }
            return lines
        }

        /// Restarts ICE on `session` (RFC 9725 §4.3.2): a new agent with new credentials and the
        /// host's candidates of now, PATCHed; the server's new credentials (and candidates, or
        /// the answer's) set on it, and the transport's checks started. False: the server does
        /// not restart ICE by PATCH (405/501).
        func restartICE(_ session: WHIPPublishedSession, at now: MediaTime,
                        output: some TransportOutput) throws(ShareError) -> Bool {
            var (ice, _) = try WHIPSink.makeAgent(configuration, socket: socket)
            // The allocation outlives the restart: its relayed candidate is offered again.
            if let relay = session.transport.connection?.relay { ice.addRelayedCandidate(allocatedBy: relay) }
            let fragment = WHIPICERestart.fragment(
                ufrag: ice.localCredentials.ufrag, password: ice.localCredentials.password,
                candidates: ice.localCandidates.compactMap(WebRTCOfferConfiguration.Candidate.init).map(\.sdpValue),
                mid: session.videoSection.mid, kind: "video", payloadType: session.videoSection.payloadType)
            let restart: WHIPICERestart
            do throws(WHIPError) {
                guard case .restarted(let r) = try client.restartICE(resource: session.resourceURL, fragment: fragment,
                                                                      token: configuration.token) else { return false }
                restart = r
            } catch {
                throw .connection(.whip(url: session.resourceURL, error))
            }
            do {
                ice.setRemoteCredentials(try ICECredentials(ufrag: restart.ufrag, password: restart.password))
            } catch {
                throw .connection(.whip(url: session.resourceURL, .badAnswer("the ICE restart's credentials: \(error)")))
            }
            for value in restart.candidates.isEmpty ? session.answerCandidates.map({ "candidate:" + $0 }) : restart.candidates {
                _ = try? ice.addRemoteCandidate(sdpAttribute: value)
            }
            session.connectedAt = nil
            session.transport.restartICE(ice, at: MonotonicClock.now(), output: output)
            return true
        }

        /// DELETEs a session resource (bounded: at most a second); nil, or the one line saying
        /// why the server did not take it (not fatal: the share goes on or ends as it would).
        func delete(_ resource: String) -> String? {
            let failure: String
            do throws(WHIPError) {
                try client.delete(resource: resource, token: configuration.token)
                undeleted.removeAll { $0 == resource }
                return nil
            } catch {
                // 404 or 410: the server has ended the session itself (nothing left behind).
                if case .httpStatus(let status, _, _) = error, status == 404 || status == 410 {
                    undeleted.removeAll { $0 == resource }
                    return nil
                }
                failure = WHIPClient.deleteFailure(resource: resource, error, token: configuration.token)
            }
            if !undeleted.contains(resource) {
                if undeleted.count == Self.maximumUndeleted { undeleted.removeFirst() }
                undeleted.append(resource)
            }
            return "warning: " + failure + " (tried again once connected)"
        }

        /// A new session got `resource`: the server reuses resource names (one per endpoint), so
        /// an old session of that name is gone or replaced, never to be DELETEd (that would end
        /// the new one).
        func taken(_ resource: String) { undeleted.removeAll { $0 == resource } }

        /// DELETEs the oldest resource whose DELETE failed; nil, or the line saying it failed
        /// again.
        func deleteOneUndeleted() -> String? {
            guard let resource = undeleted.first else { return nil }
            return delete(resource)
        }
    }

    /// One socket for STUN, DTLS and SRTP, for every publication of the share. It asks for
    /// ICMP errors: a server whose port closed (it restarted) is known at its next packet.
    static func openSocket(_ configuration: WHIPConfiguration) throws(ShareError) -> UDPSocket {
        let socket: UDPSocket
        do {
            socket = try UDPSocket(bindingTo: configuration.bindAddress ?? SocketAddress(parsing: "0.0.0.0:1").with(port: 0))
        } catch {
            throw .output("WHIP: cannot open a UDP socket: \(error)")
        }
        _ = socket.reportUnreachable()
        return socket
    }

    static func httpConfiguration(_ configuration: WHIPConfiguration) -> WHIPClient.Configuration {
        var http = WHIPClient.Configuration()
        http.connectTimeout = configuration.httpConnectTimeoutSeconds
        http.totalTimeout = configuration.httpTotalTimeoutSeconds
        http.stop = configuration.stop
        return http
    }

    static func makeCertificate() throws(ShareError) -> DTLSCertificate {
        do { return try DTLSCertificate() } catch { throw .resource("WHIP: certificate: \(error)") }
    }

    /// What this end offers and keeps for one connection: the ICE agent with its host (and
    /// server-reflexive) candidates of now, and the offer written from them.
    struct Offer: ~Copyable {
        var ice: ICEAgent<SystemRandomNumberGenerator>
        let identity: RTPSenderIdentity
        let sdp: WebRTCOfferConfiguration
        let gatheringNotice: String?
        /// The TURN allocation whose relayed candidate the agent has, and what allocating said.
        /// Spelled `Optional<…>` and without defaults, all assigned after the init's one throw:
        /// Swift 6.0's SIL verifier crashes on a noncopyable struct whose throwing init has
        /// default-initialized stored properties to clean up.
        var relay: Optional<WHIPRelay>
        var relayNotice: Optional<String>
        var relayFailures: [TURNFailure]

        init(_ configuration: WHIPConfiguration, codecs: [VideoCodec], socket: UDPSocket,
             certificate: borrowing DTLSCertificate, identity: RTPSenderIdentity,
             turnServers: [TURNServerConfiguration]) throws(ShareError) {
            var rng = SystemRandomNumberGenerator()
            var (ice, notice) = try WHIPSink.makeAgent(configuration, socket: socket)
            var relay: WHIPRelay? = nil
            var relayNotice: String? = nil
            var relayFailures: [TURNFailure] = []
            if !turnServers.isEmpty {
                (relay, relayNotice, relayFailures) = WHIPSink.allocateRelay(turnServers, socket: socket,
                                                                             configuration: configuration)
                if let relay { ice.addRelayedCandidate(allocatedBy: relay.client) }
            }
            var offer = WebRTCOfferConfiguration(
                sessionID: UInt64.random(in: 1...UInt64(Int64.max), using: &rng),
                iceUfrag: ice.localCredentials.ufrag, icePwd: ice.localCredentials.password,
                fingerprint: certificate.fingerprint(.sha256),
                candidates: ice.localCandidates.compactMap(WebRTCOfferConfiguration.Candidate.init),
                cname: identity.cname, videoSSRC: identity.videoSSRC, rtxSSRC: identity.rtxSSRC)
            offer.videoCodecs = codecs.map { codec in
                guard codec == .h264 else { return .vp8 }
                var h264 = WebRTCOfferConfiguration.VideoCodec.h264
                h264.h264LevelIDC = configuration.h264LevelIDC
                return h264
            }
            if configuration.sendsAudio { offer.audio = .init(ssrc: identity.audioSSRC) }
            self.ice = ice
            self.identity = identity
            self.gatheringNotice = notice
            self.relay = relay
            self.relayNotice = relayNotice
            self.relayFailures = relayFailures
            sdp = offer
        }

        /// What gathering and allocating said, one line (nil: neither ran).
        var notices: String? {
            let lines = [gatheringNotice, relayNotice].compactMap { $0 }
            return lines.isEmpty ? nil : lines.joined(separator: "; ")
        }

        /// A relay allocated after the offer went out (from the answer's servers).
        mutating func addRelay(_ relay: WHIPRelay) {
            ice.addRelayedCandidate(allocatedBy: relay.client)
            self.relay = relay
        }
    }


    /// A new ICE agent on the socket: new credentials, a host candidate on each of the host's
    /// addresses of now (after an address change, the new one), and what the STUN servers say
    /// of the socket (asked now: an offer or a restart fragment is written once).
    static func makeAgent(_ configuration: WHIPConfiguration, socket: UDPSocket) throws(ShareError)
        -> (ICEAgent<SystemRandomNumberGenerator>, notice: String?)
    {
        var ice = ICEAgent(configuration: iceConfiguration(configuration), random: SystemRandomNumberGenerator())
        // Relay-only: no host or server-reflexive candidate is offered or checked.
        if configuration.iceTransportPolicy == .relay { return (ice, nil) }
        let port = socket.localAddress.port
        let hostAddresses = Self.hostAddresses(of: socket)
        guard !hostAddresses.isEmpty else { throw .connection(.transport(.noLocalAddress)) }
        for (index, address) in hostAddresses.enumerated() {
            guard let ipv4 = address.ipv4 else { continue }
            ice.addHostCandidate(ICEAddress(ipv4: ipv4, port: UInt16(port)), localPreference: UInt16(65_535 - index))
        }
        let notice = ice.configuration.stunServers.isEmpty ? nil : gather(&ice, on: socket).notice
        return (ice, notice)
    }

    /// The addresses the socket sends from: the one it is bound to, or (bound to every
    /// interface) each IPv4 address the host has now.
    static func hostAddresses(of socket: UDPSocket) -> [SocketAddress] {
        let bound = socket.localAddress
        return bound.ipv4 == 0 ? SocketAddress.interfaceAddresses(port: bound.port) : [bound]
    }

    static func iceConfiguration(_ configuration: WHIPConfiguration) -> ICEConfiguration {
        var ice = ICEConfiguration()
        ice.connectTimeout = .seconds(Int64(configuration.connectTimeoutSeconds))
        ice.consentTimeout = .seconds(Int64(configuration.consentTimeoutSeconds))
        ice.consentInterval = .milliseconds(min(5_000, Int64(configuration.consentTimeoutSeconds) * 250))
        ice.stunServers = configuration.stunServers.compactMap(Self.iceAddress)
        ice.gatheringTimeout = .milliseconds(Int64(configuration.gatheringTimeoutMilliseconds))
        return ice
    }

    /// The transport toward what the answer kept: ICE to its candidates, DTLS in the role it
    /// leaves us checked against its fingerprint, the RTP send core with its payload types and
    /// extensions.
    static func connect(_ offer: inout Offer, to answer: WebRTCAnswer, codec: VideoCodec,
                        certificate: borrowing DTLSCertificate, _ configuration: WHIPConfiguration,
                        budget: MemoryBudget) throws(ShareError) -> Transport<SystemRandomNumberGenerator> {
        do {
            offer.ice.setRemoteCredentials(try ICECredentials(ufrag: answer.iceUfrag, password: answer.icePwd))
        } catch {
            throw .output("WHIP: the answer's ICE credentials: \(error)")
        }
        for value in answer.candidates { _ = try? offer.ice.addRemoteCandidate(sdpAttribute: "candidate:" + value) }
        guard !offer.ice.remoteCandidates.isEmpty else {
            throw .output("WHIP: the answer has no UDP candidate rtcshare can use")
        }
        let dtls: DTLSTransport
        do {
            dtls = try DTLSTransport(certificate: certificate, configuration: DTLSConfiguration(
                role: answer.setup == .active ? .server : .client, remoteFingerprint: fingerprint(of: answer),
                mtu: configuration.mtu))
        } catch {
            throw .output("WHIP: DTLS: \(error)")
        }
        let sender: RTPSender
        do {
            sender = try RTPSender(configuration: senderConfiguration(answer, codec: codec, identity: offer.identity,
                                                                      configuration),
                                   budget: budget, random: SystemRandomNumberGenerator())
        } catch {
            if case .outOfMemory = error { throw .doesNotFit("\(error)") }
            // libsrtp2 that cannot initialise (its crypto backend short of memory) is no setting.
            if case .srtp = error { throw .resource("RTP: \(error)") }
            throw .invalidConfiguration("RTP: \(error)")
        }
        return Transport(connection: WebRTCConnection(ice: offer.ice, dtls: dtls, relay: offer.relay?.client), sender: sender)
    }

    /// The RTP send core's wire choices: what the answer kept.
    private static func senderConfiguration(_ answer: WebRTCAnswer, codec: VideoCodec, identity: RTPSenderIdentity,
                                            _ configuration: WHIPConfiguration) -> RTPSenderConfiguration {
        var wire = RTPSenderConfiguration()
        wire.mtu = configuration.mtu
        wire.protection = .awaitingKeys
        wire.identity = identity
        wire.videoPayloadType = UInt8(answer.video.codec.payloadType)
        wire.videoCodec = codec
        wire.rtxPayloadType = answer.video.rtxPayloadType.map { UInt8($0) }
        wire.audioPayloadType = answer.audio.map { UInt8($0.codec.payloadType) }
        wire.absSendTimeID = answer.video.extensionID(for: AbsSendTime.uri).map { UInt8($0) }
        wire.transportSequenceID = answer.video.extensionID(for: TransportSequenceNumber.uri).map { UInt8($0) }
        wire.videoOrientationID = nil  // pixels are turned at the source: not every server keeps CVO
        // MID in every packet of each section that kept it (one ID for the bundle: RFC 8843 §9.1
        // lets one URI have one ID only), for servers that demultiplex the bundle by mid.
        let midID = answer.video.extensionID(for: RTPMid.uri) ?? answer.audio?.extensionID(for: RTPMid.uri)
        wire.midID = midID.map { UInt8($0) }
        if let midID {
            if answer.video.extensionID(for: RTPMid.uri) == midID { wire.videoMID = RTPMid(answer.video.mid) }
            if let audio = answer.audio, audio.extensionID(for: RTPMid.uri) == midID { wire.audioMID = RTPMid(audio.mid) }
        }
        wire.historyBytes = configuration.historyBytes
        wire.wallClockOffsetMicroseconds = WallClock.nowMicroseconds() - MonotonicClock.now().microseconds
        return wire
    }

    /// The answer's fingerprint rtcshare checks the server's certificate against (sha-256
    /// preferred, else the first it can verify).
    private static func fingerprint(of answer: WebRTCAnswer) -> DTLSFingerprint {
        answer.fingerprints.first { $0.hashFunction == .sha256 } ?? answer.fingerprints[0]
    }

    static func describe(_ answer: WebRTCAnswer) -> [String] {
        var lines = ["video \(answer.video.codec.name)/\(answer.video.codec.payloadType)"
                     + (answer.video.rtxPayloadType.map { " rtx/\($0)" } ?? "")
                     + "; feedback: " + answer.video.feedback.joined(separator: ", ")
                     + "; extensions: " + answer.video.extensions.map(\.uri).joined(separator: ", ")]
        if let audio = answer.audio { lines.append("audio \(audio.codec.name)/\(audio.codec.payloadType)") }
        lines.append("setup \(answer.setup.rawValue)\(answer.iceLite ? ", ice-lite" : "")")
        if !answer.dropped.isEmpty { lines.append("not kept: " + answer.dropped.joined(separator: "; ")) }
        return lines
    }
}
