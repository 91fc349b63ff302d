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
/// strictly (a temporary failure is tried again as the reconnect policy says). Then the
/// pipeline drives the sans-IO `Transport` (ICE, DTLS-SRTP, the RTP send core) through this
/// edge: the socket, the clock, address conversion.
///
/// When the connection is lost (consent expired, ICE or DTLS failed or closed, the server's
/// port closed) the share keeps its pipeline and memory: the old session is ended (BYE,
/// close_notify, DELETE) with the next attempt, nothing is encoded meanwhile
/// (`acceptsVideo`), and after the policy's back-off a new offer is POSTed; its connection
/// starts with a keyframe. At the end:
/// RTCP BYE, DTLS close_notify, and the WHIP resource DELETEd (within a second).
public final class WHIPSink: MediaSink, TransportOutput {
    public let name: String
    public let configuration: WHIPConfiguration
    /// One line on what the STUN servers said at the first offer (nil without `stunServers`).
    public let gatheringNotice: String?
    /// The video codec the server's first answer kept (the first of the offered ones it
    /// listed); later offers name it alone.
    public let videoCodec: VideoCodec

    private let publisher: Publisher
    private let socket: UDPSocket
    /// The host's address changes (nil where netlink is not available), read when the loop
    /// says they are readable.
    private let addresses = AddressWatch()
    private var addressesReadable = false
    private let inbox: UnsafeMutableRawBufferPointer
    private var destination: (ICEAddress, SocketAddress)?
    /// The publication media goes to; nil between a loss and the next attempt.
    private var session: WHIPPublishedSession?
    private var policy: ReconnectPolicy
    private var random = SystemRandomNumberGenerator()
    /// When the connection was lost, until it is back.
    private var lostAt: MediaTime?
    /// The attempt the policy asked for, until it is made.
    private var nextAttempt: (at: MediaTime, way: ReconnectPolicy.Way)?
    /// The session a loss ended: its goodbye (BYE, close_notify), its end and its DELETE wait
    /// for the next attempt. The pipeline lets go of its encoder once it hears of the loss, and
    /// what ending the old session runs (DTLS's close_notify, the SRTP and DTLS teardown: NSS's
    /// and OpenSSL's code paged in again, ~2.5 MiB at once) and what the DELETE loads (libcurl
    /// and its chain, ~4 MiB) then come beside a share that no longer holds it.
    private var lostSession: WHIPPublishedSession?
    private var maximumKbps: Int?
    private var everConnected = false
    private var changes: [ConnectionChange] = []
    /// Lines for the log once something happened (connected, with how long it took).
    public private(set) var notices: [String] = []

    /// What the server accepted and dropped of the offer, one entry each (for the log).
    public var negotiated: [String] { session?.negotiated ?? [] }
    /// The session resource of the current publication ("" while there is none).
    public var resourceURL: String { session?.resourceURL ?? "" }

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
    /// 640x360, 9.93 at 1280x720. Calibrated since against the shares (`planner_case.py`, release
    /// build, the start-up's pages let go): VP8 WHIP shares ran 2.2–2.9 MiB above the same `--peer`
    /// shares at 1280x720 to 1920x1080, where the plan said 3.35, and peaked 1.0–1.7 MiB under
    /// it (H.264 ones, whose peak is their reconnect, 0.4–0.6): 9.15 MiB.
    /// With TURN servers, 0.25 MiB more: the stream's buffers (80 KiB) and OpenSSL's TLS client
    /// with its CA store; measured (release build, peak RSS of a 1280x720@20 share with audio
    /// into aiortc through coturn, relay-only, against the same share direct, 3 runs): TURN/UDP
    /// +0.02–0.18 MiB, TURN/TCP −0.21–+0.14, TURN/TLS −0.08–+1.03 (median +0.13).
    public static func heapBytes(_ configuration: WHIPConfiguration) -> Int {
        (183 << 20) / 20 + (configuration.turnServers.isEmpty ? 0 : 256 << 10)
    }

