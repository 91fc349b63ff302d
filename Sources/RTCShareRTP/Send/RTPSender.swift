import RTCShareCore

// The send side of the transport core, sans-IO: video frames (VP8 or H.264, packetized by the
// stream's codec) and Opus packets go in with the
// time; protected datagrams come out through the caller's `transmit` closure, each with the
// route it belongs on; feedback datagrams go in the same way; what the pipeline must do
// (keyframe, bitrate) is collected in `TransportRequests`; `nextDeadline` says when to call
// `poll` again (RTCP reports, the pacer's next packet).
//
// Rate: once the edge sets a target (`setTargetBitrate`), video packets leave through the
// `Pacer` (2.5 × the target; audio and retransmissions go at once) and transport-wide feedback
// drives a `DelayBasedEstimator` whose estimate is handed up in `TransportRequests`. The send
// time of every packet is kept by transport-wide sequence number (`SentPacketLog`, a fixed ring)
// for that feedback to be matched against.
//
// Outages: feedback of any kind (authenticated RTCP; consent answers through `peerAnswered`)
// feeds a `FeedbackReturnWatch`. While a receiver heard from before is silent past its limit,
// video handed in is held (not packetized, counted): sent into a dead path it would only become
// holes the receiver waits on afterwards. One frame a second still goes (`silentProbeInterval`):
// a receiver that restarted reports only once media reaches it. The feedback that ends the
// silence asks the pipeline for a keyframe at once; NACKs for what was lost before the hold
// are answered as ever, within the budget.
//
// Invariants:
// - No socket, clock, thread or random source inside: times are the caller's monotonic
//   `MediaTime`, the wall clock is a fixed offset given at start (for RTCP's NTP timestamps),
//   randomness (SSRCs, sequence offsets, CNAME, report jitter) comes from the generator given.
// - Keys may arrive after start (DTLS): until `install(keys:)` a sender created with
//   `.awaitingKeys` is `connecting` and media handed to it is dropped and counted, never sent
//   in the clear. `.insecure` sends plain RTP (the user asked for it).
// - Memory: the packet history from the share's `MemoryBudget`; two packet buffers taken at
//   start; libsrtp2's two contexts; the pacer's ring (6 bytes for each packet the history's
//   index holds: 12 KiB for the default 512 KiB history), the sent-packet log (~48 KiB)
//   and the owed resends (`DeferredResends`, ~13 KiB).
//   Nothing grows while sending.
// - Every incoming datagram is untrusted: SRTCP authentication first, then the bounds-checked
//   RTCP parser; anything else is counted and dropped, never fatal.
// - One owner, one thread: not thread-safe (the pipeline thread drives it).

/// Where a datagram goes. The edge maps each route to a socket and an address: four for
/// `--peer` with separate RTCP ports, one for everything once ICE picks a pair.
public enum RTPRoute: Sendable, Equatable {
    case videoRTP, videoRTCP, audioRTP, audioRTCP
}

/// How the sender's packets are protected.
public enum RTPProtection: Sendable {
    /// Plain RTP and RTCP (`--insecure`).
    case insecure
    /// SRTP with these keys from the start (SDES: the same key both ways).
    case keys(local: SRTPMasterKey, remote: SRTPMasterKey)
    /// SRTP, keys to come (DTLS-SRTP): the sender is `connecting` until `install(keys:)`.
    case awaitingKeys
}

/// The wire choices of one send session: payload types, extension IDs, sizes.
public struct RTPSenderConfiguration: Sendable {
    public var mtu = 1200
    public var protection: RTPProtection = .awaitingKeys
    public var videoPayloadType: UInt8 = 96
    /// What the video payload type carries: it picks the packetizer (RFC 7741 or RFC 6184).
    public var videoCodec = VideoCodec.vp8
    public var rtxPayloadType: UInt8? = nil
    public var audioPayloadType: UInt8? = nil
    public var absSendTimeID: UInt8? = 2
    public var transportSequenceID: UInt8? = 3
    /// The CVO extension's ID, when the orientation travels as a tag instead of turned pixels.
    public var videoOrientationID: UInt8? = nil
    /// The MID extension's ID (BUNDLE, RFC 8843 §15.1) and the mid each stream's packets carry
    /// with it (RTX packets carry the video's, copied with the header); a stream whose mid is
    /// nil carries none, and so do all without an ID.
    public var midID: UInt8? = nil
    public var videoMID: RTPMid? = nil
    public var audioMID: RTPMid? = nil
    /// Bytes of sent video kept for NACK (from the budget).
    public var historyBytes = 512 << 10
    /// How long without RTCP from the receiver before the sender says it is silent.
    public var feedbackSilenceLimit = FeedbackWatch.defaultSilenceLimit
    /// Resends are allowed at most this share of the video rate sent over the last second
    /// (percent), never less than the floor, with bursts of up to `retransmitBurstSeconds` of
    /// that: a NACK storm cannot make the sender an amplifier.
    public var retransmitSharePercent = 50
    public var retransmitFloorBytesPerSecond = 16_000
    public var retransmitBurstMilliseconds = 500
    /// Least time between two resends of one packet when no round trip is known yet; with one,
    /// the round trip.
    public var retransmitSpacingMicroseconds: Int64 = 20_000
    /// Wall clock minus monotonic clock at start, in microseconds: RTCP's NTP timestamps.
    public var wallClockOffsetMicroseconds: Int64 = 0
    /// SSRCs and CNAME announced before the sender exists (a WebRTC offer names them); nil:
    /// drawn from the generator.
    public var identity: RTPSenderIdentity?

