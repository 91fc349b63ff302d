import RTCShareCore
import RTCShareDTLS
import RTCShareICE
import RTCShareRTP

// The connection half of a WebRTC transport, sans-IO: one ICE agent and one DTLS-SRTP
// association behind one UDP socket. STUN goes to ICE, DTLS to the association; what DTLS
// exports (SRTP keys) is handed to the transport, which keys its RTP send or receive core.
//
// Invariants:
// - No socket, clock or random source here: times come in as `MediaTime`, datagrams go out
//   through the caller's closure with their destination. (OpenSSL keeps the DTLS retransmission
//   timer on its own clock; `nextDeadline` turns its relative timeout into our time.)
// - DTLS goes to the peer of the selected ICE pair; before ICE has selected one, to the address
//   the peer's DTLS came from; with neither, DTLS output waits in OpenSSL's buffer.
// - Every incoming datagram is untrusted; the caller hands it here only by its first byte.
// - With a TURN relay (`relay`, allocated before the offer named its candidate), what ICE sends
//   from the relayed candidate, and DTLS and media once the path runs through it, are wrapped
//   for the TURN server (ChannelData, or a Send indication until a channel is bound) and go to
//   the server's address; what the server relays back is unwrapped in place and taken as if it
//   came from the peer to the relayed address (`receiveFromRelay`).

/// ICE and DTLS of one WebRTC transport (see the file's notes).
public final class WebRTCConnection<Random: RandomNumberGenerator> {
    public private(set) var ice: ICEAgent<Random>
    private var dtls: DTLSTransport
    /// When ICE and DTLS completed, for the start-up figures.
    public private(set) var iceConnectedAt: MediaTime?
    public private(set) var dtlsConnectedAt: MediaTime?
    /// The negotiated SRTP profile, once connected.
    public private(set) var srtpProfile: SRTPProfile?
    private var peerFromDTLS: ICEAddress?
    private var dtlsDeadline: MediaTime?
    /// The local base DTLS from the peer arrived on (the relayed address, or a host one).
    private var localFromDTLS: ICEAddress?
    /// Between `restartICE` and the new agent's first selected pair.
    private var restarting = false
    private let scratch: UnsafeMutableRawBufferPointer
    /// The TURN allocation whose relayed candidate the agent has (nil: none).
    public private(set) var relay: TURNClient<Random>?
    /// Where a relayed datagram is wrapped.
    private let relayScratch: UnsafeMutableRawBufferPointer

    /// What happened on the connection since the last `pollEvent`.
    public enum Event: Sendable, Equatable {
        case keys(DTLSSRTPKeys)
        /// After an ICE restart, the new agent selected a pair: media may flow again.
        case pathRestored
        case failed(TransportFailure)
    }
    private var events: [Event] = []

    /// The largest datagram the connection hands out.
    public static var maximumDatagramBytes: Int { max(DTLSTransport.maximumDatagramBytes, 1500) }

    /// Takes over `ice` (remote credentials and candidates set) and a DTLS association in the
    /// role the negotiation left, checked against the peer's fingerprint.
    public init(ice: consuming ICEAgent<Random>, dtls: consuming DTLSTransport, relay: consuming TURNClient<Random>? = nil) {
        self.ice = ice
        self.dtls = dtls
        self.relay = relay
        scratch = .allocate(byteCount: Self.maximumDatagramBytes + SRTPProfile.requiredTailroom, alignment: 16)
        relayScratch = .allocate(byteCount: Self.maximumDatagramBytes + TURNWire.maximumOverhead, alignment: 16)
        events.reserveCapacity(4)
    }

    deinit {
        scratch.deallocate()
        relayScratch.deallocate()
    }

    /// The TURN server's address: datagrams from it go to `receiveFromRelay`.
    public var relayServer: ICEAddress? { relay?.configuration.server }

    /// The relayed address the agent's relayed candidate has (while the allocation holds).
    public var relayedAddress: ICEAddress? { relay?.isAllocated == true ? relay?.relayedAddress : nil }

    /// Whether media goes through the TURN relay (the selected pair's local candidate is the
    /// relayed one).
    public var isRelayed: Bool { relayedAddress != nil && pathBase == relayedAddress }

    /// The local base the path to the peer leaves from.
    private var pathBase: ICEAddress? { ice.selectedPair?.localBase ?? (restarting ? nil : localFromDTLS) }

    /// A datagram the TURN server sent: its own answers are taken here (nil), a relayed datagram
    /// is left in place and its peer and range returned, to be handled as arriving from the
    /// peer at the relayed address.
    public func receiveFromRelay(_ datagram: UnsafeRawBufferPointer, at now: MediaTime,
                                 transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) -> (peer: ICEAddress, data: Range<Int>)? {
        guard relay != nil else { return nil }
        let received = relay!.receive(datagram, at: now)
        drain(at: now, transmit: transmit)
        guard case .relayed(let peer, let data) = received else { return nil }
        return (peer, data)
    }

    /// Sends a datagram of the session (DTLS, SRTP) to `destination` along the path: through
    /// the relay when the path leaves from the relayed address.
    public func send(_ bytes: UnsafeRawBufferPointer, to destination: ICEAddress, at now: MediaTime,
                     transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        // Every media packet comes here: without a relay, nothing to look up.
        guard relay != nil else { return transmit(bytes, destination) }
        route(bytes, to: destination, from: pathBase, at: now, transmit: transmit)
    }