    /// What a share's resident size loses when, connected, it lets go of the pages only its
    /// start ran (`WHIPConfiguration.releasesStartupCodePages`): libcrypto and libssl 4.6 → 1.8
    /// MiB, NSS 2.75 → 1.3, the binary 6.3 → 5.5, libc and libstdc++ 2.5 → 1.1. Measured (release
    /// build, peak RSS of testsrc shares with audio into aiortc, 3 runs each, against the same
    /// shares before): 1280x720@20 35.2 → 28.3 MiB, 640x360 25.7 → 18.6 running (its peak, 22.8,
    /// is now the connecting phase); 6.4 MiB against the plan's running figures.
    public static let startupCodeReleasedBytes = (64 << 20) / 10

    /// What the share lets go of once it connects (`startupCodeReleasedBytes`; the planner takes
    /// it off the running share and counts it before); 0 when it keeps the pages.
    public static func releasedStartupBytes(_ configuration: WHIPConfiguration) -> Int {
        configuration.releasesStartupCodePages ? startupCodeReleasedBytes : 0
    }

    /// What closing loads once the encoder has gone: libcurl again for the DELETE, with its
    /// chain (GnuTLS, Kerberos, LDAP, libssh2, p11-kit, nettle …: 3.9 MiB of pages) and its heap.
    /// Measured as the share's peak, which comes there at 640x360, less its running size without
    /// the encoder: 4.46 and 4.36 MiB (without and with audio).
    public static func closingHeapBytes(_ configuration: WHIPConfiguration) -> Int { (44 << 20) / 10 }

    /// What a reconnect loads beside the running share: libcurl and its chain for the DELETE
    /// and the POST (GnuTLS not initialised: the CLI sets GNUTLS_NO_IMPLICIT_INIT), a second
    /// DTLS association and ICE agent while the old ones are let go. Measured (release build,
    /// peak RSS of a share the server closes 2.5 s in, less the same share not closed): 3.3 MiB
    /// at 640x360, 4.1 at 1280x720 before GnuTLS's start-up was left out (0.6–0.75 MiB);
    /// `bench/harness/planner_case.py` checks it. 0 when the share does not reconnect.
    /// When the start-up's pages were let go (`releasesStartupCodePages`) a reconnect touches
    /// part of them again (the POST, the handshake) before it lets them go once more: 6.0 MiB,
    /// measured as the peaks of 11 WHIP shares closed 2.5 s in (`planner_case.py`: 4.8–6.7 above
    /// their running figure, within 1 MiB of 6.0 but for the 1080p VP8 share's 4.8). Where the
    /// VP8 encoder is let go meanwhile (`ShareConfiguration.releasesEncoderWhileReconnecting`)
    /// this stands on the share without it, the old session's end and its DELETE in the same
    /// phase: the 640x360 shares, whose peak it stays, measured 22.2 / 22.8 MiB against 22.7 /
    /// 23.1 planned (without / with audio); above that the running share is the peak (1080p:
    /// 43.4 against 43.8, 49.5 against 49.8 while the encoder stayed).
    public static func reconnectHeapBytes(_ configuration: WHIPConfiguration) -> Int {
        configuration.reconnect.limit == .off ? 0 : configuration.releasesStartupCodePages ? 6 << 20 : (38 << 20) / 10
    }