    public init() {}
}

/// The SSRCs and CNAME a sender uses, when they must be known before it is made.
public struct RTPSenderIdentity: Sendable, Equatable {
    public var videoSSRC: UInt32
    public var rtxSSRC: UInt32
    public var audioSSRC: UInt32
    public var cname: String

    /// Fresh random values (SSRC 0 avoided, all three distinct).
    public init(using rng: inout some RandomNumberGenerator) {
        var ssrcs: [UInt32] = []
        while ssrcs.count < 3 {
            let s = UInt32.random(in: 1...UInt32.max, using: &rng)
            if !ssrcs.contains(s) { ssrcs.append(s) }
        }
        (videoSSRC, rtxSSRC, audioSSRC) = (ssrcs[0], ssrcs[1], ssrcs[2])
        cname = String((0..<16).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement(using: &rng)! })
    }
}

public final class RTPSender {
    public let configuration: RTPSenderConfiguration
    /// RTCP CNAME of both streams (random, so receivers can pair audio and video).
    public let cname: String
    public private(set) var video: RTPStream
    public private(set) var audio: RTPStream?
    public private(set) var rtx: RTXPacketizer?
    public private(set) var stats = TransportStats()
    /// Media handed in before the keys arrived, dropped.
    public private(set) var droppedWhileConnecting = 0

    private var packetizer: RTPVideoPacketizer
    private var opusMarkers = OpusMarkerTracker()
    private var history: PacketHistory
    private var retransmissions: RetransmissionBudget
    /// Video bytes sent (first sends only), for the budget's share.
    private var videoRate = MediaRateMeter()
    private var recentResends = RecentRetransmissions()
    /// NACKed packets the budget could not pay for yet: resent as it refills.
    private var deferredResends = DeferredResends()
    /// When the budget can pay for the oldest owed resend (nil: nothing owed).
    private var deferredResendTime: MediaTime?
    private var protector: SRTPContext?
    private var unprotector: SRTPContext?
    private var connected: Bool
    private let extensionMap: RTPExtensionMap
    private var transportSequence: UInt16
    /// The newest video packet put on the wire (sequence number; resends not counted).
    private var newestVideoSent: UInt16?
    /// One outgoing packet at a time: MTU plus libsrtp2's tail room.
    private let scratch: UnsafeMutableRawBufferPointer
    private var nextVideoReport: MediaTime?
    private var nextAudioReport: MediaTime?
    private var requests = TransportRequests()
    /// How long the receiver has been quiet.
    public private(set) var feedbackWatch: FeedbackWatch
    /// Whether the path is down, and whether feedback ends an outage (`FeedbackReturnWatch`).
    public private(set) var feedbackReturn = FeedbackReturnWatch()
    /// The last frame let through while the path was silent (nil: none since it went silent).
    private var lastSilentProbe: MediaTime?
    private var random: any RandomNumberGenerator
    /// As long as the history's index: it never holds a packet the history cannot.
    private var pacer: Pacer
    private var sentLog = SentPacketLog()
    private var delayEstimator: DelayBasedEstimator?
    /// The newest feedback's reference time, unwrapped past its 24 bits (64 ms units).
    private var feedbackReference: Int64?

    /// Bytes of the history and its index, from the budget (the planner counts them).
    public static func budgetBytes(historyBytes: Int) -> Int {
        PacketHistory.bytes(capacityBytes: historyBytes)
    }

    /// Largest datagram `transmit` is ever handed.
    public var maximumDatagramBytes: Int { scratch.count }

