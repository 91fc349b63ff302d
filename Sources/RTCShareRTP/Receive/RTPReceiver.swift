import RTCShareCore

// The receive side of the transport core, sans-IO: datagrams go in with the time (and the
// caller notes which route each came on from what `receive` says it was); `poll` hands out
// reassembled video frames (VP8, H.264 access units) and Opus payloads in order — a lost audio packet as nil, to conceal —
// and sends the feedback that is due (NACK, PLI, receiver reports, each RR + SDES first as a
// compound, RFC 4585 §3.1) through the output with its route; `nextDeadline` says when to call
// `poll` again.
//
// Invariants:
// - No socket, clock, thread or random source inside: times are the caller's monotonic
//   `MediaTime`; the receiver's SSRC and CNAME come from the generator given.
// - Every datagram is untrusted: RFC 5761 demux by the second byte (192...223 is RTCP), SRTP or
//   SRTCP authentication first (one master key both ways, as SDES gives), then the bounds-
//   checked parsers; anything else is counted and dropped, never fatal.
// - A repair (RTX, or a plain resend answering a NACK) does not count as received in the
//   reports: they carry the loss before repair, which the sender's rate control needs.
// - Loss recovery follows the network (`RecoveryTiming`): the round trip is measured from
//   NACK answers (a default stands for it until then), a number is asked again one answer time
//   (RTT + its variation + margin) after its last NACK, and a hole is waited for a few
//   answer times, within the configured bounds, so retransmissions are used, not late. An
//   answer that comes after its packet was given up still measures the round trip
//   (`LateAnswers`). A keyframe is asked for only when recovery has become impossible: a
//   number given up (tries spent, or no answer could come before its playout wait ends) or a
//   frame lost.
// - After a frame is lost only a keyframe is handed out next (the decoder cannot go on from a
//   broken reference); the caller reports decoder failures with `decodeFailed()`.
// - Transport-wide feedback (transport-cc) goes back only when the sender's description names
//   the transport-wide sequence extension (`transportSequenceID`): every packet of ours that
//   carries it (video, RTX, audio) is recorded with its arrival time (`TransportFeedbackRecorder`).
//   With those numbers, video lost after the newest video packet is asked for as soon as two
//   consecutive audio packets show a gap above it (`TransportGapInference`), before the next
//   frame shows it (measured at 20 fps, 5 % loss: half the losses, asked ~30 ms sooner).
// - A frame whose newest packet has no marker bit and is not followed within a few packet
//   spacings has lost its tail: the next number is asked for then (`UnfinishedFrameWatch`).
// - Memory: the jitter buffers from the caller's `MemoryBudget`; a frame buffer, an RTX unwrap
//   buffer, an outgoing RTCP buffer, the NACK lists and the transport-wide arrival rings (8 KiB
//   and 2 KiB) taken at start. Nothing grows per packet.
// - One owner, one thread: not thread-safe.