    /// Offer → publish, before the first frame; a temporary failure is tried again after the
    /// policy's back-off (`onRetry` is told of each wait), a permanent one, or the last allowed,
    /// is thrown. A failure after the server made the session DELETEs it. The configuration's
    /// `stop` ends the waits, and so does `deadline` (the share's duration): the last failure is
    /// thrown.
    public init(configuration: WHIPConfiguration, budget: MemoryBudget, deadline: MediaTime? = nil,
                onRetry: (ConnectionChange) -> Void = { _ in }) throws(ShareError) {
        self.configuration = configuration
        let stopped = { configuration.stop?.isRaised == true }
        socket = try Self.openSocket(configuration)
        publisher = Publisher(configuration: configuration, socket: socket, certificate: try Self.makeCertificate(),
                              identity: RTPSenderIdentity(using: &random),
                              client: WHIPClient(configuration: Self.httpConfiguration(configuration)), budget: budget)
        policy = ReconnectPolicy(configuration: configuration.reconnect)
        var lines: [String] = []
        var first: (WHIPPublishedSession, gathering: String?)?
        while first == nil {
            let started = MonotonicClock.now()
            do {
                first = try publisher.publish(codecs: configuration.videoCodecs, notices: &lines)
            } catch {
                let now = MonotonicClock.now()
                guard case .retry(let at, let attempt, _) = policy.failed(
                    error.retry, loss: .signalling, sessionHeld: false, at: now, attemptStartedAt: started,
                    random: &random),
                      !stopped(), at < (deadline ?? at + .seconds(1))
                else { throw error }
                onRetry(.reconnecting(attempt: attempt, reason: error.description,
                                      retryInMilliseconds: (at - now).microseconds / 1000))
                while MonotonicClock.now() < at && !stopped() {
                    MonotonicClock.sleep(until: min(at, MonotonicClock.now() + .milliseconds(20)))
                }
                if stopped() { throw error }
            }
        }
        let (session, gathering) = first!
        self.session = session
        notices = lines
        gatheringNotice = gathering
        videoCodec = session.videoCodec
        name = "whip \(configuration.url)"
        inbox = .allocate(byteCount: Transport<SystemRandomNumberGenerator>.maximumDatagramBytes
                          + SRTPProfile.requiredTailroom, alignment: 16)
    }

    deinit { inbox.deallocate() }

    public var descriptors: [Int32] {
        [socket.descriptor] + (addresses.map { [$0.descriptor] } ?? []) + (session?.relayStream.map { [$0.descriptor] } ?? [])
    }
    /// Up by one with each publication (its relay stream, if any, is a new descriptor).
    public private(set) var descriptorGeneration = 0

    public func descriptorReady(_ descriptor: Int32) {
        if descriptor == addresses?.descriptor { addressesReadable = true }
    }
    public var transportStats: TransportStats? { session?.transport.stats }
    public var acceptsVideo: Bool { session?.transport.state == .connected && nextAttempt == nil }
    public var state: TransportState { session?.transport.state ?? .connecting }

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

    /// The socket form of an ICE address (numbers to numbers, nothing resolved).
    public static func socketAddress(_ address: ICEAddress) -> SocketAddress {
        if let v4 = address.ipv4 { return SocketAddress(ipv4: v4, port: Int(address.port)) }
        let v6 = address.ipv6!
        return SocketAddress(ipv6High: v6.high, low: v6.low, port: Int(address.port))
    }

    /// Sends one datagram of the transport on the socket (every one goes to an address: WebRTC),
    /// or as a frame on the stream to the TURN server when it goes there over TCP or TLS.
    public func transmit(_ datagram: UnsafeRawBufferPointer, to destination: TransportDestination) {
        guard case .address(let to) = destination else { return }
        if let stream = (session ?? lostSession)?.relayStream, to == stream.server {
            if !stream.send(datagram) { session?.transport.transmitFailed() }
            return
        }
        if case .sent = socket.send(datagram, to: socketAddress(to)) { return }
        session?.transport.transmitFailed()
    }

    /// The session media goes to, its transport started (ICE checks) on first use.
    private func running(_ now: MediaTime) -> WHIPPublishedSession? {
        guard let session else { return nil }
        if !session.started {
            session.started = true
            session.transport.start(at: now, output: self)
            if let maximumKbps { session.transport.setMaximumBitrate(kbps: maximumKbps, at: now) }
        }
        return session
    }

