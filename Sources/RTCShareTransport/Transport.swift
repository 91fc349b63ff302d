import RTCShareCore
import RTCShareDTLS
import RTCShareICE
import RTCShareRTP

// The transport core of a session, sans-IO, the same type for a plain `--peer` share and a
// WebRTC one: time, datagrams, encoded frames and audio go in; datagrams with their
// destination (through a `TransportOutput`), the pipeline's requests (`takeRequests`), the
// state and the next deadline come out.
//
// It composes the RTP send core (`RTPSender`: packetization, history and RTX, RTCP, SRTP, the
// delay-based estimate and the pacer), the rate control that makes one target of every
// estimate (`SendBitrateController`: delay-based, REMB, loss, under the maximum the share sets)
// and paces by it, a receive core for an answering end (`RTPReceiver`),
// and, for WebRTC, the connection (`WebRTCConnection`: ICE and DTLS). One socket carries a
// WebRTC transport's datagrams; they are told apart by their first byte (RFC 7983): 0...3 STUN,
// 20...63 DTLS, 128...191 RTP/RTCP.
//
// Configurations:
// - plain (`--peer`): no ICE, no DTLS; keys given at the start (SDES) or none (`--insecure`).
//   Connected from the start; datagrams go out by route.
// - WebRTC: connecting (ICE checks, then DTLS) → connected (the keys DTLS exported installed
//   in the cores: media flows) → failed. Media handed in while connecting is dropped and
//   counted by the send core.
//
// Invariants: no socket, clock or random source here; every incoming datagram is untrusted and
// goes only to the part its first byte names, anything else is counted and dropped.

/// A session's transport core (see the file's notes).
public final class Transport<Random: RandomNumberGenerator> {
    /// The send core (nil on a receiving end).
    public let sender: RTPSender?
    /// The receive core (nil on a sending end).
    public let receiver: RTPReceiver?
    /// ICE and DTLS (nil for a plain transport).
    public let connection: WebRTCConnection<Random>?
    public private(set) var state: TransportState
    /// Datagrams whose first byte named nothing this transport speaks.
    public private(set) var unknownDatagrams = 0
    private var mediaStartedPending = false
    /// The send side's rate control, from the first maximum the share sets.
    private var rate: SendBitrateController?
    /// The target the send core paces at (set when it changes).
    private var pacedKbps: Int?
    /// A receiving end heard the sender's BYE.
    private var peerLeftPending = false
    /// The consent answer the send core was last told of.
    private var consentAnswerSeen: MediaTime?

    /// The largest datagram `transmit` is handed.
    public static var maximumDatagramBytes: Int { WebRTCConnection<Random>.maximumDatagramBytes }

    /// A plain transport (`--peer`): the send core with its keys (or none), connected now.
    public init(sender: RTPSender) {
        self.sender = sender
        receiver = nil
        connection = nil
        state = .connected
    }

    /// A WebRTC transport: a send core made `.awaitingKeys` and/or a receive core made with
    /// `awaitsKeys`, keyed when DTLS completes.
    public init(connection: WebRTCConnection<Random>, sender: RTPSender? = nil, receiver: RTPReceiver? = nil) {
        self.sender = sender
        self.receiver = receiver
        self.connection = connection
        state = .connecting
    }

    /// Starts the ICE checks (nothing for a plain transport).
    public func start(at now: MediaTime, output: some TransportOutput) {
        connection?.start(at: now) { bytes, to in output.transmit(bytes, to: .address(to)) }
        afterConnection(at: now)
    }

    /// One datagram from `source` (nil: a plain transport's socket), unprotected in place where
    /// it is SRTP or SRTCP. One from the TURN server is its answer, or a datagram it relayed:
    /// unwrapped in place and taken as from the peer to the relayed address.
    public func handle(datagram: UnsafeMutableRawBufferPointer, count: Int, from source: ICEAddress?, at now: MediaTime,
                       output: some TransportOutput) {
        guard count > 0, count <= datagram.count else { return }
        // Without ICE and DTLS everything is for the RTP core, which counts what it cannot read.
        guard let connection else { return handleRTP(datagram, count: count, at: now, output: output) }
        if let source, source == connection.relayServer {
            let bytes = UnsafeRawBufferPointer(rebasing: datagram[0..<count])
            guard let (peer, data) = connection.receiveFromRelay(bytes, at: now, transmit: { b, to in
                output.transmit(b, to: .address(to))
            }) else { return afterConnection(at: now) }
            let inner = UnsafeMutableRawBufferPointer(rebasing: datagram[data.lowerBound..<datagram.count])
            return dispatch(inner, count: data.count, from: peer, local: connection.relay?.relayedAddress,
                            connection: connection, at: now, output: output)
        }
        dispatch(datagram, count: count, from: source, local: nil, connection: connection, at: now, output: output)
    }