    public init(configuration: RTPSenderConfiguration, budget: MemoryBudget,
                random: some RandomNumberGenerator) throws(RTPError) {
        self.configuration = configuration
        feedbackWatch = FeedbackWatch(silenceLimit: configuration.feedbackSilenceLimit)
        var rng: any RandomNumberGenerator = random
        let identity = configuration.identity ?? RTPSenderIdentity(using: &rng)
        cname = identity.cname
        video = RTPStream(ssrc: identity.videoSSRC, payloadType: configuration.videoPayloadType, clockRate: 90_000,
                          initialSequenceNumber: UInt16.random(in: 0...UInt16.max, using: &rng),
                          timestampOffset: UInt32.random(in: 0...UInt32.max, using: &rng))
        audio = configuration.audioPayloadType.map {
            RTPStream(ssrc: identity.audioSSRC, payloadType: $0, clockRate: OpusPayload.clockRate,
                      initialSequenceNumber: UInt16.random(in: 0...UInt16.max, using: &rng),
                      timestampOffset: UInt32.random(in: 0...UInt32.max, using: &rng))
        }
        rtx = configuration.rtxPayloadType.map {
            RTXPacketizer(ssrc: identity.rtxSSRC, payloadType: $0,
                          initialSequenceNumber: UInt16.random(in: 0...UInt16.max, using: &rng))
        }
        transportSequence = UInt16.random(in: 0...UInt16.max, using: &rng)
        packetizer = RTPVideoPacketizer(codec: configuration.videoCodec)
        self.random = rng
        extensionMap = try RTPExtensionMap(
            absSendTime: configuration.absSendTimeID,
            transportSequenceNumber: configuration.transportSequenceID,
            videoOrientation: configuration.videoOrientationID,
            mid: configuration.midID)
        do {
            history = try PacketHistory(budget: budget, capacityBytes: configuration.historyBytes)
        } catch {
            throw .outOfMemory("packet history of \(configuration.historyBytes >> 10) KiB: \(error)")
        }
        pacer = Pacer(capacity: history.maxPackets)
        retransmissions = RetransmissionBudget(bytesPerSecond: configuration.retransmitFloorBytesPerSecond,
                                               burstBytes: Self.burst(configuration.retransmitFloorBytesPerSecond,
                                                                      configuration))
        switch configuration.protection {
        case .insecure:
            connected = true
        case .keys(let local, let remote):
            protector = try SRTPContext(key: local, direction: .sender)
            unprotector = try SRTPContext(key: remote, direction: .receiver)
            connected = true
        case .awaitingKeys:
            connected = false
        }
        scratch = .allocate(byteCount: configuration.mtu + SRTPProfile.requiredTailroom + 64, alignment: 16)
    }

    deinit { scratch.deallocate() }

    /// A burst of `bytesPerSecond` (at least two full packets, so one resend always fits).
    private static func burst(_ bytesPerSecond: Int, _ c: RTPSenderConfiguration) -> Int {
        max(2 * (c.mtu + 64), bytesPerSecond * c.retransmitBurstMilliseconds / 1000)
    }

    /// The retransmission budget's rate now: its share of the video sent over the last second.
    public func retransmissionBytesPerSecond(at now: MediaTime) -> Int {
        let media = videoRate.bytesPerSecond(nowMicroseconds: now.microseconds)
        return max(configuration.retransmitFloorBytesPerSecond, media * configuration.retransmitSharePercent / 100)
    }

    /// Points the budget's refill at the rate allowed now.
    private func updateRetransmissionBudget(at now: MediaTime) {
        retransmissions.bytesPerSecond = retransmissionBytesPerSecond(at: now)
        retransmissions.burstBytes = Self.burst(retransmissions.bytesPerSecond, configuration)
    }

    /// Whether media is flowing (keys in place, or insecure).
    public var isConnected: Bool { connected }

    /// The SRTP keys negotiated after start (DTLS-SRTP): from here on media is sent.
    public func install(local: SRTPMasterKey, remote: SRTPMasterKey) throws(RTPError) {
        protector = try SRTPContext(key: local, direction: .sender)
        unprotector = try SRTPContext(key: remote, direction: .receiver)
        connected = true
    }

    private var trailerBytes: Int { protector?.profile.rtpTrailerBytes ?? 0 }

    private func nextTransportSequence() -> UInt16 {
        defer { transportSequence &+= 1 }
        return transportSequence
    }

    // MARK: Rate

    /// The rate the share runs at now (the edge's minimum of every estimate and the maximum):
    /// video is paced at 2.5 × `kbps` from here on (1.25 × while the delay-based estimate holds it
    /// below the maximum: `Pacer`), and the delay-based estimate runs, starting
    /// from `kbps` and kept under `maximumKbps`.
    public func setTargetBitrate(kbps: Int, maximumKbps: Int, at now: MediaTime) {
        // Paced closer to the target while transport-wide feedback (the delay-based estimate)
        // holds it below the maximum: the target is then the path's rate (`Pacer`). A target
        // from loss reports alone runs above the path, and there bursts lose fewer frames.
        let pathLimited = kbps < maximumKbps && stats.transportFeedbackReceived > 0
        pacer.setTarget(kbps: kbps, constrained: pathLimited, at: now.microseconds)
        if delayEstimator == nil {
            delayEstimator = DelayBasedEstimator(startKbps: kbps, maximumKbps: maximumKbps)
        } else {
            delayEstimator!.setMaximum(kbps: maximumKbps)
        }
    }

