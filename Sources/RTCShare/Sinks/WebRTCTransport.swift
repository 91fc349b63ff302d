import RTCShareCore
import RTCShareDTLS
import RTCShareICE
import RTCShareMedia
import RTCShareRTP

// The send side of a WebRTC session, sans-IO: one ICE agent, one DTLS-SRTP association and the
// RTP send core behind one UDP socket. Datagrams are told apart by their first byte (RFC 7983):
// 0...3 STUN (to ICE), 20...63 DTLS, 128...191 RTP/RTCP (SRTCP feedback to the send core).
//
// States: connecting (ICE checks, then the DTLS handshake) → connected (SRTP keys installed in
// the send core: media flows) → failed (ICE found no path, DTLS refused the peer, consent lost).
// Media handed in while connecting is dropped and counted by the send core.
//
// Invariants:
// - No socket, clock or random source here: times come in as `MediaTime`, datagrams go out
//   through `transmit` with their destination. (OpenSSL keeps the DTLS retransmission timer on
//   its own clock; `nextDeadline` turns its relative timeout into our time.)
// - DTLS and SRTP go to the peer of the selected ICE pair; before ICE has selected one, to the
//   address the peer's DTLS came from; with neither, DTLS output waits in OpenSSL's buffer.
// - Every incoming datagram is untrusted and handed only to the part its first byte names;
//   anything else is counted and dropped.

/// Where a WebRTC session stands.
public enum WebRTCState: Sendable, Equatable {
    case connecting
    case connected
    case failed(ConnectionFailure)
}

public final class WebRTCTransport<Random: RandomNumberGenerator> {
    public private(set) var ice: ICEAgent<Random>
    private var dtls: DTLSTransport
    public let sender: RTPSender
    public private(set) var state: WebRTCState = .connecting
    /// Datagrams whose first byte named nothing we speak.
    public private(set) var unknownDatagrams = 0
    /// When ICE and DTLS completed, for the start-up figures.
    public private(set) var iceConnectedAt: MediaTime?
    public private(set) var dtlsConnectedAt: MediaTime?
    /// The negotiated SRTP profile, once connected.
    public private(set) var srtpProfile: SRTPProfile?

    private var peer: ICEAddress?
    private var keyframeWanted = false
    private var dtlsDeadline: MediaTime?
    private let scratch: UnsafeMutableRawBufferPointer

    /// The largest datagram `transmit` is handed.
    public static var maximumDatagramBytes: Int { max(DTLSTransport.maximumDatagramBytes, 1500) }

    /// Takes over `ice` (remote credentials and candidates set), a DTLS association made from
    /// the answer, and the send core (created `.awaitingKeys`).
    public init(ice: consuming ICEAgent<Random>, dtls: consuming DTLSTransport, sender: RTPSender) {
        self.ice = ice
        self.dtls = dtls
        self.sender = sender
        scratch = .allocate(byteCount: Self.maximumDatagramBytes + SRTPProfile.requiredTailroom, alignment: 16)
    }

    deinit { scratch.deallocate() }

    /// Starts the ICE checks.
    public func start(at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        ice.start(at: now)
        drain(at: now, transmit: transmit)
    }

    /// One datagram from `source`, unprotected in place where it is SRTCP.
    public func handle(datagram: UnsafeMutableRawBufferPointer, count: Int, from source: ICEAddress, at now: MediaTime,
                       transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        guard count > 0, count <= datagram.count else { return }
        switch datagram[0] {
        case 0...3:
            if !ice.handle(UnsafeRawBufferPointer(rebasing: datagram[0..<count]), from: source, at: now) {
                unknownDatagrams += 1
            }
        case 20...63:
            if peer == nil { peer = source }
            dtls.handle(datagram: UnsafeRawBufferPointer(rebasing: datagram[0..<count]))
        case 128...191:
            sender.handle(datagram: datagram, count: count, at: now) { bytes, _ in send(bytes, transmit) }
        default:
            unknownDatagrams += 1
        }
        drain(at: now, transmit: transmit)
    }