    /// A WebRTC datagram, to the part its first byte names (RFC 7983).
    private func dispatch(_ datagram: UnsafeMutableRawBufferPointer, count: Int, from source: ICEAddress?,
                          local: ICEAddress?, connection: WebRTCConnection<Random>, at now: MediaTime,
                          output: some TransportOutput) {
        guard count > 0 else { unknownDatagrams += 1; return }
        let bytes = UnsafeRawBufferPointer(rebasing: datagram[0..<count])
        let transmit = { (b: UnsafeRawBufferPointer, to: ICEAddress) in output.transmit(b, to: .address(to)) }
        switch datagram[0] {
        case 0...3:
            guard let source, connection.handleSTUN(bytes, from: source, local: local, at: now, transmit: transmit)
            else { unknownDatagrams += 1; return }
            // A consent answer is feedback too: on WebRTC it may be the first to come back.
            if let answered = connection.lastConsentAnswer, answered != consentAnswerSeen {
                consentAnswerSeen = answered
                if state == .connected { sender?.peerAnswered(at: now) }
            }
        case 20...63:
            guard let source else { unknownDatagrams += 1; return }
            connection.handleDTLS(bytes, from: source, local: local, at: now, transmit: transmit)
        case 128...191:
            handleRTP(datagram, count: count, at: now, output: output)
        default:
            unknownDatagrams += 1
        }
        afterConnection(at: now)
    }

    /// RTCP feedback to the send core, or media and reports to the receive core.
    private func handleRTP(_ datagram: UnsafeMutableRawBufferPointer, count: Int, at now: MediaTime,
                           output: some TransportOutput) {
        if let sender {
            sender.handle(datagram: datagram, count: count, at: now) { b, route in send(b, route, now, output) }
        } else if let receiver, case .control(goodbye: true) = receiver.receive(datagram: datagram, count: count, at: now) {
            peerLeftPending = true
        }
    }

    /// Runs the timers that are due: ICE checks and consent, DTLS retransmission, RTCP reports
    /// and feedback, the pacer's next packet, the frames a receiving end has complete.
    public func tick(at now: MediaTime, output: some TransportOutput) {
        connection?.tick(at: now) { bytes, to in output.transmit(bytes, to: .address(to)) }
        afterConnection(at: now)
        guard state == .connected else { return }
        sender?.poll(at: now) { bytes, route in send(bytes, route, now, output) }
        if let receiver { receiver.poll(at: now, output: ReceiverOutput(transport: self, now: now, output: output)) }
    }

    public func sendVideo(_ frame: UnsafeRawBufferPointer, mediaTimestamp: UInt32, orientation: Orientation,
                          at now: MediaTime, output: some TransportOutput) throws(RTPError) {
        try sender?.sendVideo(frame, mediaTimestamp: mediaTimestamp, orientation: orientation, at: now) { b, route in
            send(b, route, now, output)
        }
    }

    public func sendAudio(_ packet: UnsafeRawBufferPointer, mediaTimestamp: UInt32, samples: Int, at now: MediaTime,
                          output: some TransportOutput) throws(RTPError) {
        try sender?.sendAudio(packet, mediaTimestamp: mediaTimestamp, samples: samples, at: now) { b, route in
            send(b, route, now, output)
        }
    }

    /// The share's bitrate (configured, or the host's): the ceiling every estimate lowers the
    /// target from. The first call starts the rate control at it; a later one starts the
    /// estimate again from the new maximum.
    public func setMaximumBitrate(kbps: Int, at now: MediaTime) {
        guard sender != nil else { return }
        if rate == nil { rate = SendBitrateController(maximumKbps: kbps) } else { rate!.setMaximum(kbps: kbps) }
        paceAtTarget(at: now)
    }

    /// The send core paces at the target (and runs its delay-based estimate under the maximum),
    /// told when the target moves.
    private func paceAtTarget(at now: MediaTime) {
        guard let rate, rate.targetKbps != pacedKbps else { return }
        pacedKbps = rate.targetKbps
        sender?.setTargetBitrate(kbps: rate.targetKbps, maximumKbps: rate.maximumKbps, at: now)
    }

    /// Restarts ICE on a WebRTC transport whose path was lost (`connection.restartICE`): the
    /// transport is `connecting` again, media held, until the new agent selects a pair; then
    /// connected with a keyframe (`mediaStarted`), DTLS and the RTP session unchanged.
    public func restartICE(_ ice: consuming ICEAgent<Random>, at now: MediaTime, output: some TransportOutput) {
        guard let connection, sender?.isConnected ?? (receiver != nil) else { return }
        state = .connecting
        connection.restartICE(ice, at: now) { bytes, to in output.transmit(bytes, to: .address(to)) }
        afterConnection(at: now)
    }

    /// The socket refused a datagram (a full send buffer, an ICMP error): counted.
    public func transmitFailed() { sender?.transmitFailed() }

