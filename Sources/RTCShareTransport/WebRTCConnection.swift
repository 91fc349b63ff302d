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
    /// Between `restartICE` and the new agent's first selected pair.
    private var restarting = false
    private let scratch: UnsafeMutableRawBufferPointer

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
    public init(ice: consuming ICEAgent<Random>, dtls: consuming DTLSTransport) {
        self.ice = ice
        self.dtls = dtls
        scratch = .allocate(byteCount: Self.maximumDatagramBytes + SRTPProfile.requiredTailroom, alignment: 16)
        events.reserveCapacity(4)
    }

    deinit { scratch.deallocate() }

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
        self.ice.start(at: now)
        drain(at: now, transmit: transmit)
    }

    public func start(at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        ice.start(at: now)
        drain(at: now, transmit: transmit)
    }

    /// A STUN message; false when ICE did not take it.
    public func handleSTUN(_ datagram: UnsafeRawBufferPointer, from source: ICEAddress, at now: MediaTime,
                           transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) -> Bool {
        let taken = ice.handle(datagram, from: source, at: now)
        drain(at: now, transmit: transmit)
        return taken
    }

    /// A DTLS record.
    public func handleDTLS(_ datagram: UnsafeRawBufferPointer, from source: ICEAddress, at now: MediaTime,
                           transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        if peerFromDTLS == nil { peerFromDTLS = source }
        dtls.handle(datagram: datagram)
        drain(at: now, transmit: transmit)
    }

    /// ICE checks and consent, DTLS retransmission.
    public func tick(at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        ice.tick(at: now)
        if let due = dtlsDeadline, due <= now {
            dtlsDeadline = nil
            dtls.handleTimeout()
        }
        drain(at: now, transmit: transmit)
    }

    /// DTLS close_notify.
    public func close(at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        dtls.close()
        drain(at: now, transmit: transmit)
    }

    public func pollEvent() -> Event? { events.isEmpty ? nil : events.removeFirst() }

    public var nextDeadline: MediaTime? {
        switch (ice.nextDeadline, dtlsDeadline) {
        case (let a?, let b?): min(a, b)
        case (let a, let b): a ?? b
        }
    }

    /// Hands out everything ICE and DTLS have to send and collects their events.
    private func drain(at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        while let out = ice.pollTransmit(into: scratch) {
            transmit(UnsafeRawBufferPointer(rebasing: scratch[0..<out.count]), out.destination)
        }
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
                transmit(UnsafeRawBufferPointer(rebasing: scratch[0..<n]), destination)
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