    /// Runs the timers that are due (ICE checks and consent, DTLS retransmission, RTCP).
    public func tick(at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        ice.tick(at: now)
        if let due = dtlsDeadline, due <= now {
            dtlsDeadline = nil
            dtls.handleTimeout()
        }
        if state == .connected {
            sender.poll(at: now) { bytes, _ in send(bytes, transmit) }
        }
        drain(at: now, transmit: transmit)
    }

    /// Media from the pipeline (dropped by the send core until connected).
    public func sendVideo(_ frame: UnsafeRawBufferPointer, mediaTimestamp: UInt32, orientation: Orientation,
                          at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) throws(RTPError) {
        try sender.sendVideo(frame, mediaTimestamp: mediaTimestamp, orientation: orientation, at: now) { bytes, _ in
            send(bytes, transmit)
        }
    }

    public func sendAudio(_ packet: UnsafeRawBufferPointer, mediaTimestamp: UInt32, samples: Int, at now: MediaTime,
                          transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) throws(RTPError) {
        try sender.sendAudio(packet, mediaTimestamp: mediaTimestamp, samples: samples, at: now) { bytes, _ in
            send(bytes, transmit)
        }
    }

    /// The end: RTCP BYE, then DTLS close_notify.
    public func close(at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        if state == .connected { sender.finish(at: now) { bytes, _ in send(bytes, transmit) } }
        dtls.close()
        drain(at: now, transmit: transmit)
    }

    /// What feedback (and the connection) asks of the pipeline since the last call: a keyframe
    /// once media starts flowing, and what RTCP asked for.
    public func takeRequests() -> TransportRequests {
        var requests = sender.takeRequests()
        if keyframeWanted {
            requests.keyframe = true
            requests.mediaStarted = true
            requests.withoutTransportFeedback = sender.configuration.transportSequenceID == nil
            requests.pathRoundTripMicroseconds = ice.leastRoundTrip?.microseconds
            keyframeWanted = false
        }
        return requests
    }

    /// When `tick` has something to do next.
    public var nextDeadline: MediaTime? {
        var earliest = ice.nextDeadline
        for candidate in [dtlsDeadline, state == .connected ? sender.nextDeadline : nil] {
            if let c = candidate, earliest == nil || c < earliest! { earliest = c }
        }
        return earliest
    }

    private func send(_ bytes: UnsafeRawBufferPointer, _ transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        guard let destination = ice.selectedPair?.remote.address ?? peer else { return }
        transmit(bytes, destination)
    }

    /// Hands out everything ICE and DTLS have to send and acts on their events.
    private func drain(at now: MediaTime, transmit: (UnsafeRawBufferPointer, ICEAddress) -> Void) {
        while let out = ice.pollTransmit(into: scratch) {
            transmit(UnsafeRawBufferPointer(rebasing: scratch[0..<out.count]), out.destination)
        }
        while let event = ice.pollEvent() {
            switch event {
            case .connected(let pair):
                peer = pair.remote.address
                if iceConnectedAt == nil { iceConnectedAt = now }
            case .failed(let failure):
                fail(.ice(failure))
            case .consentLost:
                fail(.consentLost)
            case .candidateGathered, .gatheringComplete, .roleChanged, .serverReflexiveAddress, .stunServerFailed:
                break
            }
        }
        if ice.selectedPair != nil || peer != nil {
            while let n = dtls.pollTransmit(into: scratch) {
                send(UnsafeRawBufferPointer(rebasing: scratch[0..<n]), transmit)
            }
        }
        while let event = dtls.pollEvent() {
            switch event {
            case .connected(let keys):
                do {
                    try sender.install(local: keys.local, remote: keys.remote)
                    srtpProfile = keys.profile
                    dtlsConnectedAt = now
                    if case .connecting = state { state = .connected }
                    keyframeWanted = true
                } catch {
                    fail(.srtpKeys("\(error)"))
                }
            case .failed(let error):
                fail(.dtls(error))
            case .closed:
                fail(.dtlsClosed)
            }
        }
        dtlsDeadline = dtls.nextTimeout.map { timeout in
            let c = timeout.components
            return now + .microseconds(c.seconds * 1_000_000 + c.attoseconds / 1_000_000_000_000)
        }
    }

    private func fail(_ why: ConnectionFailure) {
        if case .failed = state { return }
        state = .failed(why)
    }
}