    public func send(video frame: OutgoingVideoFrame) throws(ShareError) {
        let now = MonotonicClock.now()
        guard let session = running(now) else { return }
        do {
            try session.transport.sendVideo(frame.bytes, mediaTimestamp: frame.mediaTimestamp,
                                            orientation: frame.orientation, at: now, output: self)
        } catch {
            throw .pipeline("RTP video: \(error)")
        }
    }

    public func send(audio packet: OutgoingAudioPacket) throws(ShareError) {
        let now = MonotonicClock.now()
        guard let session = running(now) else { return }
        do {
            try session.transport.sendAudio(packet.bytes, mediaTimestamp: packet.mediaTimestamp, samples: packet.samples,
                                            at: now, output: self)
        } catch {
            throw .pipeline("RTP audio: \(error)")
        }
    }

    public func service(at now: MediaTime) throws(ShareError) -> TransportRequests {
        if addressesReadable {
            addressesReadable = false
            if addresses?.takeChanges() == true, let waiting = try addressesChanged(at: now) { return waiting }
        }
        if let next = nextAttempt {
            guard now >= next.at else {
                drainSocket()
                return TransportRequests(nextWakeup: next.at)
            }
            nextAttempt = nil
            if let waiting = try attempt(next.way, at: now) { return waiting }
        }
        guard let session = running(now) else {
            drainSocket()
            return TransportRequests()
        }
        let transport = session.transport
        if let stream = session.relayStream { serviceRelayStream(stream, transport, at: now) }
        for _ in 0..<64 {
            let buffer = UnsafeMutableRawBufferPointer(rebasing: inbox[0..<Transport<SystemRandomNumberGenerator>.maximumDatagramBytes])
            guard case .datagram(let count, let from) = socket.receive(into: buffer) else { break }
            guard let source = Self.iceAddress(from) else { continue }
            transport.handle(datagram: inbox, count: count, from: source, at: now, output: self)
        }
        let unreachable = socket.takeUnreachable().flatMap(Self.iceAddress)
        transport.tick(at: now, output: self)
        if case .failed(let why) = transport.state {
            let loss: ReconnectPolicy.Loss = session.connectedAt == nil ? .session : why.isPathLoss ? .path : .session
            return try lose(.connection(.transport(why)), loss: loss, at: now)
        }
        if let unreachable, session.connectedAt != nil, unreachable == transport.connection?.peer {
            return try lose(.connection(.transport(.peerUnreachable)), loss: .session, at: now)
        }
        if session.connectedAt == nil, transport.state == .connected { connected(session, at: now) }
        // A session the path kept from being DELETEd: once this connection has held a second
        // (its first frames are out), one DELETE a turn, each at most a second.
        if let since = session.connectedAt, now - since >= .seconds(1), !publisher.undeleted.isEmpty,
           let line = publisher.deleteOneUndeleted() {
            notices.append(line)
        }
        return transport.takeRequests(at: now)
    }

    /// Frames the TURN server sent over TCP/TLS, and what waits to go to it; a stream that broke
    /// ends the relay (and the path through it: the transport fails, the policy reconnects).
    private func serviceRelayStream(_ stream: TURNStream, _ transport: Transport<SystemRandomNumberGenerator>,
                                    at now: MediaTime) {
        var broken = stream.flush()
        if broken == nil {
            broken = stream.receiveFrames { frame, count in
                transport.handle(datagram: frame, count: count, from: stream.server, at: now, output: self)
            }
        }
        if let broken {
            transport.connection?.relayStreamClosed(broken, at: now) { b, to in transmit(b, to: .address(to)) }
        }
    }