/// The wire choices of one receive session.
public struct RTPReceiverConfiguration: Sendable {
    /// nil: plain RTP and RTCP. Otherwise the key unprotects what arrives and protects the RTCP
    /// sent back.
    public var protection: SRTPMasterKey?
    /// Keys come later (DTLS-SRTP, `install(local:remote:)`): until then every datagram is
    /// dropped and counted, never read in the clear. `protection` is then ignored.
    public var awaitsKeys = false
    public var videoPayloadType: UInt8 = 96
    /// What the video payload type carries (VP8, RFC 7741; H.264 packetization-mode 1, RFC 6184).
    public var videoCodec: VideoCodec = .vp8
    /// The RTX payload type (RFC 4588) when the sender declares one.
    public var rtxPayloadType: UInt8?
    public var audioPayloadType: UInt8? = 111
    /// SSRCs the session description names; nil: taken from the first packet.
    public var videoSSRC: UInt32?
    public var audioSSRC: UInt32?
    /// Reorder-buffer capacities (packets).
    public var videoJitterPackets = 1024
    public var audioJitterPackets = 64
    /// The least and the most a missing packet is waited for (the video wait follows the round
    /// trip between them, `RecoveryTiming`; audio, which is not asked again, waits the least).
    public var minimumJitterWaitMicroseconds: Int64 = 60_000
    public var maximumJitterWaitMicroseconds: Int64 = 320_000
    /// The round trip assumed before one is measured, retries per hole, margins.
    public var recovery = RecoveryTiming.Configuration()
    /// Largest encoded frame reassembled.
    public var maxFrameBytes = 1 << 20
    public var reportIntervalMicroseconds: Int64 = 1_000_000
    public var nack = NackGenerator.Configuration()
    /// The transport-wide sequence number's extension ID when the sender's description names it
    /// (and asks for transport-cc feedback); nil: no transport-wide feedback is sent.
    public var transportSequenceID: UInt8?
    /// How often transport-wide feedback goes back while packets arrive.
    public var transportFeedbackIntervalMicroseconds: Int64 = 50_000
    /// With the transport-wide numbers: video lost after the newest video packet is asked for as
    /// soon as the audio packets' numbers show it (`TransportGapInference`), not when the next
    /// video packet arrives.
    public var infersLossFromTransportGaps = true
    /// A frame whose newest packet is not its last and is not followed at once: the next number
    /// is asked for then (`UnfinishedFrameWatch`), not when the next frame shows the gap.
    public var infersLossFromUnfinishedFrames = true

    /// Largest datagram taken (a jitter-buffer slot).
    public static let datagramBytes = 2048
    /// Most sequence numbers one NACK carries.
    public static let maxNackNumbers = 128

    public init() {}

    /// Bytes the jitter buffers take from the budget.
    public var budgetBytes: Int {
        JitterBuffer.bytes(capacity: videoJitterPackets, slotBytes: Self.datagramBytes)
            + JitterBuffer.bytes(capacity: audioJitterPackets, slotBytes: Self.datagramBytes)
    }
}

/// What one datagram turned out to be, so the edge knows where RTCP for that stream goes back.
public enum RTPReceiverInput: Sendable, Equatable {
    /// Video (or its RTX stream) with the expected payload type.
    case video
    case audio
    /// RTCP, authenticated and parsed; `goodbye` when it held the video sender's BYE.
    case control(goodbye: Bool)
    /// Counted and dropped (malformed, failed authentication, duplicate, unknown stream).
    case dropped
}

/// Where `poll` hands what it produced.
public protocol RTPReceiverOutput {
    /// A protected RTCP datagram for the stream's sender (`.videoRTCP` or `.audioRTCP`).
    func transmit(_ datagram: UnsafeRawBufferPointer, route: RTPRoute)
    /// A complete encoded frame (VP8, or an H.264 access unit in Annex B), in order; the bytes
    /// are valid only during the call.
    func videoFrame(_ frame: ReceivedVideoFrame, bytes: UnsafeRawBufferPointer)
    /// An Opus payload in order, or nil for a packet that was lost (conceal it).
    func audioPacket(_ payload: UnsafeRawBufferPointer?)
}

/// Counters since the start.
public struct RTPReceiverStats: Sendable, Equatable {
    /// Video RTP packets accepted as they arrived (retransmissions included) and their bytes.
    public var packets: UInt64 = 0
    public var bytes: UInt64 = 0
    /// Video packets the jitter buffer gave up.
    public var packetsLost: UInt64 = 0
    public var packetsDuplicate: UInt64 = 0
    public var packetsLate: UInt64 = 0
    /// Answers to NACKs that came after their packet was given up (they still gave an RTT).
    public var lateRetransmissions: UInt64 = 0
    /// Video packets whose retransmission arrived on the RTX stream.
    public var rtxPackets: UInt64 = 0
    /// Bytes of video packets that arrived as repairs (RTX, or a resend answering a NACK),
    /// late ones included.
    public var bytesRepaired: UInt64 = 0
    public var nackPackets: UInt64 = 0
    /// Times the newest video packet was not its frame's last and the next one did not follow
    /// (`UnfinishedFrameWatch`): the next number was asked for at once.
    public var unfinishedFrames: UInt64 = 0
    public var plis: UInt64 = 0
    public var keyframes: UInt64 = 0
    /// Frames assembled but not handed out (waiting for a keyframe) or that failed to decode.
    public var framesUndecodable: UInt64 = 0
    /// Frames handed out.
    public var framesDelivered: UInt64 = 0
    /// Encoded frames never assembled: jumps in the VP8 PictureIDs of frames handed out.
    public var pictureIDGaps: UInt64 = 0
    public var audioPackets: UInt64 = 0
    public var srtpFailures: UInt64 = 0
    public var malformed: UInt64 = 0
    public var rtcpReceived: UInt64 = 0
    public var senderReportsReceived: UInt64 = 0
    /// Transport-wide feedback packets sent.
    public var transportFeedbackSent: UInt64 = 0
    public var byeReceived = false