    /// The delay-based estimator, once a target was set.
    public var delayBasedEstimator: DelayBasedEstimator? { delayEstimator }
    /// The pacer's state (queue, rate).
    public var pacerState: Pacer { pacer }

    /// Sends the queued video packets the pacer lets go at `now`.
    private func drainPacer(at now: MediaTime, _ transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) {
        guard connected else { return }
        while let sequence = pacer.next(at: now.microseconds) { sendFromHistory(sequence, at: now, transmit) }
    }

    /// The RTP sequence number of the packet in `scratch` (header bytes 2...3).
    private var scratchSequenceNumber: UInt16 { UInt16(scratch[2]) << 8 | UInt16(scratch[3]) }

    /// Sends video packet `sequence` from the history: a transport-wide sequence number and the
    /// send time are written as it goes on the wire.
    private func sendFromHistory(_ sequence: UInt16, at now: MediaTime, _ transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) {
        let sent: Bool? = history.withPacket(sequence) { (original: UnsafeRawBufferPointer) -> Bool in
            scratch.copyMemory(from: original)
            do {
                try sendScratch(length: original.count, at: now, transmit)
                return true
            } catch {
                stats.sendDrops += 1
                return false
            }
        }
        if sent == nil { stats.pacedPacketsExpired += 1 }
    }

    /// Sends the video packet in `scratch` now: a fresh transport-wide sequence number and the
    /// send time written first, the send logged for feedback. `outsidePacer` (a resend): also
    /// charged to the pacer, so queued video waits for it. Returns the bytes handed on.
    @discardableResult
    private func sendScratch(length: Int, outsidePacer: Bool = false, at now: MediaTime,
                             _ transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) throws(RTPError) -> Int {
        let tw = nextTransportSequence()
        try RTPExtensionValues.rewriteSendElements(packet: scratch, length: length, map: extensionMap,
                                                   transportSequenceNumber: tw, absSendTime: absSendTime(now))
        let n = try protectAndTransmit(length: length, rtcp: false, route: .videoRTP, transmit)
        if outsidePacer {
            sentUnpaced(tw, bytes: n, at: now)
        } else {
            sentLog.sent(tw, at: now.microseconds, bytes: n)
            newestVideoSent = scratchSequenceNumber  // the header stays in the clear
        }
        return n
    }

    /// A packet sent outside the pacer's queue (audio, a retransmission): logged for feedback,
    /// and charged to the pacer so queued video waits for it.
    private func sentUnpaced(_ tw: UInt16, bytes: Int, at now: MediaTime) {
        sentLog.sent(tw, at: now.microseconds, bytes: bytes)
        pacer.charge(bytes: bytes, at: now.microseconds)
    }

    /// One transport-wide feedback: each reported arrival matched to its send time feeds the
    /// delay-based estimator, whose new estimate goes up in the requests.
    private func readTransportFeedback(_ header: RTCPTransportCCHeader, in bytes: UnsafeRawBufferPointer,
                                       at now: MediaTime) {
        stats.transportFeedbackReceived += 1
        guard delayEstimator != nil else { return }
        // The 24-bit reference time, unwrapped against the previous feedback's.
        let reference: Int64
        if let last = feedbackReference {
            let step = (Int64(header.referenceTime) - last) & 0xFF_FFFF
            reference = last + (step >= 0x80_0000 ? step - 0x100_0000 : step)
        } else {
            reference = Int64(header.referenceTime)
        }
        feedbackReference = reference
        let shift = (reference - Int64(header.referenceTime)) * RTCPTransportFeedback.referenceMicroseconds
        do {
            try RTCPTransportFeedback.forEachPacket(of: header, in: bytes) { sequence, arrival in
                guard let arrival, let sent = sentLog.acknowledge(sequence) else { return }
                delayEstimator!.packetReceived(sentAt: sent.sentAt, arrivedAt: arrival + shift, bytes: Int(sent.bytes))
            }
        } catch {
            stats.malformedReceived += 1
            return
        }
        let kbps = delayEstimator!.feedbackProcessed(now: now.microseconds, roundTrip: stats.roundTripMicroseconds)
        stats.delayBasedKbps = kbps
        requests.delayBasedKbps = kbps
    }

    private func absSendTime(_ now: MediaTime) -> UInt32 { AbsSendTime.value(microseconds: now.microseconds) }

    private func ntp(_ now: MediaTime) -> NTPTime {
        NTPTime(unixMicroseconds: now.microseconds &+ configuration.wallClockOffsetMicroseconds)
    }

    // MARK: Media in

