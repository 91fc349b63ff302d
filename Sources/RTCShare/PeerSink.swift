import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP

/// `--peer host:port`: the share as RTP over SRTP to one receiver, kept healthy with its RTCP.
///
/// Video: each VP8 frame is cut into RFC 7741 packets that fit the MTU (SRTP trailer and header
/// extensions included), stored unprotected in the byte-capped `PacketHistory`, protected in
/// place and sent. Audio: one Opus packet per RTP packet (RFC 7587) to its own port. RTCP is
/// muxed on the RTP ports unless `separateRTCPPorts`; a sender report (+ SDES CNAME) goes out
/// about every second per stream, BYE at the end.
///
/// Feedback is read between frames on the pipeline thread (`service`), so nothing here is
/// shared between threads: receiver reports give loss, jitter and RTT; a NACK resends what the
/// history still holds (within the retransmission budget, so a NACK storm cannot make this an
/// amplifier) and asks for a keyframe for what it no longer holds; PLI and FIR ask for a
/// keyframe; REMB and the reports' fraction lost go to the session, which sets the bitrate.
/// Every incoming datagram is untrusted: SRTCP authentication first, then the bounds-checked
/// RTCP parser; anything else is counted and dropped.
///
/// Memory: the history comes from the share's `MemoryBudget`; two packet buffers are taken at
/// start; libsrtp2 allocates its two contexts once. Nothing grows while sending.
public final class PeerSink: MediaSink {
    public let name: String
    public let configuration: PeerConfiguration
    /// RTCP CNAME of both streams (random, so receivers can pair audio and video).
    public let cname: String

    private let videoSocket: UDPSocket
    private let audioSocket: UDPSocket?
    private let videoRTCPSocket: UDPSocket?
    private let audioRTCPSocket: UDPSocket?
    public private(set) var video: RTPStream
    public private(set) var audio: RTPStream?
    public private(set) var rtx: RTXPacketizer?
    private var packetizer = VP8Packetizer()
    private var opusMarkers = OpusMarkerTracker()
    private var history: PacketHistory
    private var retransmissions: RetransmissionBudget
    private var protector: SRTPContext?
    private var unprotector: SRTPContext?
    private let extensionMap: RTPExtensionMap
    private var transportSequence: UInt16
    /// One outgoing packet at a time: MTU plus libsrtp2's tail room.
    private let scratch: UnsafeMutableRawBufferPointer
    /// One incoming datagram at a time (larger than any RTCP a receiver sends).
    private let inbox: UnsafeMutableRawBufferPointer
    private var stats = TransportStats()
    private var nextVideoReport: MediaTime?
    private var nextAudioReport: MediaTime?
    private var keyframeWanted = false
    private var bitrateCeilingKbps: Int?
    private var videoFractionLost: UInt8?

    /// Bytes of the history and its index, from the budget (the planner counts them).
    public static func budgetBytes(_ configuration: PeerConfiguration) -> Int {
        PacketHistory.bytes(capacityBytes: configuration.historyBytes)
    }

    /// What the sink takes outside the budget: its two packet buffers (a few KiB) and, with
    /// SRTP, libsrtp2 and the NSS crypto library Debian builds it on. Measured as the peak-RSS
    /// difference of the same share with and without SRTP: 2.4 MiB (NSS_NoDB_Init loads
    /// softokn and freebl; the two contexts themselves are about 100 KiB).
    public static func heapBytes(_ configuration: PeerConfiguration) -> Int {
        configuration.protection == nil ? 64 << 10 : 5 << 19
    }

    /// Most datagrams read in one `service` call, so a flood cannot starve the pipeline.
    static let maxDatagramsPerService = 64

