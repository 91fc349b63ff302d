import RTCShareCore
import RTCShareDTLS
import RTCShareICE
import RTCShareIO
import RTCShareMedia
import RTCShareRTP
import RTCShareTransport
import RTCShareWHIP

/// `--whip URL`: the share published into a WebRTC server (RFC 9725). Making the sink does the
/// signalling, before the first frame: one UDP socket, an ECDSA certificate, ICE credentials,
/// server-reflexive candidates asked of the STUN servers from that socket (at most
/// `gatheringTimeoutMilliseconds`), the offer POSTed with the bearer token, the answer read
/// strictly. Then the pipeline drives
/// the sans-IO `Transport` (ICE, DTLS-SRTP, the RTP send core) through this edge: the
/// socket, the clock, address conversion. At the end: RTCP BYE, DTLS close_notify, and the
/// WHIP resource DELETEd (within a second).
public final class WHIPSink: MediaSink, TransportOutput {
    public let name: String
    public let configuration: WHIPConfiguration
    /// What the server accepted and dropped of the offer, one entry each (for the log).
    public let negotiated: [String]
    public let resourceURL: String
    /// One line on what the STUN servers said (nil without `stunServers`).
    public let gatheringNotice: String?
    /// The video codec the server's answer kept (the first of the offered ones it listed).
    public let videoCodec: VideoCodec

    private let socket: UDPSocket
    private let transport: Transport<SystemRandomNumberGenerator>
    private let client: WHIPClient
    private let inbox: UnsafeMutableRawBufferPointer
    private var destination: (ICEAddress, SocketAddress)?
    private var started = false
    private var deleted = false
    private let createdAt: MediaTime
    private var reportedConnection = false
    /// Lines for the log once something happened (connected, with how long it took).
    public private(set) var notices: [String] = []

    /// Bytes of the history and its index, from the budget.
    public static func budgetBytes(_ configuration: WHIPConfiguration) -> Int {
        RTPSender.budgetBytes(historyBytes: configuration.historyBytes)
    }

    /// What the sink takes outside the budget while the share runs: libsrtp2's NSS backend
    /// (libnss3, freebl, softokn, sqlite, nspr: 2.85 MiB of pages once SRTP runs), OpenSSL's
    /// libcrypto and libssl (loaded with the session, not linked: 4.6 MiB once DTLS and the
    /// certificate have run), what stays of libcurl's chain after it is unloaded (0.45), the ICE
    /// agent, DTLS state and the heap they use (0.5), and the RTP, ICE and DTLS code of the
    /// binary. Measured (release build, `/proc/PID/smaps` mid-share) as the resident size of a
    /// `--whip` share into aiortc less the same share to a file, less the history: 9.56 MiB at
    /// 640x360, 9.93 at 1280x720.
    public static func heapBytes(_ configuration: WHIPConfiguration) -> Int { (39 << 20) / 4 }

    /// What closing loads once the encoder has gone: libcurl again for the DELETE, with its
    /// chain (GnuTLS, Kerberos, LDAP, libssh2, p11-kit, nettle …: 3.9 MiB of pages) and its heap.
    /// Measured as the share's peak, which comes there at 640x360, less its running size without
    /// the encoder: 4.46 and 4.36 MiB (without and with audio).
    public static func closingHeapBytes(_ configuration: WHIPConfiguration) -> Int { (44 << 20) / 10 }

    /// Offer → publish → connect: the whole signalling, before the first frame. A failure after
    /// the server made the session DELETEs it.
    public init(configuration: WHIPConfiguration, budget: MemoryBudget) throws(ShareError) {
        self.configuration = configuration
        createdAt = MonotonicClock.now()
        socket = try Self.openSocket(configuration)
        var offer = try Offer(configuration, socket: socket)
        gatheringNotice = offer.gatheringNotice
        client = WHIPClient(configuration: Self.httpConfiguration(configuration))
        let publication: WHIPPublication
        let answer: WebRTCAnswer
        do {
            publication = try client.publish(to: configuration.url, offer: WebRTCOffer.text(offer.sdp),
                                             token: configuration.token)
            answer = try WebRTCAnswer.parse(publication.answer, offer: offer.sdp)
        } catch {
            throw .connection(.whip(url: configuration.url, error))
        }
        resourceURL = publication.resourceURL
        videoCodec = answer.video.codec.name.uppercased() == VideoCodec.h264.encodingName ? .h264 : .vp8
        name = "whip \(configuration.url)"
        negotiated = Self.describe(answer) + publication.iceServers.filter { !$0.isUsed }.map { "ICE server \($0)" }
        do {
            transport = try Self.connect(&offer, to: answer, codec: videoCodec, configuration, budget: budget)
        } catch {
            try? client.delete(resource: publication.resourceURL, token: configuration.token)
            throw error
        }
        inbox = .allocate(byteCount: Transport<SystemRandomNumberGenerator>.maximumDatagramBytes
                          + SRTPProfile.requiredTailroom, alignment: 16)
    }