    /// Packetizes one video frame (a VP8 frame, RFC 7741, or an H.264 access unit in Annex B
    /// form, RFC 6184), keeps each packet for NACK and transmits it. `mediaTimestamp` is the
    /// 90 kHz capture time without the stream's offset.
    public func sendVideo(_ frame: UnsafeRawBufferPointer, mediaTimestamp: UInt32, orientation: Orientation,
                          at now: MediaTime, transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) throws(RTPError) {
        guard connected else {
            droppedWhileConnecting += 1
            stats.framesDroppedConnecting += 1
            return
        }
        // The path is down: a frame sent now is lost, and each of its packets a hole the
        // receiver waits on after the return (aiortc asks only for the newest 128 and stalls
        // on older ones until 512 packets have passed). Held, nothing is lost but what went
        // out before the silence was noticed and a frame a second; the return's keyframe
        // starts the picture again.
        if newestVideoSent != nil, feedbackReturn.isSilent(at: now) {
            if let last = lastSilentProbe, now - last < Self.silentProbeInterval {
                stats.framesHeldWhileSilent += 1
                return
            }
            lastSilentProbe = now
        } else {
            lastSilentProbe = nil
        }
        let timestamp = video.timestampOffset &+ mediaTimestamp
        let plain = RTPExtensionValues(absSendTime: absSendTime(now), transportSequenceNumber: 0,
                                       mid: configuration.videoMID)
        var last = plain
        if configuration.videoOrientationID != nil {
            last.videoOrientation = RTPVideoOrientation(orientation: orientation)
        }
        // Room for the largest header of the frame, the SRTP tag, and RTX's 2-byte OSN on a resend.
        let overhead = video.headerSize(extensions: last, map: extensionMap) + trailerBytes + (rtx == nil ? 0 : 2)
        let maxPayload = configuration.mtu - overhead
        switch packetizer {
        case .vp8(var vp8):
            let plan = try vp8.beginFrame(byteCount: frame.count, maxPayloadSize: maxPayload)
            packetizer = .vp8(vp8)
            var cursor = VP8PacketCursor(plan)
            try sendPackets(of: &cursor, frame: frame, timestamp: timestamp, plain: plain, last: last, at: now, transmit)
        case .h264(let h264):
            var plan = try h264.beginFrame(byteCount: frame.count, maxPayloadSize: maxPayload)
            try sendPackets(of: &plan, frame: frame, timestamp: timestamp, plain: plain, last: last, at: now, transmit)
        }
        if nextVideoReport == nil { nextVideoReport = now + .milliseconds(100) }
        feedbackWatch.mediaStarted(at: now)
    }

    /// Writes, keeps and transmits the packets of one planned frame; the last carries the
    /// marker bit and the `last` extension values (CVO rides there).
    private func sendPackets<Plan: RTPVideoFramePlan>(
        of plan: inout Plan, frame: UnsafeRawBufferPointer, timestamp: UInt32, plain: RTPExtensionValues,
        last: RTPExtensionValues, at now: MediaTime, _ transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) throws(RTPError) {
        // The transport-wide sequence number (a placeholder here) and the send time are written
        // when the pacer lets the packet go.
        while let packet = try plan.nextPacket(in: frame) {
            let isLast = packet.isLast
            // A packet may wait in the pacer only while the history holds it (it is sent from
            // there): one the next store would evict goes now, ahead of its turn, rather than
            // expire unsent. Only a burst larger than what the history holds beside those queued
            // before it does this; the one place the queue is bounded by room. The history's
            // index bounds it too (`wouldEvict`), and the ring is as long as that index, so the
            // ring is never full when the next packet is queued.
            while let oldest = pacer.oldestQueued,
                  history.wouldEvict(oldest, storing: configuration.mtu, as: video.nextSequenceNumber) {
                _ = pacer.takeAnyway()
                stats.pacedSentEarly += 1
                sendFromHistory(oldest, at: now, transmit)
            }
            let header = try video.writeHeader(into: scratch, timestamp: timestamp, marker: isLast,
                                               extensions: isLast ? last : plain, map: extensionMap,
                                               payloadSize: packet.payloadSize)
            let payload = try plan.writePayload(of: packet, frame: frame,
                                                into: UnsafeMutableRawBufferPointer(rebasing: scratch[header...]))
            try history.store(UnsafeRawBufferPointer(rebasing: scratch[0..<header + payload]))
            videoRate.add(bytes: header + payload, nowMicroseconds: now.microseconds)
            if pacer.isPacing {
                stats.packetsPaced += 1
                pacer.enqueue(scratchSequenceNumber, bytes: header + payload + trailerBytes)
            } else {
                try sendScratch(length: header + payload, at: now, transmit)
            }
        }
        drainPacer(at: now, transmit)
    }

