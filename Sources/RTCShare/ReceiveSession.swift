import Glibc
import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP
import Synchronization

/// `rtcshare receive`: the built-in receiver, for checking and benchmarking a sender.
///
/// One thread, one run loop over one or two UDP sockets (video, audio; RTCP muxed on each).
/// Every datagram is untrusted: RFC 5761 demux by the second byte (192...223 is RTCP), SRTP or
/// SRTCP unprotect (one master key, as SDES keys both directions), then the bounds-checked
/// parsers. Video: RTX unwrap (when the SDP declares it) → jitter buffer (reorder, wait for
/// retransmissions) → VP8 depacketizer → libvpx → the frame marker → statistics. Audio:
/// jitter buffer → Opus (a lost packet is concealed). Back to the address the media came
/// from: RR + SDES every report interval, NACK for missing packets, PLI when a frame cannot be
/// completed or decoded (then only a keyframe is decoded next).
///
/// Memory: sockets are bound in `init`; `run` takes everything else once at its start (a
/// `MemoryBudget` for the jitter buffers and the Opus decoder, fixed packet and frame
/// buffers); libvpx and libsrtp2 allocate on their own once. Nothing grows per packet.
public final class ReceiveSession: Sendable {
    public let configuration: ReceiveConfiguration
    /// Where the sockets are bound (the real ports when port 0 was asked for).
    public let videoAddress: SocketAddress
    public let audioAddress: SocketAddress?
    private let videoSocket: UDPSocket
    private let audioSocket: UDPSocket?
    /// Port + 1 of each, when RTCP is not muxed.
    private let rtcpSockets: [UDPSocket]
    private let stopRequested = Atomic<Bool>(false)
    /// Wakes the running loop for `stop()` (nil when not running).
    private let waker = Mutex<EventLoopWaker?>(nil)

    /// Binds the sockets; throws `.invalidConfiguration` with one line (port in use, bad
    /// address).
    public init(configuration: ReceiveConfiguration) throws(ShareError) {
        self.configuration = configuration
        do {
            videoSocket = try UDPSocket(bindingTo: configuration.videoListen)
        } catch {
            throw .invalidConfiguration("cannot listen on \(configuration.videoListen): \(error)")
        }
        if let a = configuration.audioListen {
            do {
                audioSocket = try UDPSocket(bindingTo: a)
            } catch {
                throw .invalidConfiguration("cannot listen on \(a) for audio: \(error)")
            }
        } else {
            audioSocket = nil
        }
        videoAddress = videoSocket.localAddress
        audioAddress = audioSocket?.localAddress
        var rtcp: [UDPSocket] = []
        if !configuration.rtcpMux {
            for a in [videoSocket.localAddress, audioSocket?.localAddress] {
                guard let a, a.port < 65_535 else { continue }
                do { rtcp.append(try UDPSocket(bindingTo: a.with(port: a.port + 1))) } catch {
                    throw .invalidConfiguration("cannot listen on \(a.with(port: a.port + 1)) for RTCP: \(error)")
                }
            }
        }
        rtcpSockets = rtcp
    }

    /// Asks `run` to stop; safe from any thread. A stop asked for before `run` makes it return
    /// at once.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        waker.withLock { $0?.wake() }
    }

    public var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    /// Receives until the duration passes, nothing arrived for the idle timeout (after something
    /// did), the sender said BYE, or `stop()`; returns what was seen. Throws only for failures
    /// before anything was received (budget, SRTP, decoder, output files). `onNotice` gets
    /// occasional one-line notices (first packet, keyframe requests).
    public func run(onNotice: (String) -> Void = { _ in }) throws(ShareError) -> ReceiveReport {
        let loop = try ReceiveLoop(configuration: configuration, video: videoSocket, audio: audioSocket,
                                   rtcp: rtcpSockets)
        let events: EventLoop
        do {
            events = try EventLoop()
            for socket in [videoSocket, audioSocket].compactMap({ $0 }) + rtcpSockets {
                try events.watch(socket.descriptor, token: Int(socket.descriptor))
            }
        } catch {
            throw .output("event loop: \(error)")
        }
        waker.withLock { $0 = events.waker }
        defer { waker.withLock { $0 = nil } }
        return loop.run(events: events, stopRequested: { self.isStopRequested }, onNotice: onNotice)
    }
}