    private func route(_ bytes: UnsafeRawBufferPointer, to destination: ICEAddress, from base: ICEAddress?, at now: MediaTime,
                       transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        guard let server = relayServer, let relayed = relay?.relayedAddress, base == relayed else {
            return transmit(bytes, destination)
        }
        guard let n = relay!.wrap(bytes, to: destination, into: relayScratch, at: now) else {
            // Held (a permission was asked for) or dropped: the request goes out now.
            return drainRelay(transmit: transmit)
        }
        transmit(UnsafeRawBufferPointer(rebasing: relayScratch[0..<n]), server)
    }

    /// The relay's own messages (requests, held datagrams now permitted) and its events.
    private func drainRelay(transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        guard relay != nil, let server = relayServer else { return }
        while let n = relay!.pollTransmit(into: relayScratch) {
            transmit(UnsafeRawBufferPointer(rebasing: relayScratch[0..<n]), server)
        }
        while let event = relay!.pollEvent() {
            if case .failed(let failure) = event { events.append(.failed(.relay(failure))) }
        }
    }

    /// The stream to the TURN server broke (TCP, TLS): the relay, and a path through it, are gone.
    public func relayStreamClosed(_ why: String, at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        relay?.streamClosed(why)
        drain(at: now, transmit: transmit)
    }

    /// When the peer last answered a consent request (or a check) on the selected pair.
    public var lastConsentAnswer: MediaTime? { ice.lastConsentAnswer }

    /// Where media goes: the peer of the selected pair, or where its DTLS came from (not during
    /// an ICE restart: nothing goes anywhere without a pair the new checks confirmed).
    public var peer: ICEAddress? { ice.selectedPair?.remote.address ?? (restarting ? nil : peerFromDTLS) }

    /// An ICE restart (RFC 8445 §9): `ice` — new local credentials, the peer's new ones and its
    /// candidates set — replaces the agent whose path was lost, and starts its checks. DTLS,
    /// its keys and the RTP session go on; `.pathRestored` says when the new pair is up.
    public func restartICE(_ ice: consuming ICEAgent<Random>, at now: MediaTime,
                           transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        self.ice = ice
        restarting = true
        peerFromDTLS = nil
        localFromDTLS = nil
        self.ice.start(at: now)
        relay?.permit(self.ice.remoteCandidates.map(\.address), at: now)
        drain(at: now, transmit: transmit)
    }

    public func start(at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        ice.start(at: now)
        // Permissions toward the answer's candidates now: the first relayed checks need them.
        relay?.permit(ice.remoteCandidates.map(\.address), at: now)
        drain(at: now, transmit: transmit)
    }

    /// A STUN message; false when ICE did not take it. `local`: the relayed address when it came
    /// through the relay.
    public func handleSTUN(_ datagram: UnsafeRawBufferPointer, from source: ICEAddress, local: ICEAddress? = nil,
                           at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) -> Bool {
        let taken = ice.handle(datagram, from: source, to: local, at: now)
        drain(at: now, transmit: transmit)
        return taken
    }

    /// A DTLS record (`local` as for STUN).
    public func handleDTLS(_ datagram: UnsafeRawBufferPointer, from source: ICEAddress, local: ICEAddress? = nil,
                           at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        if peerFromDTLS == nil {
            peerFromDTLS = source
            localFromDTLS = local
        }
        dtls.handle(datagram: datagram)
        drain(at: now, transmit: transmit)
    }

    /// ICE checks and consent, DTLS retransmission.
    public func tick(at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        ice.tick(at: now)
        relay?.tick(at: now)
        if let due = dtlsDeadline, due <= now {
            dtlsDeadline = nil
            dtls.handleTimeout()
        }
        drain(at: now, transmit: transmit)
    }

    /// DTLS close_notify, then the relay's deallocation.
    public func close(at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        dtls.close()
        drain(at: now, transmit: transmit)
        relay?.close(at: now)
        drainRelay(transmit: transmit)
    }

    public func pollEvent() -> Event? { events.isEmpty ? nil : events.removeFirst() }

    public var nextDeadline: MediaTime? {
        var t: MediaTime? = nil
        for c in [ice.nextDeadline, dtlsDeadline, relay?.nextDeadline] {
            if let c, t.map({ c < $0 }) ?? true { t = c }
        }
        return t
    }

    /// Hands out everything ICE and DTLS have to send and collects their events.
    private func drain(at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        while let out = ice.pollTransmit(into: scratch) {
            route(UnsafeRawBufferPointer(rebasing: scratch[0..<out.count]), to: out.destination, from: out.source, at: now,
                  transmit: transmit)
        }
        drainRelay(transmit: transmit)
        while let event = ice.pollEvent() {
            switch event {
            case .connected:
                if iceConnectedAt == nil { iceConnectedAt = now }
                if restarting {
                    restarting = false
                    events.append(.pathRestored)
                }
            case .failed(let failure):
                events.append(.failed(.ice(failure)))
            case .consentLost:
                events.append(.failed(.consentLost))
            case .candidateGathered, .gatheringComplete, .roleChanged, .serverReflexiveAddress, .stunServerFailed:
                break
            }
        }
        if let destination = peer {
            while let n = dtls.pollTransmit(into: scratch) {
                send(UnsafeRawBufferPointer(rebasing: scratch[0..<n]), to: destination, at: now, transmit: transmit)
            }
        }
        while let event = dtls.pollEvent() {
            switch event {
            case .connected(let keys):
                srtpProfile = keys.profile
                dtlsConnectedAt = now
                events.append(.keys(keys))
            case .failed(let error):
                events.append(.failed(.dtls(error)))
            case .closed:
                events.append(.failed(.dtlsClosed))
            }
        }
        dtlsDeadline = dtls.nextTimeout.map { timeout in
            let c = timeout.components
            return now + .microseconds(c.seconds * 1_000_000 + c.attoseconds / 1_000_000_000_000)
        }
    }
}