    public init() {}
}

public final class RTPReceiver {
    public let configuration: RTPReceiverConfiguration
    /// Our SSRC and CNAME in the RTCP we send.
    public let ssrc: UInt32
    public let cname: String
    public private(set) var stats = RTPReceiverStats()
    /// The streams' SSRCs (named in the configuration or learnt from the first packet).
    public private(set) var videoSSRC: UInt32?
    public private(set) var audioSSRC: UInt32?
    /// Smoothed round trip from NACK answers (µs; nil until one came back).
    public var smoothedRTTMicroseconds: Int64? { recovery.smoothedRoundTripMicroseconds }
    /// The loss-recovery timing: round trip, NACK spacing, playout wait.
    public private(set) var recovery: RecoveryTiming

    private var videoJitter: JitterBuffer
    private var audioJitter: JitterBuffer
    private var unprotector: SRTPContext?
    private var protector: SRTPContext?
    /// Waiting for `install` (DTLS-SRTP): nothing is read or sent until the keys come.
    private var keysPending = false
    private var depacketizer: VideoDepacketizer
    private var nack: NackGenerator
    private var transportGaps = TransportGapInference()
    private var unfinishedFrame = UnfinishedFrameWatch()
    private var keyframes = KeyframeRequestLimiter()
    private var videoStats: ReceiveStatistics?
    private var audioStats: ReceiveStatistics?
    private var waitingForKeyframe = true
    /// The newest VP8 PictureID (15 bits) handed out.
    private var lastPictureID: UInt16?
    private var nextReport: MediaTime?
    private var lateAnswers = LateAnswers()
    private var transportFeedback: TransportFeedbackRecorder?
    private let transportMap: RTPExtensionMap?

    private let unwrapped: UnsafeMutableRawBufferPointer
    private let frame: UnsafeMutableRawBufferPointer
    private let outbox: UnsafeMutableRawBufferPointer
    private let nackNumbers: UnsafeMutableBufferPointer<UInt16>
    private let nackEntries: UnsafeMutableBufferPointer<RTCPNackEntry>

    /// libsrtp2's srtp_err_status_replay_fail and srtp_err_status_replay_old.
    private static let srtpReplayFail: Int32 = 9
    private static let srtpReplayOld: Int32 = 10

    /// Takes the jitter buffers from `budget` (`configuration.budgetBytes`) and makes the SRTP
    /// contexts. Throws `.outOfMemory` when they do not fit, `.srtp` for a key libsrtp2 refuses.
    public init(configuration c: RTPReceiverConfiguration, budget: MemoryBudget,
                random: some RandomNumberGenerator) throws(RTPError) {
        configuration = c
        let slot = RTPReceiverConfiguration.datagramBytes
        do {
            videoJitter = try JitterBuffer(budget: budget, capacity: c.videoJitterPackets, slotBytes: slot,
                                           waitMicroseconds: c.minimumJitterWaitMicroseconds)
            audioJitter = try JitterBuffer(budget: budget, capacity: c.audioJitterPackets, slotBytes: slot,
                                           waitMicroseconds: c.minimumJitterWaitMicroseconds)
        } catch {
            throw .outOfMemory("receive buffers: \(error)")
        }
        if let key = c.protection, !c.awaitsKeys {
            unprotector = try SRTPContext(key: key, direction: .receiver)
            protector = try SRTPContext(key: key, direction: .sender)
        }
        keysPending = c.awaitsKeys
        nack = NackGenerator(configuration: c.nack)
        if let id = c.transportSequenceID {
            transportMap = try RTPExtensionMap(transportSequenceNumber: id)
            transportFeedback = TransportFeedbackRecorder(intervalMicroseconds: c.transportFeedbackIntervalMicroseconds)
        } else {
            transportMap = nil
        }
        recovery = RecoveryTiming(configuration: c.recovery)
        videoJitter.waitMicroseconds = recovery.playoutWaitMicroseconds(
            reorderWaitMicroseconds: c.nack.reorderWaitMicroseconds,
            minimum: c.minimumJitterWaitMicroseconds, maximum: c.maximumJitterWaitMicroseconds)
        depacketizer = VideoDepacketizer(c.videoCodec)
        videoSSRC = c.videoSSRC
        audioSSRC = c.audioSSRC
        var rng = random
        ssrc = UInt32.random(in: 1...UInt32.max, using: &rng)
        cname = "rx-" + String((0..<12).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement(using: &rng)! })