    public init(configuration: PeerConfiguration, budget: MemoryBudget) throws(ShareError) {
        self.configuration = configuration
        name = "peer \(configuration.videoPeer)"
        var rng = SystemRandomNumberGenerator()
        cname = String((0..<16).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement(using: &rng)! })
        video = RTPStream(payloadType: PeerConfiguration.vp8PayloadType, clockRate: 90_000)
        audio = configuration.sendsAudio
            ? RTPStream(payloadType: PeerConfiguration.opusPayloadType, clockRate: OpusPayload.clockRate) : nil
        rtx = configuration.usesRTX ? RTXPacketizer(payloadType: PeerConfiguration.rtxPayloadType, using: &rng) : nil
        transportSequence = UInt16.random(in: 0...UInt16.max, using: &rng)
        do {
            extensionMap = try RTPExtensionMap(
                absSendTime: PeerConfiguration.absSendTimeID,
                transportSequenceNumber: PeerConfiguration.transportSequenceID,
                videoOrientation: configuration.signalsOrientation ? PeerConfiguration.videoOrientationID : nil)
        } catch {
            throw .invalidConfiguration("header extensions: \(error)")
        }
        do {
            history = try PacketHistory(budget: budget, capacityBytes: configuration.historyBytes)
        } catch {
            throw .doesNotFit("packet history of \(configuration.historyBytes >> 10) KiB: \(error)")
        }
        // Resending at up to half the video rate again, in bursts of a keyframe's worth.
        retransmissions = RetransmissionBudget(bytesPerSecond: 400_000, burstBytes: 256 << 10)
        if let key = configuration.protection {
            do {
                protector = try SRTPContext(key: key, direction: .sender)
                unprotector = try SRTPContext(key: key, direction: .receiver)
            } catch {
                throw .invalidConfiguration("SRTP: \(error)")
            }
        }
        do {
            videoSocket = try UDPSocket(for: configuration.videoPeer)
            audioSocket = configuration.sendsAudio ? try UDPSocket(for: configuration.audioPeer) : nil
            videoRTCPSocket = configuration.separateRTCPPorts ? try UDPSocket(for: configuration.videoPeer) : nil
            audioRTCPSocket = configuration.separateRTCPPorts && configuration.sendsAudio
                ? try UDPSocket(for: configuration.audioPeer) : nil
        } catch {
            throw .output("socket for \(configuration.videoPeer): \(error)")
        }
        scratch = .allocate(byteCount: configuration.mtu + SRTPProfile.requiredTailroom + 64, alignment: 16)
        inbox = .allocate(byteCount: 2048 + SRTPProfile.requiredTailroom, alignment: 16)
    }

    deinit {
        scratch.deallocate()
        inbox.deallocate()
    }

    public var transportStats: TransportStats? { stats }

    private var trailerBytes: Int { protector?.profile.rtpTrailerBytes ?? 0 }

    private func nextTransportSequence() -> UInt16 {
        defer { transportSequence &+= 1 }
        return transportSequence
    }

    // MARK: Sending media

    public func send(video frame: OutgoingVideoFrame) throws(ShareError) {
        let now = MonotonicClock.now()
        let timestamp = video.timestampOffset &+ frame.mediaTimestamp
        var plain = RTPExtensionValues(absSendTime: AbsSendTime.value(microseconds: now.microseconds),
                                       transportSequenceNumber: 0)
        var last = plain
        if configuration.signalsOrientation {
            last.videoOrientation = RTPVideoOrientation(orientation: frame.orientation)
        }
        // Room for the largest header of the frame, the SRTP tag, and RTX's 2-byte OSN on a resend.
        let overhead = video.headerSize(extensions: last, map: extensionMap) + trailerBytes + (rtx == nil ? 0 : 2)
        do {
            let plan = try packetizer.beginFrame(byteCount: frame.bytes.count, maxPayloadSize: configuration.mtu - overhead)
            for index in 0..<plan.packetCount {
                let isLast = plan.isLast(index)
                if isLast { last.transportSequenceNumber = nextTransportSequence() } else {
                    plain.transportSequenceNumber = nextTransportSequence()
                }
                let header = try video.writeHeader(into: scratch, timestamp: timestamp, marker: isLast,
                                                   extensions: isLast ? last : plain, map: extensionMap,
                                                   payloadSize: plan.payloadSize(ofPacket: index))
                let payload = try plan.writePayload(ofPacket: index, frame: frame.bytes,
                                                    into: UnsafeMutableRawBufferPointer(rebasing: scratch[header...]))
                try history.store(UnsafeRawBufferPointer(rebasing: scratch[0..<header + payload]))
                try protectAndSend(length: header + payload, rtcp: false, on: videoSocket, to: configuration.videoPeer)
            }
        } catch {
            throw .pipeline("RTP video: \(error)")
        }
        if nextVideoReport == nil { nextVideoReport = now + .milliseconds(100) }
    }

    public func send(audio packet: OutgoingAudioPacket) throws(ShareError) {
        guard var stream = audio, let socket = audioSocket else { return }
        let now = MonotonicClock.now()
        let timestamp = stream.timestampOffset &+ packet.mediaTimestamp
        let extensions = RTPExtensionValues(absSendTime: AbsSendTime.value(microseconds: now.microseconds),
                                            transportSequenceNumber: nextTransportSequence())
        do {
            let length = try stream.writePacket(
                into: scratch, timestamp: timestamp,
                marker: opusMarkers.marker(timestamp: timestamp, samples: packet.samples),
                extensions: extensions, map: extensionMap, payload: packet.bytes)
            audio = stream
            try protectAndSend(length: length, rtcp: false, on: socket, to: configuration.audioPeer)
        } catch {
            throw .pipeline("RTP audio: \(error)")
        }
        if nextAudioReport == nil { nextAudioReport = now + .milliseconds(100) }
    }

    /// Protects `scratch[0..<length]` in place (unless insecure) and sends it.
    private func protectAndSend(length: Int, rtcp: Bool, on socket: UDPSocket, to peer: SocketAddress) throws(RTPError) {
        var n = length
        if protector != nil {
            n = rtcp ? try protector!.protectRTCP(scratch, length: length) : try protector!.protectRTP(scratch, length: length)
        }
        switch socket.send(UnsafeRawBufferPointer(rebasing: scratch[0..<n]), to: peer) {
        case .sent:
            stats.packetsSent += 1
            stats.bytesSent += UInt64(n)
        case .wouldBlock, .failed:
            // A full send buffer, or an ICMP error from a receiver not yet listening: the
            // packet is lost like any other; NACK or the next keyframe repairs it.
            stats.sendDrops += 1
        }
    }

    // MARK: Feedback and reports

    public func service(at now: MediaTime) throws(ShareError) -> SinkRequests {
        for socket in [videoSocket, audioSocket, videoRTCPSocket, audioRTCPSocket] {
            if let socket { drain(socket, now: now) }
        }
        if let due = nextVideoReport, due <= now {
            sendReport(for: video, bye: false, on: videoRTCPSocket ?? videoSocket, to: rtcpPeer(configuration.videoPeer))
            nextVideoReport = now + Self.reportInterval()
        }
        if let due = nextAudioReport, due <= now, let stream = audio, let socket = audioRTCPSocket ?? audioSocket {
            sendReport(for: stream, bye: false, on: socket, to: rtcpPeer(configuration.audioPeer))
            nextAudioReport = now + Self.reportInterval()
        }
        var requests = SinkRequests(keyframe: keyframeWanted, bitrateCeilingKbps: bitrateCeilingKbps,
                                    videoFractionLost: videoFractionLost)
        keyframeWanted = false
        bitrateCeilingKbps = nil
        videoFractionLost = nil
        requests.nextWakeup = [nextVideoReport, nextAudioReport].compactMap { $0 }.min()
        return requests
    }

    /// RFC 3550 §6.3.5: the interval randomised to 0.5...1.5 of its nominal second, so reports
    /// of many senders do not synchronise.
    static func reportInterval() -> MediaDuration {
        .microseconds(Int64.random(in: 500_000...1_500_000))
    }

    private func rtcpPeer(_ peer: SocketAddress) -> SocketAddress {
        configuration.separateRTCPPorts ? peer.with(port: peer.port + 1) : peer
    }

    private func sendReport(for stream: RTPStream, bye: Bool, on socket: UDPSocket, to peer: SocketAddress) {
        let info = RTCPSenderInfo(
            ssrc: stream.ssrc, ntpTime: NTPTime(unixMicroseconds: WallClock.nowMicroseconds()),
            rtpTimestamp: stream.timestamp(captureMicroseconds: MonotonicClock.now().microseconds),
            packetCount: stream.packetCount, octetCount: stream.octetCount)
        do {
            let n = try RTCPCompoundBuilder.write(RTCPSenderReport(info: info), cname: cname,
                                                  byeReason: bye ? .some(nil) : nil, into: scratch)
            try protectAndSend(length: n, rtcp: true, on: socket, to: peer)
        } catch {
            stats.sendDrops += 1
        }
    }

    /// Reads what is waiting on `socket`: SRTCP from the receiver. RTP or anything else
    /// arriving here is not ours to read and is dropped.
    private func drain(_ socket: UDPSocket, now: MediaTime) {
        for _ in 0..<Self.maxDatagramsPerService {
            guard case .datagram(let count, _) = socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: inbox[0..<2048]))
            else { return }
            // RFC 5761 §4: an RTCP packet type (192...223 in the second byte) tells RTCP from RTP.
            guard count >= 8, (192...223).contains(inbox[1]) else {
                stats.malformedReceived += 1
                continue
            }
            var length = count
            if unprotector != nil {
                do { length = try unprotector!.unprotectRTCP(inbox, length: count) } catch {
                    stats.unauthenticatedReceived += 1
                    continue
                }
            }
            do {
                try RTCPParser.parse(UnsafeRawBufferPointer(rebasing: inbox[0..<length])) { item in
                    handle(item, now: now)
                }
            } catch {
                stats.malformedReceived += 1
            }
        }
    }

    private func handle(_ item: RTCPItem, now: MediaTime) {
        switch item {
        case .reportBlock(_, let block) where block.ssrc == video.ssrc:
            stats.receiverReports += 1
            stats.fractionLost = Double(block.fractionLost) / 256
            videoFractionLost = block.fractionLost
            stats.cumulativeLost = Int(block.cumulativeLost)
            stats.jitterMicroseconds = Int64(block.jitter) * 1_000_000 / 90_000
            if let rtt = block.roundTripMicroseconds(now: NTPTime(unixMicroseconds: WallClock.nowMicroseconds())) {
                stats.roundTripMicroseconds = rtt
            }
        case .nack(_, let media, let entry) where media == video.ssrc:
            entry.forEachLost { sequence in
                stats.nacksReceived += 1
                retransmit(sequence, now: now)
            }
        case .pictureLoss(_, let media) where media == video.ssrc:
            stats.pliReceived += 1
            keyframeWanted = true
        case .fullIntraRequest(_, let entry) where entry.ssrc == video.ssrc:
            stats.firReceived += 1
            keyframeWanted = true
        case .remb(_, let bitrate, _):
            let kbps = Int(min(bitrate / 1000, UInt64(Int32.max)))
            stats.rembKbps = kbps
            bitrateCeilingKbps = kbps
        default:
            break
        }
    }

    /// Resends packet `sequence` (as it was, or wrapped in RTX) if the history holds it and the
    /// budget allows; a packet no longer held costs a keyframe instead.
    private func retransmit(_ sequence: UInt16, now: MediaTime) {
        let outcome: Bool? = history.withPacket(sequence) { (original: UnsafeRawBufferPointer) -> Bool in
            guard retransmissions.allow(bytes: original.count, nowMicroseconds: now.microseconds) else {
                stats.retransmitsOverBudget += 1
                return false
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
                try RTPExtensionValues.rewriteSendElements(
                    packet: scratch, length: length, map: extensionMap,
                    transportSequenceNumber: nextTransportSequence(),
                    absSendTime: AbsSendTime.value(microseconds: now.microseconds))
                try protectAndSend(length: length, rtcp: false, on: videoSocket, to: configuration.videoPeer)
                stats.packetsRetransmitted += 1
                return true
            } catch {
                stats.sendDrops += 1
                return false
            }
        }
        if outcome == nil {
            stats.retransmitsMissed += 1
            keyframeWanted = true
        }
    }

    public func finish(_ reason: FinishReason) throws(ShareError) {
        if video.packetCount > 0 {
            sendReport(for: video, bye: true, on: videoRTCPSocket ?? videoSocket, to: rtcpPeer(configuration.videoPeer))
        }
        if let stream = audio, stream.packetCount > 0, let socket = audioRTCPSocket ?? audioSocket {
            sendReport(for: stream, bye: true, on: socket, to: rtcpPeer(configuration.audioPeer))
        }
    }
}