    /// Sends one Opus packet (RFC 7587). Without an audio stream configured it is ignored.
    public func sendAudio(_ packet: UnsafeRawBufferPointer, mediaTimestamp: UInt32, samples: Int,
                          at now: MediaTime, transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) throws(RTPError) {
        guard var stream = audio else { return }
        guard connected else {
            droppedWhileConnecting += 1
            return
        }
        let timestamp = stream.timestampOffset &+ mediaTimestamp
        let tw = nextTransportSequence()
        let extensions = RTPExtensionValues(absSendTime: absSendTime(now),
                                            transportSequenceNumber: tw,
                                            mid: configuration.audioMID)
        let length = try stream.writePacket(
            into: scratch, timestamp: timestamp,
            marker: opusMarkers.marker(timestamp: timestamp, samples: samples),
            extensions: extensions, map: extensionMap, payload: packet)
        audio = stream
        let n = try protectAndTransmit(length: length, rtcp: false, route: .audioRTP, transmit)
        sentUnpaced(tw, bytes: n, at: now)
        if nextAudioReport == nil { nextAudioReport = now + .milliseconds(100) }
    }

    /// Protects `scratch[0..<length]` in place (unless insecure) and hands it on; returns the
    /// bytes handed on.
    @discardableResult
    private func protectAndTransmit(length: Int, rtcp: Bool, route: RTPRoute,
                                    _ transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) throws(RTPError) -> Int {
        var n = length
        if protector != nil {
            n = rtcp ? try protector!.protectRTCP(scratch, length: length) : try protector!.protectRTP(scratch, length: length)
        }
        stats.packetsSent += 1
        stats.bytesSent += UInt64(n)
        transmit(UnsafeRawBufferPointer(rebasing: scratch[0..<n]), route)
        return n
    }

    /// The edge could not send a datagram it was handed (full send buffer, ICMP error): the
    /// packet is lost like any other; NACK or the next keyframe repairs it.
    public func transmitFailed() {
        stats.packetsSent -= 1
        stats.sendDrops += 1
    }

    // MARK: Feedback in, reports out

    /// Reads one datagram from the receiver: SRTCP (or RTCP when insecure). RTP or anything
    /// else is not ours to read: counted and dropped. `datagram` is unprotected in place.
    public func handle(datagram: UnsafeMutableRawBufferPointer, count: Int, at now: MediaTime,
                       transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) {
        // RFC 5761 §4: an RTCP packet type (192...223 in the second byte) tells RTCP from RTP.
        guard count >= 8, count <= datagram.count, (192...223).contains(datagram[1]) else {
            stats.malformedReceived += 1
            return
        }
        var length = count
        if unprotector != nil {
            do { length = try unprotector!.unprotectRTCP(datagram, length: count) } catch {
                stats.unauthenticatedReceived += 1
                return
            }
        } else if !connected {
            stats.unauthenticatedReceived += 1
            return
        }
        // Before its items: a NACK in the datagram that ends an outage is judged as after it.
        feedbackHeard(at: now)
        do {
            let bytes = UnsafeRawBufferPointer(rebasing: datagram[0..<length])
            try RTCPParser.parse(bytes) { item in
                if case .transportCC(let header) = item {
                    readTransportFeedback(header, in: bytes, at: now)
                } else {
                    handle(item, at: now, transmit: transmit)
                }
            }
            if let change = feedbackWatch.heard(at: now) { requests.feedback = change }
        } catch {
            stats.malformedReceived += 1
        }
    }

    /// The peer answered on the path some other way (a consent answer): feedback as RTCP is.
    public func peerAnswered(at now: MediaTime) {
        guard connected else { return }
        feedbackHeard(at: now)
    }

    /// While the receiver is silent, one frame goes this often: a receiver that lost its state
    /// (restarted) reports only once media reaches it, and a held sender would wait forever.
    public static let silentProbeInterval = MediaDuration.seconds(1)

    /// Feedback arrived. After an outage the receiver's picture stands still until a keyframe
    /// reaches it: one is asked for at once, and video goes out again (`sendVideo` held it).
    private func feedbackHeard(at now: MediaTime) {
        guard let silence = feedbackReturn.heard(at: now), newestVideoSent != nil else { return }
        stats.feedbackReturns += 1
        requests.keyframe = true
        requests.feedbackReturnedAfterMilliseconds = silence.microseconds / 1_000
    }