    /// The host's addresses changed. Waiting for an attempt: it is made now (the network that
    /// failed may be back). Connected from an address the host no longer has: the path is lost
    /// (an ICE restart from the new one, as the policy says). Otherwise nothing changes.
    private func addressesChanged(at now: MediaTime) throws(ShareError) -> TransportRequests? {
        if nextAttempt != nil {
            nextAttempt!.at = now
            return nil
        }
        guard let session, session.connectedAt != nil, let pair = session.transport.connection?.ice.selectedPair else {
            return nil
        }
        let local = pair.local.type == .host ? pair.local.address : (pair.local.relatedAddress ?? pair.local.address)
        guard !Self.hostAddresses(of: socket).compactMap(Self.iceAddress).contains(local) else { return nil }
        return try lose(.connection(.transport(.localAddressGone(local.host))), loss: .path, at: now)
    }

    /// The attempt the policy asked for, now: an ICE restart on the session (a server that does
    /// not take it: a new session at once), or a new POST. Requests to return when the attempt
    /// failed and the next is waited for; nil when the session is there to be serviced.
    private func attempt(_ way: ReconnectPolicy.Way, at now: MediaTime) throws(ShareError) -> TransportRequests? {
        endLostSession(at: now)
        if way == .iceRestart, let session {
            do {
                let taken = try publisher.restartICE(session, at: now, output: self)
                policy.iceRestartAnswered(taken: taken)
                if taken {
                    notices.append("WHIP: ICE restarted on \(session.resourceURL)")
                    return nil
                }
            } catch {
                return try lose(error, loss: .iceRestart, at: MonotonicClock.now(), attemptStartedAt: now)
            }
        }
        endSession(at: now)
        do {
            session = try publisher.publish(codecs: [videoCodec], notices: &notices).0
            descriptorGeneration += 1
        } catch {
            return try lose(error, loss: .signalling, at: MonotonicClock.now(), attemptStartedAt: now)
        }
        notices.append("WHIP: published again (\(resourceURL))")
        return TransportRequests(nextWakeup: MonotonicClock.now())
    }

    /// Datagrams (and ICMP errors) that arrive with no session to take them (the old server's
    /// last ones).
    private func drainSocket() {
        for _ in 0..<64 {
            guard case .datagram = socket.receive(into: inbox) else { break }
        }
        _ = socket.takeUnreachable()
    }

    private func connected(_ session: WHIPPublishedSession, at now: MediaTime) {
        session.connectedAt = now
        // The handshake (and a reconnect's POST) was the last of the start: what only they ran
        // goes out of the resident set.
        if configuration.releasesStartupCodePages { StartupCodePages.release() }
        publisher.lastPathRelayed = session.transport.connection?.isRelayed ?? false
        policy.connected(at: now)
        if let lostAt {
            changes.append(.reconnected(afterMilliseconds: (now - lostAt).microseconds / 1000))
            self.lostAt = nil
        }
        guard !everConnected, let connection = session.transport.connection, let dtls = connection.dtlsConnectedAt else {
            return
        }
        everConnected = true
        let ice = connection.iceConnectedAt.map { "ICE \(($0 - session.createdAt).microseconds / 1000) ms, " } ?? ""
        notices.append("WHIP: connected (\(ice)DTLS-SRTP \(connection.srtpProfile?.name ?? "?") at "
                       + "\((dtls - session.createdAt).microseconds / 1000) ms) via "
                       + (connection.isRelayed ? "TURN/\(connection.relay!.configuration.transport.rawValue) relay " : "")
                       + "\(connection.ice.selectedPair.map { "\($0)" } ?? "?")")
    }