    /// The end: RTCP BYE (after the video still paced), then DTLS close_notify.
    public func close(at now: MediaTime, output: some TransportOutput) {
        if state == .connected {
            sender?.finish(at: now) { b, route in send(b, route, now, output) }
            if let receiver { receiver.finish(at: now, output: ReceiverOutput(transport: self, now: now, output: output)) }
        }
        connection?.close(at: now) { bytes, to in output.transmit(bytes, to: .address(to)) }
    }

    /// What feedback and the connection ask of the pipeline since the last call: a keyframe
    /// once media starts flowing, what RTCP asked for, and the target the estimates in it make
    /// (paced at from now on); `nextWakeup` is the next deadline.
    public func takeRequests(at now: MediaTime) -> TransportRequests {
        var requests = sender?.takeRequests() ?? TransportRequests()
        if peerLeftPending {
            peerLeftPending = false
            requests.peerLeft = true
        }
        if mediaStartedPending {
            mediaStartedPending = false
            requests.keyframe = true
            requests.mediaStarted = true
            requests.withoutTransportFeedback = sender?.configuration.transportSequenceID == nil
            requests.pathRoundTripMicroseconds = connection?.ice.leastRoundTrip?.microseconds
        }
        rateControl(&requests, at: now)
        requests.nextWakeup = nextDeadline
        return requests
    }

    /// One target from every estimate the feedback brought, paced at; the figures in `requests`.
    private func rateControl(_ requests: inout TransportRequests, at now: MediaTime) {
        guard var rate else { return }
        if requests.mediaStarted {
            // The round trip with no media queued: what a queue is measured against.
            if let rtt = requests.pathRoundTripMicroseconds { rate.roundTrip(microseconds: rtt) }
            // No delay signal of our own: not the maximum into a path nobody tried.
            if requests.withoutTransportFeedback {
                requests.startedBelowMaximum = rate.startBelowMaximum(kbps: SendBitrateController.untriedStartKbps)
            }
        }
        if let ceiling = requests.bitrateCeilingKbps { rate.remb(kbps: ceiling) }
        if let estimate = requests.delayBasedKbps { rate.delayBased(kbps: estimate) }
        if let lost = requests.videoFractionLost {
            if let rtt = sender?.stats.roundTripMicroseconds { rate.roundTrip(microseconds: rtt) }
            rate.receiverReport(fractionLost: lost, now: now.microseconds)
        }
        self.rate = rate
        paceAtTarget(at: now)
        requests.targetKbps = rate.targetKbps
        requests.maximumKbps = rate.maximumKbps
        requests.pathHoldsTarget = rate.pathHoldsTarget
    }

    /// When `tick` has something to do next.
    public var nextDeadline: MediaTime? {
        var earliest = connection?.nextDeadline
        guard state == .connected else { return earliest }
        // No array of candidates: this runs every loop iteration.
        if let c = sender?.nextDeadline, earliest.map({ c < $0 }) ?? true { earliest = c }
        if let c = receiver?.nextDeadline, earliest.map({ c < $0 }) ?? true { earliest = c }
        return earliest
    }

    /// Figures of the send core, for progress lines.
    public var stats: TransportStats? { sender?.stats }

    private func send(_ bytes: UnsafeRawBufferPointer, _ route: RTPRoute, _ now: MediaTime, _ output: some TransportOutput) {
        guard let connection else { return output.transmit(bytes, to: .route(route)) }
        guard let peer = connection.peer else { return }
        connection.send(bytes, to: peer, at: now) { b, to in output.transmit(b, to: .address(to)) }
    }

    /// Acts on what the connection said: keys installed (connected), or a failure.
    private func afterConnection(at now: MediaTime) {
        guard let connection else { return }
        while let event = connection.pollEvent() {
            switch event {
            case .keys(let keys):
                do {
                    try sender?.install(local: keys.local, remote: keys.remote)
                    try receiver?.install(local: keys.local, remote: keys.remote)
                    if case .connecting = state { state = .connected }
                    mediaStartedPending = true
                } catch {
                    fail(.srtpKeys("\(error)"))
                }
            case .pathRestored:
                if case .connecting = state {
                    state = .connected
                    mediaStartedPending = true
                }
            case .failed(let why):
                fail(why)
            }
        }
    }

    private func fail(_ why: TransportFailure) {
        if case .failed = state { return }
        state = .failed(why)
    }

    /// The receive core's output, routed as the send core's is.
    private struct ReceiverOutput<Output: TransportOutput>: RTPReceiverOutput {
        let transport: Transport
        let now: MediaTime
        let output: Output
        func transmit(_ datagram: UnsafeRawBufferPointer, route: RTPRoute) { transport.send(datagram, route, now, output) }
        func videoFrame(_ frame: ReceivedVideoFrame, bytes: UnsafeRawBufferPointer) { output.videoFrame(frame, bytes: bytes) }
        func audioPacket(_ payload: UnsafeRawBufferPointer?) { output.audioPacket(payload) }
    }
}