    private func handle(_ item: RTCPItem, at now: MediaTime, transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) {
        switch item {
        case .reportBlock(_, let block) where block.ssrc == video.ssrc:
            stats.receiverReports += 1
            stats.fractionLost = Double(block.fractionLost) / 256
            requests.videoFractionLost = block.fractionLost
            stats.cumulativeLost = Int(block.cumulativeLost)
            stats.jitterMicroseconds = Int64(block.jitter) * 1_000_000 / 90_000
            if let rtt = block.roundTripMicroseconds(now: ntp(now)) {
                stats.roundTripMicroseconds = rtt
            }
        case .reportBlock(_, let block) where block.ssrc == audio?.ssrc:
            requests.audioFractionLost = block.fractionLost
        case .nack(_, let media, let entry) where media == video.ssrc:
            entry.forEachLost { sequence in
                stats.nacksReceived += 1
                retransmit(sequence, at: now, transmit)
            }
        case .pictureLoss(_, let media) where media == video.ssrc:
            stats.pliReceived += 1
            requests.keyframe = true
            requests.keyframeAsked = true
        case .fullIntraRequest(_, let entry) where entry.ssrc == video.ssrc:
            stats.firReceived += 1
            requests.keyframe = true
            requests.keyframeAsked = true
        case .remb(_, let bitrate, _):
            let kbps = Int(min(bitrate / 1000, UInt64(Int32.max)))
            stats.rembKbps = kbps
            requests.bitrateCeilingKbps = kbps
        case .goodbye:
            requests.peerLeft = true
        default:
            break
        }
    }

    /// Resends packet `sequence` (wrapped in RTX when negotiated, else as it was) if the history
    /// holds it and it was not resent within the last round trip; over the budget it is owed and
    /// goes when the budget refills (`DeferredResends`); a packet no longer held costs a keyframe.
    private func retransmit(_ sequence: UInt16, at now: MediaTime, _ transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) {
        let t = now.microseconds
        // A number not on the wire yet (queued in the pacer, or not made) is no loss: it goes in
        // its turn, and a receiver may have guessed it lost from a gap that was something else.
        guard let newest = newestVideoSent, Int16(bitPattern: sequence &- newest) <= 0 else {
            stats.nacksAheadOfSent += 1
            return
        }
        let spacing = stats.roundTripMicroseconds ?? configuration.retransmitSpacingMicroseconds
        if recentResends.isRecent(sequence, nowMicroseconds: t, spacingMicroseconds: spacing) {
            stats.retransmitsSuppressed += 1
            return
        }
        updateRetransmissionBudget(at: now)
        // Asked for again after its resend had time to arrive: that resend was lost too, so this
        // one goes twice (a third loss in a row is then the path's loss squared, not the loss).
        let copies = recentResends.isRecent(sequence, nowMicroseconds: t,
                                            spacingMicroseconds: Self.repeatedRequestWindowMicroseconds) ? 2 : 1
        switch resend(sequence, copies: copies, at: now, transmit) {
        case .sent, .failed:
            break
        case .overBudget:
            stats.retransmitsOverBudget += 1
            // Owed only to a receiver without transport-wide feedback: one that sends it asks
            // again for what is still missing (libwebrtc's kind, and `rtcshare receive`), and
            // an owed resend would only repeat its work on a path already short of room.
            guard stats.transportFeedbackReceived == 0 else { break }
            if !deferredResends.contains(sequence), deferredResends.owe(sequence, nowMicroseconds: t) {
                stats.retransmitsDeferred += 1
            }
            scheduleDeferredResends(at: now)
        case .notHeld:
            stats.retransmitsMissed += 1
            requests.keyframe = true
        }
    }

    private enum ResendOutcome { case sent, overBudget, failed, notHeld }

    /// Resends `sequence` from the history `copies` times (wrapped in RTX when negotiated) as far
    /// as the budget allows: `.overBudget` when not even one copy could go.
    private func resend(_ sequence: UInt16, copies: Int, at now: MediaTime,
                        _ transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) -> ResendOutcome {
        let t = now.microseconds
        let outcome: ResendOutcome? = history.withPacket(sequence) { (original: UnsafeRawBufferPointer) -> ResendOutcome in
            var sent = 0
            for copy in 0..<copies {
                guard retransmissions.allow(bytes: original.count, nowMicroseconds: t) else {
                    if copy > 0 { stats.retransmitsOverBudget += 1 }
                    break
                }
                do {
                    let length: Int
                    if rtx != nil {
                        length = try rtx!.write(original: original, into: scratch)
                    } else {
                        scratch.copyMemory(from: original)
                        length = original.count
                    }
                    // A resend is a new packet on the wire: a fresh transport-wide sequence number
                    // and send time (the RTP sequence number and payload stay the original's).
                    let before = stats.bytesSent
                    try sendScratch(length: length, outsidePacer: true, at: now, transmit)
                    stats.packetsRetransmitted += 1
                    stats.bytesRetransmitted += stats.bytesSent - before
                    if copy > 0 { stats.resendsDoubled += 1 }
                    sent += 1
                } catch {
                    stats.sendDrops += 1
                    return sent > 0 ? .sent : .failed
                }
            }
            if sent > 0 { recentResends.note(sequence, nowMicroseconds: t) }
            return sent > 0 ? .sent : .overBudget
        }
        return outcome ?? .notHeld
    }