        unwrapped = .allocate(byteCount: slot, alignment: 16)
        frame = .allocate(byteCount: max(c.maxFrameBytes, 4096), alignment: 16)
        outbox = .allocate(byteCount: 1500 + SRTPProfile.requiredTailroom, alignment: 16)
        nackNumbers = .allocate(capacity: RTPReceiverConfiguration.maxNackNumbers)
        nackEntries = .allocate(capacity: RTPReceiverConfiguration.maxNackNumbers)
        nackEntries.initialize(repeating: RTCPNackEntry(pid: 0, blp: 0))
    }

    deinit {
        unwrapped.deallocate()
        frame.deallocate()
        outbox.deallocate()
        nackNumbers.deallocate()
        nackEntries.deallocate()
    }

    /// NACK counters (missing, nacked, recovered, given up).
    public var nackCounters: NackGenerator.Counters { nack.counters }
    /// Frames the depacketizer gave up (a packet missing).
    public var framesIncomplete: UInt64 { depacketizer.framesDropped }
    /// Interarrival jitter of the video stream (RFC 3550 A.8).
    public var videoJitterMicroseconds: Int64 { videoStats?.jitterMicroseconds ?? 0 }
    /// Packets the video stream's sender sent as far as its sequence numbers tell.
    public var videoPacketsExpected: Int64 { videoStats?.expected ?? 0 }

    /// When `poll` has work next: a packet's wait ends, a NACK or keyframe request is due, a
    /// report is due. nil: nothing until a datagram arrives.
    public var nextDeadline: MediaTime? {
        var earliest: Int64?
        func consider(_ t: Int64?) {
            guard let t else { return }
            earliest = min(earliest ?? t, t)
        }
        consider(videoJitter.nextDeadline)
        consider(audioJitter.nextDeadline)
        consider(nack.nextDeadline)
        consider(unfinishedFrame.deadline)
        consider(videoSSRC == nil || stats.packets == 0 ? nil : keyframes.nextDeadline)
        consider(nextReport?.microseconds)
        consider(transportFeedback?.nextDeadline)
        return earliest.map { MediaTime(microseconds: max($0, 0)) }
    }

    // MARK: datagrams in

    /// Takes one datagram of `count` bytes at the start of `buffer` (unprotected in place; the
    /// buffer may be longer). Says what it was.
    /// The SRTP keys DTLS exported: `local` protects the RTCP this end sends, `remote` unprotects
    /// what the sender sends. Media is read from here on.
    public func install(local: SRTPMasterKey, remote: SRTPMasterKey) throws(RTPError) {
        protector = try SRTPContext(key: local, direction: .sender)
        unprotector = try SRTPContext(key: remote, direction: .receiver)
        keysPending = false
    }

    public func receive(datagram buffer: UnsafeMutableRawBufferPointer, count: Int, at now: MediaTime) -> RTPReceiverInput {
        guard count >= 2, count <= buffer.count else {
            stats.malformed += 1
            return .dropped
        }
        guard !keysPending else {
            stats.srtpFailures += 1
            return .dropped
        }
        if (192...223).contains(buffer[1]) {
            return receiveControl(buffer, count: count, at: now)
        }
        var length = count
        if unprotector != nil {
            do {
                length = try unprotector!.unprotectRTP(buffer, length: count)
            } catch {
                // A replayed packet (a second resend of one already here) is a duplicate;
                // anything else failed authentication.
                if case .srtp(_, let status) = error,
                   status == Self.srtpReplayFail || status == Self.srtpReplayOld {
                    stats.packetsDuplicate += 1
                } else {
                    stats.srtpFailures += 1
                }
                return .dropped
            }
        }
        let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        let parsed: RTPParsedPacket
        do { parsed = try RTPHeader.parse(packet) } catch {
            stats.malformed += 1
            return .dropped
        }
        let pt = parsed.header.payloadType
        var transportSequence: UInt16? = nil
        if let map = transportMap,
           pt == configuration.videoPayloadType || pt == configuration.rtxPayloadType || pt == configuration.audioPayloadType,
           let seq = (try? RTPExtensionValues.parse(packet: packet, parsed, map: map))?.transportSequenceNumber {
            transportFeedback?.packetArrived(seq, at: now.microseconds)
            if configuration.infersLossFromTransportGaps { transportSequence = seq }
        }
        if pt == configuration.videoPayloadType {
            let result = receiveVideo(packet, parsed, isRetransmission: false, at: now)
            if result == .video, let t = transportSequence {
                transportGaps.videoArrived(transportSequence: t, sequenceNumber: parsed.header.sequenceNumber)
            }
            return result
        }
        if let rtx = configuration.rtxPayloadType, pt == rtx {
            if let t = transportSequence { transportGaps.otherArrived(transportSequence: t) }
            guard let media = videoSSRC else { return .dropped }  // nothing to restore it to yet
            do {
                let n = try RTXPacketizer.unwrap(rtx: packet, originalSSRC: media,
                                                 originalPayloadType: configuration.videoPayloadType, into: unwrapped)
                let original = UnsafeRawBufferPointer(rebasing: unwrapped[0..<n])
                let result = receiveVideo(original, try RTPHeader.parse(original), isRetransmission: true, at: now)
                if result == .video { stats.rtxPackets += 1 }
                return result
            } catch {
                // Padding-only RTX (probing) carries no packet.
                stats.malformed += 1
                return .dropped
            }
        }
        if let audio = configuration.audioPayloadType, pt == audio {
            let result = receiveAudio(packet, parsed, at: now)
            if result == .audio, let t = transportSequence {
                // Video lost after the newest video packet, beyond what resends still on the way
                // could account for, is asked for now rather than when the next frame comes.
                let lost = transportGaps.audioArrived(transportSequence: t, sequenceNumber: parsed.header.sequenceNumber)
                if lost > 0 {
                    let unexplained = lost - nack.askedAndWaiting
                    if unexplained > 0 { nack.inferMissing(count: unexplained, now: now.microseconds) }
                }
            }
            return result
        }
        stats.malformed += 1
        return .dropped
    }

    private func receiveVideo(_ packet: UnsafeRawBufferPointer, _ parsed: RTPParsedPacket, isRetransmission: Bool,
                              at now: MediaTime) -> RTPReceiverInput {
        let h = parsed.header
        let t = now.microseconds
        if videoSSRC == nil { videoSSRC = h.ssrc }
        guard h.ssrc == videoSSRC else {
            stats.malformed += 1
            return .dropped
        }
        if videoStats == nil { videoStats = ReceiveStatistics(ssrc: h.ssrc, clockRate: 90_000) }
        if nextReport == nil { nextReport = now + .microseconds(configuration.reportIntervalMicroseconds) }
        stats.packets += 1
        stats.bytes += UInt64(packet.count)
        var sinceNack = nack.packetReceived(sequenceNumber: h.sequenceNumber, now: t)
        if configuration.infersLossFromUnfinishedFrames {
            unfinishedFrame.videoArrived(sequence: h.sequenceNumber, timestamp: h.timestamp, marker: h.marker, at: t)
        }
        // An inferred number's answer may have been its first sending: no round-trip sample.
        let inferredAnswer = sinceNack != nil && nack.lastRecoveryInferred
        var askedOnce = sinceNack != nil && nack.lastRecoveryTries == 1
        if sinceNack == nil, let asked = lateAnswers.take(h.sequenceNumber) {
            sinceNack = max(0, t - asked)
            askedOnce = true
            stats.lateRetransmissions += 1
        }
        videoStats!.received(sequenceNumber: h.sequenceNumber, rtpTimestamp: h.timestamp, arrival: t,
                             isRetransmission: isRetransmission || sinceNack != nil)
        if sinceNack != nil || isRetransmission {
            stats.bytesRepaired += UInt64(packet.count)
        }
        if let sinceNack, !inferredAnswer, askedOnce || recovery.samples == 0 {
            // A NACK's answer: the round trip (plus the sender's turnaround) sets the waits. A
            // number asked for more than once answers an unknown NACK (Karn's rule): timed from
            // the first it is an upper bound, taken only while nothing better is known (a path
            // longer than the default answer time would otherwise never be learnt).
            recovery.roundTripSample(sinceNack)
            updatePlayoutWait()
        }
        switch videoJitter.insert(packet, sequenceNumber: h.sequenceNumber, now: t) {
        case .stored: break
        case .duplicate: stats.packetsDuplicate += 1
        case .late: stats.packetsLate += 1
        case .tooLarge, .overflow: stats.malformed += 1
        }
        return .video
    }

    private func receiveAudio(_ packet: UnsafeRawBufferPointer, _ parsed: RTPParsedPacket,
                              at now: MediaTime) -> RTPReceiverInput {
        let h = parsed.header
        if audioSSRC == nil { audioSSRC = h.ssrc }
        guard h.ssrc == audioSSRC else { return .dropped }
        if audioStats == nil { audioStats = ReceiveStatistics(ssrc: h.ssrc, clockRate: OpusPayload.clockRate) }
        if nextReport == nil { nextReport = now + .microseconds(configuration.reportIntervalMicroseconds) }
        audioStats!.received(sequenceNumber: h.sequenceNumber, rtpTimestamp: h.timestamp, arrival: now.microseconds)
        stats.audioPackets += 1
        _ = audioJitter.insert(packet, sequenceNumber: h.sequenceNumber, now: now.microseconds)
        return .audio
    }

    private func receiveControl(_ buffer: UnsafeMutableRawBufferPointer, count: Int, at now: MediaTime) -> RTPReceiverInput {
        var length = count
        if unprotector != nil {
            do { length = try unprotector!.unprotectRTCP(buffer, length: count) } catch {
                stats.srtpFailures += 1
                return .dropped
            }
        }
        stats.rtcpReceived += 1
        var goodbye = false
        do {
            try RTCPParser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<length])) { item in
                switch item {
                case .senderReport(let info):
                    stats.senderReportsReceived += 1
                    if info.ssrc == videoSSRC { videoStats?.senderReportReceived(ntpTime: info.ntpTime, arrival: now.microseconds) }
                    if info.ssrc == audioSSRC { audioStats?.senderReportReceived(ntpTime: info.ntpTime, arrival: now.microseconds) }
                case .goodbye(let s, _):
                    if s == videoSSRC {
                        stats.byeReceived = true
                        goodbye = true
                    }
                default:
                    break
                }
            }
        } catch {
            stats.malformed += 1
            return .dropped
        }
        return .control(goodbye: goodbye)
    }

    // MARK: media out, feedback out

    /// Hands out what is due and sends the feedback and reports that are due.
    public func poll(at now: MediaTime, output: some RTPReceiverOutput) {
        drain(at: now, output: output)
        sendFeedback(at: now, output: output)
        if let due = nextReport, now >= due {
            sendReports(at: now, output: output)
            nextReport = now + .microseconds(configuration.reportIntervalMicroseconds)
        }
    }

    /// Hands out the frames and audio packets that are due (at the end: everything still held,
    /// with holes as lost, so the counts are final). Sends nothing.
    public func drain(at now: MediaTime, output: some RTPReceiverOutput) {
        let t = now.microseconds
        while let out = videoJitter.pop(now: t) {
            switch out {
            case .lost(let seq):
                if let asked = nack.abandon(sequenceNumber: seq) { lateAnswers.note(seq, askedAt: asked) }
                stats.packetsLost += 1
            case .packet:
                let result = videoJitter.withPacket(out) { bytes in depacketizer.push(packet: bytes, into: frame) }
                guard let result else { continue }
                if result.dropped {
                    waitingForKeyframe = true
                    keyframes.request()
                }
                if let f = result.frame { deliver(f, output: output) }
            }
        }
        while let out = audioJitter.pop(now: t) {
            switch out {
            case .lost:
                output.audioPacket(nil)
            case .packet:
                let handed: Bool? = audioJitter.withPacket(out) { bytes in
                    guard let parsed = try? RTPHeader.parse(bytes) else { return false }
                    output.audioPacket(UnsafeRawBufferPointer(rebasing: bytes[parsed.payloadRange]))
                    return true
                }
                if handed != true { output.audioPacket(nil) }
            }
        }
    }

    private func deliver(_ f: ReceivedVideoFrame, output: some RTPReceiverOutput) {
        notePictureID(f.pictureID)
        if f.isKeyframe {
            stats.keyframes += 1
            waitingForKeyframe = false
            keyframes.keyframeReceived()
        } else if waitingForKeyframe {
            stats.framesUndecodable += 1
            keyframes.request()
            return
        }
        stats.framesDelivered += 1
        output.videoFrame(f, bytes: UnsafeRawBufferPointer(rebasing: frame[0..<f.byteCount]))
    }

    /// The frame just handed out could not be decoded: only a keyframe is handed out next, and
    /// one is asked for.
    public func decodeFailed() {
        stats.framesUndecodable += 1
        waitingForKeyframe = true
        keyframes.request()
    }

    /// PictureIDs go up by one per encoded frame (mod 2^15): a jump forward means frames that
    /// were given up or never arrived; an older ID (late, duplicate) changes nothing.
    private func notePictureID(_ id: UInt16?) {
        guard let id else { return }
        if let last = lastPictureID {
            let ahead = (id &- last) & 0x7FFF
            guard ahead != 0 && ahead < 0x4000 else { return }
            stats.pictureIDGaps += UInt64(ahead - 1)
        }
        lastPictureID = id
    }

    /// The transport-wide feedback that is due (more than one when much arrived).
    private func sendTransportFeedback(at now: MediaTime, output: some RTPReceiverOutput) {
        guard transportFeedback != nil else { return }
        let media = videoSSRC ?? audioSSRC ?? 0
        while let fb = transportFeedback!.takeFeedback(sender: ssrc, media: media, now: now.microseconds) {
            if send(feedback: fb, route: videoSSRC == nil ? .audioRTCP : .videoRTCP, output: output) {
                stats.transportFeedbackSent += 1
            }
        }
    }

    /// The video hole wait from the round trip now.
    private func updatePlayoutWait() {
        videoJitter.waitMicroseconds = recovery.playoutWaitMicroseconds(
            reorderWaitMicroseconds: configuration.nack.reorderWaitMicroseconds,
            minimum: configuration.minimumJitterWaitMicroseconds, maximum: configuration.maximumJitterWaitMicroseconds)
    }

    private func sendFeedback(at now: MediaTime, output: some RTPReceiverOutput) {
        sendTransportFeedback(at: now, output: output)
        guard let media = videoSSRC, stats.packets > 0 else { return }
        let t = now.microseconds
        // The newest packet was not its frame's last and nothing followed: the next is lost.
        if unfinishedFrame.takeDue(at: t) {
            nack.inferMissing(count: 1, now: t)
            stats.unfinishedFrames += 1
        }
        let n = nack.collectDue(now: t, answerMicroseconds: recovery.retryMicroseconds,
                                // Only a measured round trip says an answer can no longer come.
                                playoutWaitMicroseconds: recovery.samples > 0 ? videoJitter.waitMicroseconds : nil,
                                into: nackNumbers)
        if n > 0 {
            let m = RTCPNackEntry.minimalEntries(lost: UnsafeMutableBufferPointer(rebasing: nackNumbers[0..<n]),
                                                 into: nackEntries)
            let fb = RTCPGenericNack(sender: ssrc, media: media, entries: Array(nackEntries[0..<m]))
            if send(feedback: fb, route: .videoRTCP, output: output) { stats.nackPackets += 1 }
        }
        if nack.takeKeyframeRequest() { keyframes.request() }
        if keyframes.takeDue(now: t) {
            if send(feedback: RTCPPictureLossIndication(sender: ssrc, media: media), route: .videoRTCP, output: output) {
                stats.plis += 1
            }
        }
    }

    /// RR (no blocks) + SDES + one feedback packet, as one compound.
    private func send(feedback: some RTCPWritable, route: RTPRoute, output: some RTPReceiverOutput) -> Bool {
        var n = 0
        do {
            n += try RTCPReceiverReport(ssrc: ssrc).write(into: outbox, at: n)
            n += try RTCPSourceDescription(ssrc: ssrc, cname: cname).write(into: outbox, at: n)
            n += try feedback.write(into: outbox, at: n)
        } catch {
            return false
        }
        return transmit(length: n, route: route, output: output)
    }

    private func sendReports(at now: MediaTime, output: some RTPReceiverOutput) {
        if stats.packets > 0, let block = videoStats?.makeReportBlock(now: now.microseconds) {
            sendReport(block, route: .videoRTCP, output: output)
        }
        if stats.audioPackets > 0, let block = audioStats?.makeReportBlock(now: now.microseconds) {
            sendReport(block, route: .audioRTCP, output: output)
        }
    }

    /// The receiver is leaving (RFC 3550 §6.3.7): a last receiver report with a BYE on each
    /// stream it reported on, so the sender learns the session closed rather than went silent.
    public func finish(at now: MediaTime, output: some RTPReceiverOutput) {
        if stats.packets > 0, let block = videoStats?.makeReportBlock(now: now.microseconds) {
            sendReport(block, route: .videoRTCP, goodbye: true, output: output)
        }
        if stats.audioPackets > 0, let block = audioStats?.makeReportBlock(now: now.microseconds) {
            sendReport(block, route: .audioRTCP, goodbye: true, output: output)
        }
    }

    private func sendReport(_ block: RTCPReportBlock, route: RTPRoute, goodbye: Bool = false,
                            output: some RTPReceiverOutput) {
        var n = 0
        do {
            n += try RTCPReceiverReport(ssrc: ssrc, reportBlocks: [block]).write(into: outbox, at: n)
            n += try RTCPSourceDescription(ssrc: ssrc, cname: cname).write(into: outbox, at: n)
            if goodbye { n += try RTCPGoodbye(ssrcs: [ssrc]).write(into: outbox, at: n) }
        } catch {
            return
        }
        _ = transmit(length: n, route: route, output: output)
    }

    private func transmit(length: Int, route: RTPRoute, output: some RTPReceiverOutput) -> Bool {
        var n = length
        if protector != nil {
            do { n = try protector!.protectRTCP(outbox, length: length) } catch { return false }
        }
        output.transmit(UnsafeRawBufferPointer(rebasing: outbox[0..<n]), route: route)
        return true
    }
}

/// Packets given up after a NACK asked for them, and when it asked: a fixed ring of the newest
/// few, so that an answer arriving too late still counts as a retransmission and measures the
/// round trip.
struct LateAnswers {
    private static let capacity = 64
    private var sequence = [UInt16](repeating: 0, count: capacity)
    private var askedAt = [Int64](repeating: 0, count: capacity)
    private var valid = [Bool](repeating: false, count: capacity)
    private var next = 0

    mutating func note(_ seq: UInt16, askedAt time: Int64) {
        sequence[next] = seq
        askedAt[next] = time
        valid[next] = true
        next = (next + 1) % Self.capacity
    }

    /// When `seq` was asked for, once (it is forgotten after).
    mutating func take(_ seq: UInt16) -> Int64? {
        for i in 0..<Self.capacity where valid[i] && sequence[i] == seq {
            valid[i] = false
            return askedAt[i]
        }
        return nil
    }
}