/// The state of one `run`: everything allocated once at its start.
final class ReceiveLoop {
    /// Where a stream's RTCP goes back: the socket it came in on and the address it came from.
    struct Peer {
        var socket: Int
        var address: SocketAddress
    }

    static let datagramBytes = 2048
    static let maxDatagramsPerWake = 64
    static let maxNackNumbers = 128
    /// libsrtp2's srtp_err_status_replay_fail and srtp_err_status_replay_old.
    static let srtpReplayFail: Int32 = 9
    static let srtpReplayOld: Int32 = 10

    let configuration: ReceiveConfiguration
    let sockets: [UDPSocket]
    let budget: MemoryBudget
    var videoJitter: JitterBuffer
    var audioJitter: JitterBuffer
    var unprotector: SRTPContext?
    var protector: SRTPContext?
    let decoder: VP8Decoder
    let opus: OpusDecoder
    var depacketizer = VP8Depacketizer()
    var nack: NackGenerator
    var keyframes = KeyframeRequestLimiter()
    var markers: FrameMarkerStatistics
    var videoStats: ReceiveStatistics?
    var audioStats: ReceiveStatistics?
    var videoSSRC: UInt32?
    var audioSSRC: UInt32?
    var videoPeer: Peer?
    var audioPeer: Peer?
    let ssrc: UInt32
    let cname: String
    var report = ReceiveReport()
    var waitingForKeyframe = true
    /// The newest VP8 PictureID (15 bits) assembled; gaps after it are frames lost.
    var lastPictureID: UInt16?
    var pictureIDGaps: UInt64 = 0
    var smoothedRTT: Int64?
    var y4m: Y4MFileWriter?
    var wav: WAVFileWriter?
    var outputError: ShareError?

    // Fixed buffers.
    let inbox: UnsafeMutableRawBufferPointer
    let unwrapped: UnsafeMutableRawBufferPointer
    let frame: UnsafeMutableRawBufferPointer
    let outbox: UnsafeMutableRawBufferPointer
    let pcm: UnsafeMutableBufferPointer<Int16>
    let nackNumbers: UnsafeMutableBufferPointer<UInt16>
    let nackEntries: UnsafeMutableBufferPointer<RTCPNackEntry>

    init(configuration c: ReceiveConfiguration, video: UDPSocket, audio: UDPSocket?,
         rtcp: [UDPSocket]) throws(ShareError) {
        configuration = c
        sockets = (audio.map { [video, $0] } ?? [video]) + rtcp
        let slot = Self.datagramBytes
        let jitterBytes = JitterBuffer.bytes(capacity: c.videoJitterPackets, slotBytes: slot)
            + JitterBuffer.bytes(capacity: c.audioJitterPackets, slotBytes: slot)
        do {
            budget = try MemoryBudget(capBytes: jitterBytes + (256 << 10))
            videoJitter = try JitterBuffer(budget: budget, capacity: c.videoJitterPackets, slotBytes: slot,
                                           waitMicroseconds: c.minimumJitterWaitMicroseconds)
            audioJitter = try JitterBuffer(budget: budget, capacity: c.audioJitterPackets, slotBytes: slot,
                                           waitMicroseconds: c.minimumJitterWaitMicroseconds)
        } catch {
            throw .doesNotFit("receive buffers: \(error)")
        }
        if let key = c.protection {
            do {
                unprotector = try SRTPContext(key: key, direction: .receiver)
                protector = try SRTPContext(key: key, direction: .sender)
            } catch {
                throw .invalidConfiguration("srtp: \(error)")
            }
        } else {
            unprotector = nil
            protector = nil
        }
        do {
            decoder = try VP8Decoder()
            opus = try OpusDecoder(budget: budget, channels: c.audioChannels)
        } catch {
            throw .pipeline("decoder: \(error)")
        }
        nack = NackGenerator(configuration: c.nack)
        markers = FrameMarkerStatistics(freezeThresholdMicroseconds: c.freezeThresholdMicroseconds)
        videoSSRC = c.videoSSRC
        audioSSRC = c.audioSSRC
        var rng = SystemRandomNumberGenerator()
        ssrc = UInt32.random(in: 1...UInt32.max, using: &rng)
        cname = "rx-" + String((0..<12).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement(using: &rng)! })