    /// Resends what the budget owes, oldest first, while it can pay: a packet resent meanwhile
    /// (asked for again when the budget had room) is not sent twice; one no longer held costs a
    /// keyframe, as a NACK for it would.
    private func sendDeferredResends(at now: MediaTime, _ transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) {
        guard !deferredResends.isEmpty else { return }
        updateRetransmissionBudget(at: now)
        while let (sequence, owedAt) = deferredResends.first {
            if let resent = recentResends.lastResend(sequence), resent >= owedAt {
                deferredResends.removeFirst()
                continue
            }
            switch resend(sequence, copies: 1, at: now, transmit) {
            case .overBudget:
                scheduleDeferredResends(at: now)
                return
            case .sent:
                stats.deferredRetransmitted += 1
            case .failed:
                break
            case .notHeld:
                stats.retransmitsMissed += 1
                requests.keyframe = true
            }
            deferredResends.removeFirst()
        }
        deferredResendTime = nil
    }

    /// Wakes the loop when the budget will have a full packet's bytes again (at least 1 ms on).
    private func scheduleDeferredResends(at now: MediaTime) {
        let due = retransmissions.time(forBytes: configuration.mtu + 64, nowMicroseconds: now.microseconds)
        deferredResendTime = due.map { MediaTime(microseconds: max($0, now.microseconds + 1_000)) }
    }

    /// A NACK for a packet resent within this long before is a repeated request (its resend was
    /// lost): the next resend goes twice.
    public static let repeatedRequestWindowMicroseconds: Int64 = 1_000_000

    /// Sends the reports that are due. Call at `nextDeadline` (and whenever convenient).
    public func poll(at now: MediaTime, transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) {
        guard connected else { return }
        if let change = feedbackWatch.check(at: now) { requests.feedback = change }
        sendDeferredResends(at: now, transmit)
        drainPacer(at: now, transmit)
        if let due = nextVideoReport, due <= now {
            sendReport(for: video, bye: false, route: .videoRTCP, at: now, transmit)
            nextVideoReport = now + reportInterval()
        }
        if let due = nextAudioReport, due <= now, let stream = audio {
            sendReport(for: stream, bye: false, route: .audioRTCP, at: now, transmit)
            nextAudioReport = now + reportInterval()
        }
    }

    /// What feedback asked of the pipeline since the last call.
    public func takeRequests() -> TransportRequests {
        defer { requests = TransportRequests() }
        return requests
    }

    /// When `poll` has something to send next; nil: nothing scheduled.
    public var nextDeadline: MediaTime? {
        guard connected else { return nil }
        // Asked at every wake-up of the loop: no array, just the four candidates in turn.
        func earlier(_ a: MediaTime?, _ b: MediaTime?) -> MediaTime? {
            guard let a else { return b }
            guard let b else { return a }
            return min(a, b)
        }
        let paced = pacer.nextSendTime.map { MediaTime(microseconds: $0) }
        let reports = earlier(earlier(nextVideoReport, nextAudioReport), earlier(feedbackWatch.deadline, paced))
        return earlier(reports, deferredResendTime)
    }

    /// RFC 3550 §6.3.5: the interval randomised to 0.5...1.5 of its nominal second, so reports
    /// of many senders do not synchronise.
    private func reportInterval() -> MediaDuration {
        .microseconds(Int64.random(in: 500_000...1_500_000, using: &random))
    }

    private func sendReport(for stream: RTPStream, bye: Bool, route: RTPRoute, at now: MediaTime,
                            _ transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) {
        let info = RTCPSenderInfo(
            ssrc: stream.ssrc, ntpTime: ntp(now), rtpTimestamp: stream.timestamp(captureMicroseconds: now.microseconds),
            packetCount: stream.packetCount, octetCount: stream.octetCount)
        do {
            let n = try RTCPCompoundBuilder.write(RTCPSenderReport(info: info), cname: cname,
                                                  byeReason: bye ? .some(nil) : nil, into: scratch)
            try protectAndTransmit(length: n, rtcp: true, route: route, transmit)
        } catch {
            stats.sendDrops += 1
        }
    }

    /// The share is over: the video still in the pacer's queue goes at once (a frame encoded
    /// is a frame the receiver is owed, and the goodbye must not overtake it), then a last
    /// sender report with BYE for each stream that sent anything.
    public func finish(at now: MediaTime, transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) {
        guard connected else { return }
        while let sequence = pacer.takeAnyway() { sendFromHistory(sequence, at: now, transmit) }
        if video.packetCount > 0 { sendReport(for: video, bye: true, route: .videoRTCP, at: now, transmit) }
        if let stream = audio, stream.packetCount > 0 {
            sendReport(for: stream, bye: true, route: .audioRTCP, at: now, transmit)
        }
        nextVideoReport = nil
        nextAudioReport = nil
        feedbackWatch.stop()
    }
}