    /// One socket for STUN, DTLS and SRTP.
    private static func openSocket(_ configuration: WHIPConfiguration) throws(ShareError) -> UDPSocket {
        do {
            return try UDPSocket(bindingTo: configuration.bindAddress ?? SocketAddress(parsing: "0.0.0.0:1").with(port: 0))
        } catch {
            throw .output("WHIP: cannot open a UDP socket: \(error)")
        }
    }

    private static func httpConfiguration(_ configuration: WHIPConfiguration) -> WHIPClient.Configuration {
        var http = WHIPClient.Configuration()
        http.connectTimeout = configuration.httpConnectTimeoutSeconds
        http.totalTimeout = configuration.httpTotalTimeoutSeconds
        return http
    }

    /// What this end offers and keeps for the connection: the certificate, the ICE agent with
    /// its host (and server-reflexive) candidates, the SSRCs, and the offer written from them.
    struct Offer: ~Copyable {
        let certificate: DTLSCertificate
        var ice: ICEAgent<SystemRandomNumberGenerator>
        let identity: RTPSenderIdentity
        let sdp: WebRTCOfferConfiguration
        let gatheringNotice: String?

        init(_ configuration: WHIPConfiguration, socket: UDPSocket) throws(ShareError) {
            var rng = SystemRandomNumberGenerator()
            let port = socket.localAddress.port
            let bound = socket.localAddress
            let hostAddresses = bound.ipv4 == 0 ? SocketAddress.interfaceAddresses(port: port) : [bound]
            guard !hostAddresses.isEmpty else { throw .output("WHIP: no IPv4 interface to offer a candidate on") }
            let certificate: DTLSCertificate
            do { certificate = try DTLSCertificate() } catch { throw .output("WHIP: certificate: \(error)") }
            var ice = ICEAgent(configuration: WHIPSink.iceConfiguration(configuration), random: SystemRandomNumberGenerator())
            for (index, address) in hostAddresses.enumerated() {
                guard let ipv4 = address.ipv4 else { continue }
                ice.addHostCandidate(ICEAddress(ipv4: ipv4, port: UInt16(port)), localPreference: UInt16(65_535 - index))
            }
            // Before the offer: the STUN servers' view of this socket (the offer is written once).
            let notice = ice.configuration.stunServers.isEmpty ? nil : WHIPSink.gather(&ice, on: socket).notice
            let identity = RTPSenderIdentity(using: &rng)
            var offer = WebRTCOfferConfiguration(
                sessionID: UInt64.random(in: 1...UInt64(Int64.max), using: &rng),
                iceUfrag: ice.localCredentials.ufrag, icePwd: ice.localCredentials.password,
                fingerprint: certificate.fingerprint(.sha256),
                candidates: ice.localCandidates.compactMap(WebRTCOfferConfiguration.Candidate.init),
                cname: identity.cname, videoSSRC: identity.videoSSRC, rtxSSRC: identity.rtxSSRC)
            offer.videoCodecs = configuration.videoCodecs.map { codec in
                guard codec == .h264 else { return .vp8 }
                var h264 = WebRTCOfferConfiguration.VideoCodec.h264
                h264.h264LevelIDC = configuration.h264LevelIDC
                return h264
            }
            if configuration.sendsAudio { offer.audio = .init(ssrc: identity.audioSSRC) }
            self.certificate = certificate
            self.ice = ice
            self.identity = identity
            self.gatheringNotice = notice
            sdp = offer
        }
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
    private static func connect(_ offer: inout Offer, to answer: WebRTCAnswer, codec: VideoCodec,
                                _ configuration: WHIPConfiguration,
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
            dtls = try DTLSTransport(certificate: offer.certificate, configuration: DTLSConfiguration(
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
            throw .invalidConfiguration("RTP: \(error)")
        }
        return Transport(connection: WebRTCConnection(ice: offer.ice, dtls: dtls), sender: sender)
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

    deinit { inbox.deallocate() }

    /// The answer's fingerprint rtcshare checks the server's certificate against (sha-256
    /// preferred, else the first it can verify).
    private static func fingerprint(of answer: WebRTCAnswer) -> DTLSFingerprint {
        answer.fingerprints.first { $0.hashFunction == .sha256 } ?? answer.fingerprints[0]
    }

    private static func describe(_ answer: WebRTCAnswer) -> [String] {
        var lines = ["video \(answer.video.codec.name)/\(answer.video.codec.payloadType)"
                     + (answer.video.rtxPayloadType.map { " rtx/\($0)" } ?? "")
                     + "; feedback: " + answer.video.feedback.joined(separator: ", ")
                     + "; extensions: " + answer.video.extensions.map(\.uri).joined(separator: ", ")]
        if let audio = answer.audio { lines.append("audio \(audio.codec.name)/\(audio.codec.payloadType)") }
        lines.append("setup \(answer.setup.rawValue)\(answer.iceLite ? ", ice-lite" : "")")
        if !answer.dropped.isEmpty { lines.append("not kept: " + answer.dropped.joined(separator: "; ")) }
        return lines
    }

    public var descriptors: [Int32] { [socket.descriptor] }
    public var transportStats: TransportStats? { transport.stats }
    public var acceptsVideo: Bool { transport.sender?.isConnected ?? false }
    public var state: TransportState { transport.state }

    static func iceAddress(_ address: SocketAddress) -> ICEAddress? {
        if let v4 = address.ipv4 { return ICEAddress(ipv4: v4, port: UInt16(truncatingIfNeeded: address.port)) }
        if let v6 = address.ipv6 { return ICEAddress(ipv6High: v6.high, low: v6.low, port: UInt16(truncatingIfNeeded: address.port)) }
        return nil
    }

    private func socketAddress(_ address: ICEAddress) -> SocketAddress {
        if let cached = destination, cached.0 == address { return cached.1 }
        let converted = Self.socketAddress(address)
        destination = (address, converted)
        return converted
    }

    static func socketAddress(_ address: ICEAddress) -> SocketAddress {
        if let v4 = address.ipv4 { return SocketAddress(ipv4: v4, port: Int(address.port)) }
        let v6 = address.ipv6!
        return SocketAddress(ipv6High: v6.high, low: v6.low, port: Int(address.port))
    }

    /// Sends one datagram of the transport on the socket (every one goes to an address: WebRTC).
    public func transmit(_ datagram: UnsafeRawBufferPointer, to destination: TransportDestination) {
        guard case .address(let to) = destination else { return }
        if case .sent = socket.send(datagram, to: socketAddress(to)) { return }
        transport.transmitFailed()
    }

    private func startIfNeeded(_ now: MediaTime) {
        guard !started else { return }
        started = true
        transport.start(at: now, output: self)
    }

    public func send(video frame: OutgoingVideoFrame) throws(ShareError) {
        let now = MonotonicClock.now()
        startIfNeeded(now)
        do {
            try transport.sendVideo(frame.bytes, mediaTimestamp: frame.mediaTimestamp, orientation: frame.orientation,
                                    at: now, output: self)
        } catch {
            throw .pipeline("RTP video: \(error)")
        }
    }

    public func send(audio packet: OutgoingAudioPacket) throws(ShareError) {
        let now = MonotonicClock.now()
        startIfNeeded(now)
        do {
            try transport.sendAudio(packet.bytes, mediaTimestamp: packet.mediaTimestamp, samples: packet.samples,
                                    at: now, output: self)
        } catch {
            throw .pipeline("RTP audio: \(error)")
        }
    }

    public func service(at now: MediaTime) throws(ShareError) -> TransportRequests {
        startIfNeeded(now)
        for _ in 0..<64 {
            let buffer = UnsafeMutableRawBufferPointer(rebasing: inbox[0..<Transport<SystemRandomNumberGenerator>.maximumDatagramBytes])
            guard case .datagram(let count, let from) = socket.receive(into: buffer) else { break }
            guard let source = Self.iceAddress(from) else { continue }
            transport.handle(datagram: inbox, count: count, from: source, at: now, output: self)
        }
        transport.tick(at: now, output: self)
        if case .failed(let why) = transport.state { throw .connection(.transport(why)) }
        if !reportedConnection, let connection = transport.connection, let connected = connection.dtlsConnectedAt {
            reportedConnection = true
            let ice = connection.iceConnectedAt.map { "ICE \(($0 - createdAt).microseconds / 1000) ms, " } ?? ""
            notices.append("WHIP: connected (\(ice)DTLS-SRTP \(connection.srtpProfile?.name ?? "?") at \((connected - createdAt).microseconds / 1000) ms) via \(connection.ice.selectedPair.map { "\($0)" } ?? "?")")
        }
        return transport.takeRequests(at: now)
    }

    public func maximumBitrateChanged(kbps: Int, at now: MediaTime) {
        transport.setMaximumBitrate(kbps: kbps, at: now)
    }

    /// Takes the notices gathered since the last call.
    public func takeNotices() -> [String] {
        defer { notices = [] }
        return notices
    }

    public func finish(_ reason: FinishReason) throws(ShareError) {
        transport.close(at: MonotonicClock.now(), output: self)
        deleteResource()
    }

    /// DELETE the WHIP resource once (the server tears the session down).
    public func deleteResource() {
        guard !deleted else { return }
        deleted = true
        try? client.delete(resource: resourceURL, token: configuration.token)
    }
}

extension ShareConfiguration {
    /// Counts a WHIP output in the plan: its share of the frame budget, the crypto and HTTP
    /// libraries it loads, what closing loads again, and that video waits for the connection.
    public mutating func countOutput(whip: WHIPConfiguration) {
        outputBudgetBytes = WHIPSink.budgetBytes(whip)
        outputHeapBytes = WHIPSink.heapBytes(whip)
        outputClosingHeapBytes = WHIPSink.closingHeapBytes(whip)
        videoWaitsForConnection = true
    }
}