        inbox = .allocate(byteCount: slot + SRTPProfile.requiredTailroom, alignment: 16)
        unwrapped = .allocate(byteCount: slot, alignment: 16)
        frame = .allocate(byteCount: max(c.maxFrameBytes, 4096), alignment: 16)
        outbox = .allocate(byteCount: 1500 + SRTPProfile.requiredTailroom, alignment: 16)
        pcm = .allocate(capacity: OpusDecoder.maximumFrameSamples * 2)
        nackNumbers = .allocate(capacity: Self.maxNackNumbers)
        nackEntries = .allocate(capacity: Self.maxNackNumbers)
        nackEntries.initialize(repeating: RTCPNackEntry(pid: 0, blp: 0))

        y4m = try c.y4mPath.map { p throws(ShareError) in try Y4MFileWriter(path: p, frameRate: c.y4mFramesPerSecond) }
        wav = try c.audioOutputPath.map { p throws(ShareError) in try WAVFileWriter(path: p, channels: c.audioChannels) }
    }

    deinit {
        inbox.deallocate()
        unwrapped.deallocate()
        frame.deallocate()
        outbox.deallocate()
        pcm.deallocate()
        nackNumbers.deallocate()
        nackEntries.deallocate()
    }

    // MARK: the loop

    func run(events: EventLoop, stopRequested: () -> Bool, onNotice: (String) -> Void) -> ReceiveReport {
        let start = MonotonicClock.now().microseconds
        let end = configuration.durationMicroseconds.map { start + $0 }
        var lastArrival: Int64? = nil
        var byeDeadline: Int64? = nil
        var nextReport = start + configuration.reportIntervalMicroseconds

        while true {
            var now = MonotonicClock.now().microseconds
            if stopRequested() { report.stopReason = "stopped"; break }
            if let end, now >= end { report.stopReason = "duration"; break }
            if let last = lastArrival, now - last >= configuration.idleTimeoutMicroseconds {
                report.stopReason = "idle"
                break
            }
            if let bye = byeDeadline, now >= bye { report.stopReason = "bye"; break }

            // Wait for a datagram, a stop request or the earliest timer.
            var wake = nextReport
            func earliest(_ d: Int64?) { if let d { wake = min(wake, d) } }
            earliest(videoJitter.nextDeadline)
            earliest(audioJitter.nextDeadline)
            earliest(nack.nextDeadline)
            earliest(videoPeer == nil ? nil : keyframes.nextDeadline)
            earliest(end)
            earliest(byeDeadline)
            earliest(lastArrival.map { $0 + configuration.idleTimeoutMicroseconds })
            events.wait(until: MediaTime(microseconds: wake))

            for s in sockets.indices {
                for _ in 0..<Self.maxDatagramsPerWake {
                    let result = sockets[s].receive(into: UnsafeMutableRawBufferPointer(rebasing: inbox[0..<Self.datagramBytes]))
                    guard case .datagram(let count, let from) = result else { break }
                    now = MonotonicClock.now().microseconds
                    if lastArrival == nil { onNotice("receiving from \(from)") }
                    lastArrival = now
                    if handleDatagram(count: count, socket: s, from: from, now: now) && byeDeadline == nil {
                        byeDeadline = now + 300_000
                    }
                }
            }
            now = MonotonicClock.now().microseconds
            drainVideo(now: now)
            drainAudio(now: now)
            sendFeedback(now: now, onNotice: onNotice)
            if now >= nextReport {
                sendReports(now: now)
                nextReport = now + configuration.reportIntervalMicroseconds
            }
        }
        // Whatever is still held goes out (holes as lost) so the counts are final.
        let flush = Int64.max / 4
        drainVideo(now: flush)
        drainAudio(now: flush)
        return finish(elapsed: MonotonicClock.now().microseconds - start)
    }

    // MARK: datagrams

    /// Handles one datagram in `inbox`; returns true when it was an RTCP BYE from the sender.
    func handleDatagram(count: Int, socket: Int, from: SocketAddress, now: Int64) -> Bool {
        guard count >= 2 else {
            report.malformed += 1
            return false
        }
        let buffer = UnsafeMutableRawBufferPointer(rebasing: inbox[0..<(count + SRTPProfile.requiredTailroom)])
        if (192...223).contains(inbox[1]) {
            return handleRTCP(buffer, count: count, now: now)
        }
        var length = count
        if unprotector != nil {
            do {
                length = try unprotector!.unprotectRTP(buffer, length: count)
            } catch {
                // A replayed packet (a second retransmission of one already received) is a
                // duplicate; anything else failed authentication.
                if case .srtp(_, let status) = error,
                   status == Self.srtpReplayFail || status == Self.srtpReplayOld {
                    report.packetsDuplicate += 1
                } else {
                    report.srtpFailures += 1
                }
                return false
            }
        }
        let packet = UnsafeRawBufferPointer(rebasing: inbox[0..<length])
        let parsed: RTPParsedPacket
        do { parsed = try RTPHeader.parse(packet) } catch {
            report.malformed += 1
            return false
        }
        let pt = parsed.header.payloadType
        if pt == configuration.videoPayloadType {
            if videoPeer == nil || videoPeer!.socket == socket { videoPeer = Peer(socket: socket, address: from) }
            handleVideo(packet, parsed, isRetransmission: false, now: now)
        } else if let rtx = configuration.rtxPayloadType, pt == rtx {
            guard let media = videoSSRC else { return false }  // nothing to restore it to yet
            do {
                let n = try RTXPacketizer.unwrap(rtx: packet, originalSSRC: media,
                                                 originalPayloadType: configuration.videoPayloadType,
                                                 into: unwrapped)
                let original = UnsafeRawBufferPointer(rebasing: unwrapped[0..<n])
                let p = try RTPHeader.parse(original)
                handleVideo(original, p, isRetransmission: true, now: now)
            } catch {
                // Padding-only RTX (probing) carries no packet; not an error worth more.
                report.malformed += 1
            }
        } else if pt == configuration.audioPayloadType {
            if audioPeer == nil || audioPeer!.socket == socket { audioPeer = Peer(socket: socket, address: from) }
            handleAudio(packet, parsed, now: now)
        } else {
            report.malformed += 1
        }
        return false
    }

    func handleVideo(_ packet: UnsafeRawBufferPointer, _ parsed: RTPParsedPacket, isRetransmission: Bool, now: Int64) {
        let h = parsed.header
        if videoSSRC == nil { videoSSRC = h.ssrc }
        guard h.ssrc == videoSSRC else {
            report.malformed += 1
            return
        }
        if videoStats == nil { videoStats = ReceiveStatistics(ssrc: h.ssrc, clockRate: 90_000) }
        report.packets += 1
        report.bytes += UInt64(packet.count)
        let sinceNack = nack.packetReceived(sequenceNumber: h.sequenceNumber, now: now)
        // A repair (RTX, or a plain resend answering a NACK) does not count as received, so the
        // reports carry the loss before repair: the sender's rate control needs the path's loss.
        videoStats!.received(sequenceNumber: h.sequenceNumber, rtpTimestamp: h.timestamp, arrival: now,
                             isRetransmission: isRetransmission || sinceNack != nil)
        if let sinceNack {
            // A NACK's answer: the round trip (plus the sender's turnaround) sets the wait.
            smoothedRTT = smoothedRTT.map { ($0 * 7 + sinceNack) / 8 } ?? sinceNack
            let wait = min(max(2 * (smoothedRTT ?? 0), configuration.minimumJitterWaitMicroseconds),
                           configuration.maximumJitterWaitMicroseconds)
            videoJitter.waitMicroseconds = wait
        }
        switch videoJitter.insert(packet, sequenceNumber: h.sequenceNumber, now: now) {
        case .stored: break
        case .duplicate: report.packetsDuplicate += 1
        case .late: report.packetsLate += 1
        case .tooLarge, .overflow: report.malformed += 1
        }
    }

    func handleAudio(_ packet: UnsafeRawBufferPointer, _ parsed: RTPParsedPacket, now: Int64) {
        let h = parsed.header
        if audioSSRC == nil { audioSSRC = h.ssrc }
        guard h.ssrc == audioSSRC else { return }
        if audioStats == nil { audioStats = ReceiveStatistics(ssrc: h.ssrc, clockRate: OpusPayload.clockRate) }
        audioStats!.received(sequenceNumber: h.sequenceNumber, rtpTimestamp: h.timestamp, arrival: now)
        report.audioPackets += 1
        _ = audioJitter.insert(packet, sequenceNumber: h.sequenceNumber, now: now)
    }

    // MARK: video and audio out of the jitter buffers

    func drainVideo(now: Int64) {
        while let out = videoJitter.pop(now: now) {
            switch out {
            case .lost(let seq):
                nack.abandon(sequenceNumber: seq)
                report.packetsLost += 1
            case .packet:
                let result = videoJitter.withPacket(out) { bytes in depacketizer.push(packet: bytes, into: frame) }
                guard let result else { continue }
                if result.dropped != nil {
                    waitingForKeyframe = true
                    keyframes.request()
                }
                if let f = result.frame {
                    notePictureID(f.pictureID)
                    decode(f, now: now)
                }
            }
        }
    }

    /// PictureIDs go up by one per encoded frame (mod 2^15): a jump forward means frames that
    /// were given up or never arrived; an older ID (late, duplicate) changes nothing.
    func notePictureID(_ id: UInt16?) {
        guard let id else { return }
        if let last = lastPictureID {
            let ahead = (id &- last) & 0x7FFF
            guard ahead != 0 && ahead < 0x4000 else { return }
            pictureIDGaps += UInt64(ahead - 1)
        }
        lastPictureID = id
    }

    func decode(_ f: VP8AssembledFrame, now: Int64) {
        if f.isKeyframe {
            report.keyframes += 1
            waitingForKeyframe = false
            keyframes.keyframeReceived()
        } else if waitingForKeyframe {
            report.framesUndecodable += 1
            keyframes.request()
            return
        }
        do {
            _ = try decoder.decode(UnsafeRawBufferPointer(rebasing: frame[0..<f.byteCount])) { picture throws(MediaError) in
                let y = picture.plane(0)
                let marker = FrameMarker.read(luma: y.base, stride: y.stride, width: y.width, rows: y.rows)
                // Timed when decoded (not `now`, which is a flush time at the end).
                markers.frameDecoded(marker: marker, now: MonotonicClock.now().microseconds)
                report.width = picture.width
                report.height = picture.height
                if let y4m, outputError == nil {
                    do throws(ShareError) { try y4m.append(width: picture.width, height: picture.height, plane: picture.plane) } catch {
                        outputError = error
                    }
                }
            }
        } catch {
            report.framesUndecodable += 1
            waitingForKeyframe = true
            keyframes.request()
        }
    }

    func drainAudio(now: Int64) {
        while let out = audioJitter.pop(now: now) {
            var samples = 0
            switch out {
            case .lost:
                samples = (try? opus.decode(nil, into: pcm)) ?? 0
                report.audioConcealed += 1
            case .packet:
                let decoded: Int?? = audioJitter.withPacket(out) { bytes in
                    guard let parsed = try? RTPHeader.parse(bytes) else { return nil }
                    return try? opus.decode(UnsafeRawBufferPointer(rebasing: bytes[parsed.payloadRange]), into: pcm)
                }
                if let n = decoded ?? nil {
                    samples = n
                    report.audioDecoded += 1
                } else {
                    samples = (try? opus.decode(nil, into: pcm)) ?? 0
                    report.audioConcealed += 1
                }
            }
            if let wav, outputError == nil, samples > 0 {
                do { try wav.append(UnsafeBufferPointer(rebasing: pcm[0..<(samples * opus.channels)])) } catch {
                    outputError = error
                }
            }
        }
    }

    // MARK: RTCP in

    func handleRTCP(_ buffer: UnsafeMutableRawBufferPointer, count: Int, now: Int64) -> Bool {
        var length = count
        if unprotector != nil {
            do { length = try unprotector!.unprotectRTCP(buffer, length: count) } catch {
                report.srtpFailures += 1
                return false
            }
        }
        report.rtcpReceived += 1
        var bye = false
        do {
            try RTCPParser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<length])) { item in
                switch item {
                case .senderReport(let info):
                    report.sendersReportsReceived += 1
                    if info.ssrc == videoSSRC { videoStats?.senderReportReceived(ntpTime: info.ntpTime, arrival: now) }
                    if info.ssrc == audioSSRC { audioStats?.senderReportReceived(ntpTime: info.ntpTime, arrival: now) }
                case .goodbye(let s, _):
                    if s == videoSSRC {
                        report.byeReceived = true
                        bye = true
                    }
                default:
                    break
                }
            }
        } catch {
            report.malformed += 1
        }
        return bye
    }

    // MARK: RTCP out

    func sendFeedback(now: Int64, onNotice: (String) -> Void) {
        guard let peer = videoPeer, let media = videoSSRC else { return }
        let n = nack.collectDue(now: now, roundTripMicroseconds: smoothedRTT, into: nackNumbers)
        if n > 0 {
            let m = RTCPNackEntry.minimalEntries(lost: UnsafeMutableBufferPointer(rebasing: nackNumbers[0..<n]),
                                                 into: nackEntries)
            let fb = RTCPGenericNack(sender: ssrc, media: media, entries: Array(nackEntries[0..<m]))
            if send(feedback: fb, to: peer) { report.nackPackets += 1 }
        }
        if nack.takeKeyframeRequest() { keyframes.request() }
        if keyframes.takeDue(now: now) {
            if send(feedback: RTCPPictureLossIndication(sender: ssrc, media: media), to: peer) {
                report.plis += 1
                if report.plis <= 3 { onNotice("asked for a keyframe (PLI)") }
            }
        }
    }

    /// RR (no blocks) + SDES + one feedback packet, as one compound (RFC 4585 §3.1).
    @discardableResult
    func send(feedback: some RTCPWritable, to peer: Peer) -> Bool {
        var n = 0
        do {
            n += try RTCPReceiverReport(ssrc: ssrc).write(into: outbox, at: n)
            n += try RTCPSourceDescription(ssrc: ssrc, cname: cname).write(into: outbox, at: n)
            n += try feedback.write(into: outbox, at: n)
        } catch {
            return false
        }
        return transmit(length: n, to: peer)
    }

    func sendReports(now: Int64) {
        if let peer = videoPeer, let block = videoStats?.makeReportBlock(now: now) {
            sendReport(block, to: peer)
        }
        if let peer = audioPeer, let block = audioStats?.makeReportBlock(now: now) {
            sendReport(block, to: peer)
        }
    }

    func sendReport(_ block: RTCPReportBlock, to peer: Peer) {
        var n = 0
        do {
            n += try RTCPReceiverReport(ssrc: ssrc, reportBlocks: [block]).write(into: outbox, at: n)
            n += try RTCPSourceDescription(ssrc: ssrc, cname: cname).write(into: outbox, at: n)
        } catch {
            return
        }
        transmit(length: n, to: peer)
    }

    @discardableResult
    func transmit(length: Int, to peer: Peer) -> Bool {
        var n = length
        if protector != nil {
            do { n = try protector!.protectRTCP(outbox, length: length) } catch { return false }
        }
        return sockets[peer.socket].send(UnsafeRawBufferPointer(rebasing: outbox[0..<n]), to: peer.address) == .sent
    }

    // MARK: the end

    func finish(elapsed: Int64) -> ReceiveReport {
        var r = report
        r.elapsedMicroseconds = elapsed
        r.frames = markers.frames
        r.framesLost = pictureIDGaps + report.framesUndecodable
        r.framesSkipped = markers.skipped
        r.framesRepeated = markers.repeated
        r.framesOutOfOrder = markers.outOfOrder
        r.markersUnreadable = markers.unreadable
        r.freezes = markers.freezes
        r.freezeMicroseconds = markers.freezeMicroseconds
        r.latencyP50Microseconds = markers.latency.percentile(50)
        r.latencyP99Microseconds = markers.latency.percentile(99)
        r.latencyMaxMicroseconds = markers.latency.count > 0 ? markers.latency.maximumMicroseconds : nil
        r.framesIncomplete = depacketizer.framesDropped
        r.packetsNacked = nack.counters.nacked
        r.packetsRecovered = nack.counters.recovered
        r.jitterMicroseconds = videoStats?.jitterMicroseconds ?? 0
        if let y4m {
            r.y4mSkippedFrames = y4m.skipped
            do { try y4m.close() } catch { outputError = outputError ?? error }
        }
        if let wav {
            do { try wav.close() } catch { outputError = outputError ?? error }
        }
        r.outputError = outputError?.description
        return r
    }
}