    /// The connection (or an attempt at one) failed: the policy says when to try again and
    /// how — an ICE restart keeps the session, a new POST ends and lets go of it first — or the
    /// share ends with `error` (the session ended).
    private func lose(_ error: ShareError, loss: ReconnectPolicy.Loss, at now: MediaTime,
                      attemptStartedAt: MediaTime? = nil) throws(ShareError) -> TransportRequests
    {
        // A stop raised while an attempt was in flight: the pipeline ends the share next.
        if error.failureClass == .stopped { return TransportRequests() }
        let decision = policy.failed(everConnected ? error.retryOncePublished : error.retry, loss: loss,
                                     sessionHeld: session != nil, at: now,
                                     attemptStartedAt: attemptStartedAt, random: &random)
        guard case .retry(let at, let attempt, let way) = decision else {
            endSession(at: now)
            endLostSession(at: now)
            throw error
        }
        if way == .newSession { endSession(at: now, untilNextAttempt: true) }
        if lostAt == nil { lostAt = now }
        nextAttempt = (at: at, way: way)
        changes.append(.reconnecting(attempt: attempt, reason: error.description,
                                     retryInMilliseconds: (at - now).microseconds / 1000))
        return TransportRequests(nextWakeup: at)
    }

    /// Says goodbye on the current session (BYE, close_notify), DELETEs its resource and lets
    /// it go: its send core's history returns to the budget before a new one is made. After a
    /// loss (`untilNextAttempt`) all of that waits for the next attempt (`lostSession`).
    private func endSession(at now: MediaTime, untilNextAttempt: Bool = false) {
        guard let session else { return }
        self.session = nil
        if session.relayStream != nil { descriptorGeneration += 1 }
        destination = nil
        if untilNextAttempt {
            lostSession = session
            return
        }
        if session.started { session.transport.close(at: now, output: self) }
        session.relayStream?.flush()
        if let line = publisher.delete(session.resourceURL) { notices.append(line) }
    }

    /// Ends the session the last loss left (`lostSession`), if any: goodbye, then let go of,
    /// then DELETEd, so its teardown and the HTTP client are not resident together.
    private func endLostSession(at now: MediaTime) {
        let resource: String
        do {
            guard let lost = lostSession else { return }
            if lost.started { lost.transport.close(at: now, output: self) }
            lost.relayStream?.flush()
            resource = lost.resourceURL
        }
        lostSession = nil
        if let line = publisher.delete(resource) { notices.append(line) }
    }

    public func maximumBitrateChanged(kbps: Int, at now: MediaTime) {
        maximumKbps = kbps
        session?.transport.setMaximumBitrate(kbps: kbps, at: now)
    }

    /// Takes the notices gathered since the last call.
    public func takeNotices() -> [String] {
        defer { notices = [] }
        return notices
    }

    public func takeConnectionChanges() -> [ConnectionChange] {
        defer { changes = [] }
        return changes
    }

    public func finish(_ reason: FinishReason) throws(ShareError) {
        let current = session?.resourceURL ?? lostSession?.resourceURL
        let now = MonotonicClock.now()
        endSession(at: now)
        endLostSession(at: now)
        // The server took the last DELETE (or there was none to make): the sessions outages
        // left behind, until one is not taken.
        guard current.map({ !publisher.undeleted.contains($0) }) ?? true else { return }
        while !publisher.undeleted.isEmpty {
            if let line = publisher.deleteOneUndeleted() {
                notices.append(line)
                break
            }
        }
    }

}

extension TransportFailure {
    /// The path went away (the server may still hold the session): ICE restart territory.
    var isPathLoss: Bool {
        switch self {
        case .consentLost, .ice: true
        default: false
        }
    }
}

extension ShareConfiguration {
    /// Counts a WHIP output in the plan: its share of the frame budget, the crypto and HTTP
    /// libraries it loads, what closing and reconnecting load again, and that video waits for
    /// the connection.
    public mutating func countOutput(whip: WHIPConfiguration) {
        outputBudgetBytes = WHIPSink.budgetBytes(whip)
        outputHeapBytes = WHIPSink.heapBytes(whip)
        outputClosingHeapBytes = WHIPSink.closingHeapBytes(whip)
        outputReconnectHeapBytes = WHIPSink.reconnectHeapBytes(whip)
        outputReleasedStartupBytes = WHIPSink.releasedStartupBytes(whip)
        videoWaitsForConnection = true
    }
}
