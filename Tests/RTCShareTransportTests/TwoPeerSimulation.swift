import RTCShareCore
import RTCShareDTLS
import RTCShareICE
import RTCShareImpairment
import RTCShareRTP
import RTCShareTransport
import TestSupport

/// Two WebRTC `Transport`s in one process and fake time, the way a share and a server meet:
/// the offerer sends (ICE controlling, an RTP send core, DTLS server as when a WHIP answer says
/// `setup:active`), the answerer receives (ICE controlled, an RTP receive core, DTLS client).
/// Every datagram crosses a seeded `ImpairedPath`, one each way, so a run replays exactly.
///
/// One thing is not in fake time: OpenSSL times DTLS retransmissions on its own clock, so a
/// lost handshake flight would wait real seconds. The link is therefore clean until both ends
/// are connected and takes its profile only then (`mediaProfile`): ICE, DTLS and the keys are
/// exercised end to end, loss and the cap act on media and RTCP.
final class TwoPeerSimulation {
    typealias Peer = Transport<SeededRandom>

    static let senderAddress = try! ICEAddress(parsing: "10.0.0.1:5000")
    static let answererAddress = try! ICEAddress(parsing: "10.0.0.2:6000")

    let sender: Peer
    let answerer: Peer
    private(set) var now = MediaTime(microseconds: 1_000_000)
    let mediaProfile: ImpairmentProfile
    private var toAnswerer: ImpairedPath<[UInt8], SeededRandom>
    private var toSender: ImpairedPath<[UInt8], SeededRandom>
    private var mediaLinks: Bool = false
    private let seed: UInt64
    private let senderOut = Collector(from: TwoPeerSimulation.senderAddress)
    private let answererOut = Collector(from: TwoPeerSimulation.answererAddress)
    private let inbox = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048 + SRTPProfile.requiredTailroom,
                                                               alignment: 16)
    /// What the sender's transport asked of the pipeline, with the time.
    private(set) var senderRequests: [(MediaTime, TransportRequests)] = []
    private(set) var answererRequests: [(MediaTime, TransportRequests)] = []
    /// Frames the answerer reassembled, in order, and when each came out.
    var framesReceived: [ReceivedVideoFrame] { answererOut.frames }
    private(set) var frameArrivals: [MediaTime] = []
    /// Datagrams each link lost or dropped at its queue.
    var lostToAnswerer: Int { Int(toAnswerer.statistics.lost + toAnswerer.statistics.tailDropped) }
    private var budgets: [MemoryBudget] = []

    /// The datagrams a transport puts out, with the address each is for.
    final class Collector: TransportOutput {
        let from: ICEAddress
        var datagrams: [([UInt8], ICEAddress)] = []
        var frames: [ReceivedVideoFrame] = []
        init(from: ICEAddress) { self.from = from }
        func transmit(_ datagram: UnsafeRawBufferPointer, to destination: TransportDestination) {
            guard case .address(let to) = destination else { return }
            datagrams.append((Array(datagram), to))
        }
        func videoFrame(_ frame: ReceivedVideoFrame, bytes: UnsafeRawBufferPointer) { frames.append(frame) }
    }

    init(seed: UInt64, mediaProfile: ImpairmentProfile = ImpairmentProfile(), oneWayDelay: MediaDuration = .milliseconds(20),
         transportWideFeedback: Bool = true, maximumKbps: Int = 2500) throws {
        self.seed = seed
        var clean = ImpairmentProfile()
        clean.delay = oneWayDelay
        var media = mediaProfile
        media.delay = oneWayDelay
        self.mediaProfile = media
        toAnswerer = ImpairedPath(profile: clean, random: SeededRandom(seed: seed))
        toSender = ImpairedPath(profile: clean, random: SeededRandom(seed: seed &+ 1))

        // Identities, exchanged as an offer and an answer would carry them.
        let senderCertificate = try DTLSCertificate()
        let answererCertificate = try DTLSCertificate()
        var senderICE = ICEAgent(configuration: ICEConfiguration(), random: SeededRandom(seed: seed &+ 2))
        var controlled = ICEConfiguration()
        controlled.role = .controlled
        var answererICE = ICEAgent(configuration: controlled, random: SeededRandom(seed: seed &+ 3))
        let senderHost = senderICE.addHostCandidate(Self.senderAddress)
        let answererHost = answererICE.addHostCandidate(Self.answererAddress)
        senderICE.setRemoteCredentials(answererICE.localCredentials)
        answererICE.setRemoteCredentials(senderICE.localCredentials)
        _ = try senderICE.addRemoteCandidate(sdpAttribute: answererHost.sdpAttribute)
        _ = try answererICE.addRemoteCandidate(sdpAttribute: senderHost.sdpAttribute)
        let senderDTLS = try DTLSTransport(certificate: senderCertificate, configuration: DTLSConfiguration(
            role: .server, remoteFingerprint: answererCertificate.fingerprint(.sha256)))
        let answererDTLS = try DTLSTransport(certificate: answererCertificate, configuration: DTLSConfiguration(
            role: .client, remoteFingerprint: senderCertificate.fingerprint(.sha256)))

        var wire = RTPSenderConfiguration()
        wire.protection = .awaitingKeys
        wire.rtxPayloadType = 97
        wire.transportSequenceID = transportWideFeedback ? 3 : nil
        let senderBudget = try MemoryBudget(capBytes: RTPSender.budgetBytes(historyBytes: wire.historyBytes) + (1 << 20),
                                            prefault: false)
        let core = try RTPSender(configuration: wire, budget: senderBudget, random: SeededRandom(seed: seed &+ 4))
        var receive = RTPReceiverConfiguration()
        receive.awaitsKeys = true
        receive.rtxPayloadType = 97
        receive.audioPayloadType = nil
        receive.transportSequenceID = wire.transportSequenceID
        let receiverBudget = try MemoryBudget(capBytes: receive.budgetBytes + (1 << 20), prefault: false)
        let receiver = try RTPReceiver(configuration: receive, budget: receiverBudget, random: SeededRandom(seed: seed &+ 5))
        budgets = [senderBudget, receiverBudget]
        sender = Transport(connection: WebRTCConnection(ice: senderICE, dtls: senderDTLS), sender: core)
        answerer = Transport(connection: WebRTCConnection(ice: answererICE, dtls: answererDTLS), receiver: receiver)
        // The share sets its bitrate first; the transport's target is made under it.
        sender.setMaximumBitrate(kbps: maximumKbps, at: now)
        sender.start(at: now, output: senderOut)
        answerer.start(at: now, output: answererOut)
        ship()
    }

    deinit { inbox.deallocate() }

    var bothConnected: Bool { sender.state == .connected && answerer.state == .connected }

    /// Runs until `end`, handing the sender a frame of `frameBytes(n)` bytes every
    /// `frameInterval` once it takes video; `pipeline` sees each of the sender's requests (a
    /// keyframe, the target its rate control made).
    func run(until end: MediaTime, frameInterval: MediaDuration = .milliseconds(50),
             frameBytes: (Int) -> Int = { $0 == 0 ? 20_000 : 2_000 },
             pipeline: (TransportRequests, Peer) -> Void = { _, _ in }) {
        var nextFrame: MediaTime?
        var frameNumber = 0
        var keyframeWanted = false
        while now < end {
            let framesBefore = answererOut.frames.count
            deliver()
            sender.tick(at: now, output: senderOut)
            answerer.tick(at: now, output: answererOut)
            for _ in framesBefore..<answererOut.frames.count { frameArrivals.append(now) }
            let wanted = sender.takeRequests(at: now)
            if wanted.keyframe { keyframeWanted = true }
            if wanted != TransportRequests(nextWakeup: wanted.nextWakeup) { senderRequests.append((now, wanted)) }
            pipeline(wanted, sender)
            let heard = answerer.takeRequests(at: now)
            if heard.peerLeft { answererRequests.append((now, heard)) }
            if sender.state == .connected, sender.sender?.isConnected == true {
                if nextFrame == nil { nextFrame = now }
                if let due = nextFrame, due <= now {
                    sendFrame(frameNumber, bytes: frameBytes(frameNumber), keyframe: frameNumber == 0 || keyframeWanted)
                    keyframeWanted = false
                    frameNumber += 1
                    nextFrame = due + frameInterval
                }
            }
            ship()
            if !mediaLinks, bothConnected, toAnswerer.inFlight == 0, toSender.inFlight == 0 {
                mediaLinks = true
                toAnswerer = ImpairedPath(profile: mediaProfile, random: SeededRandom(seed: seed &+ 6))
                toSender = ImpairedPath(profile: mediaProfile, random: SeededRandom(seed: seed &+ 7))
            }
            now = nextStep(after: now, end: end, nextFrame: nextFrame)
        }
    }

    /// Changes what both directions do from now on (the media profile's delay stays): loss of
    /// 100 % is an outage. Only once both ends are connected (DTLS keeps real time).
    func changeLinks(_ change: (inout ImpairmentProfile) -> Void) {
        precondition(mediaLinks, "the link is clean until both ends are connected")
        var profile = toAnswerer.profile
        change(&profile)
        toAnswerer.profile = profile
        toSender.profile = profile
    }

    /// The sender ends the share: BYE and close_notify cross the link.
    func closeSender(thenRunFor duration: MediaDuration) {
        sender.close(at: now, output: senderOut)
        ship()
        run(until: now + duration)
    }

    /// A VP8-shaped frame: the first byte's P bit says key (0) or not (1), which is all the
    /// receive core reads of a VP8 frame; the rest is the frame number, repeated.
    private func sendFrame(_ n: Int, bytes: Int, keyframe: Bool) {
        var frame = [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: max(bytes, 4))
        frame[0] = keyframe ? 0x10 : 0x11
        frame.withUnsafeBytes { raw in
            try? sender.sendVideo(raw, mediaTimestamp: UInt32(truncatingIfNeeded: n * 4500), orientation: .up, at: now,
                                  output: senderOut)
        }
    }

    /// Everything the transports put out goes onto the link toward its address; anything else
    /// (no one there) is dropped.
    private func ship() {
        for (bytes, to) in senderOut.datagrams where to == Self.answererAddress {
            toAnswerer.submit(bytes, bytes: bytes.count, at: now)
        }
        for (bytes, to) in answererOut.datagrams where to == Self.senderAddress {
            toSender.submit(bytes, bytes: bytes.count, at: now)
        }
        senderOut.datagrams.removeAll(keepingCapacity: true)
        answererOut.datagrams.removeAll(keepingCapacity: true)
    }

    private func deliver() {
        var arrived: [(Peer, [UInt8], ICEAddress)] = []
        toAnswerer.release(until: now) { arrived.append((answerer, $0, Self.senderAddress)) }
        toSender.release(until: now) { arrived.append((sender, $0, Self.answererAddress)) }
        for (peer, bytes, from) in arrived {
            inbox.copyBytes(from: bytes)
            peer.handle(datagram: inbox, count: bytes.count, from: from, at: now,
                        output: peer === sender ? senderOut : answererOut)
        }
    }

    private func nextStep(after now: MediaTime, end: MediaTime, nextFrame: MediaTime?) -> MediaTime {
        var next = min(end, now + .milliseconds(5))
        for candidate in [sender.nextDeadline, answerer.nextDeadline, toAnswerer.nextRelease, toSender.nextRelease,
                          nextFrame] {
            if let c = candidate, c > now, c < next { next = c }
        }
        return next
    }
}
