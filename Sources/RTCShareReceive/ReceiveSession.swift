import Glibc
import RTCShare
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

/// The state of one `run`: the receive core (`RTPReceiver`) and what sits at its edges — the
/// sockets, the decoders, the frame-marker statistics and the output files — all made once at
/// its start.
final class ReceiveLoop: RTPReceiverOutput {
    /// Where a stream's RTCP goes back: the socket it came in on and the address it came from.
    struct Peer {
        var socket: Int
        var address: SocketAddress
    }

    static let maxDatagramsPerWake = 64
    /// Failed authentications, with nothing decrypted, before the receiver warns of a wrong key.
    static let failuresBeforeKeyWarning: UInt64 = 20

    let configuration: ReceiveConfiguration
    let sockets: [UDPSocket]
    let budget: MemoryBudget
    let core: RTPReceiver
    let decoder: VideoDecoder
    let opus: OpusDecoder
    var markers: FrameMarkerStatistics
    var videoPeer: Peer?
    var audioPeer: Peer?
    var report = ReceiveReport()
    var y4m: Y4MFileWriter?
    var wav: WAVFileWriter?
    var outputError: ShareError?
    var warnedAboutKey = false
    /// An audio packet was lost and waits for the next one's FEC.
    var audioLossPending = false

    // Fixed buffers.
    let inbox: UnsafeMutableRawBufferPointer
    let pcm: UnsafeMutableBufferPointer<Int16>

    init(configuration c: ReceiveConfiguration, video: UDPSocket, audio: UDPSocket?,
         rtcp: [UDPSocket]) throws(ShareError) {
        configuration = c
        sockets = (audio.map { [video, $0] } ?? [video]) + rtcp
        let wire = c.transport
        do {
            budget = try MemoryBudget(capBytes: wire.budgetBytes + (256 << 10))
        } catch {
            throw .doesNotFit("receive buffers: \(error)")
        }
        do {
            core = try RTPReceiver(configuration: wire, budget: budget, random: SystemRandomNumberGenerator())
        } catch .outOfMemory(let m) {
            throw .doesNotFit(m)
        } catch {
            throw .invalidConfiguration("srtp: \(error)")
        }
        do {
            decoder = try VideoDecoder(codec: c.videoCodec)
            opus = try OpusDecoder(budget: budget, channels: c.audioChannels)
        } catch {
            throw .pipeline("decoder: \(error)")
        }
        markers = FrameMarkerStatistics(freezeThresholdMicroseconds: c.freezeThresholdMicroseconds,
                                        settleMicroseconds: c.settleMicroseconds)
        inbox = .allocate(byteCount: RTPReceiverConfiguration.datagramBytes + SRTPProfile.requiredTailroom, alignment: 16)
        pcm = .allocate(capacity: OpusDecoder.maximumFrameSamples * 2)

        y4m = try c.y4mPath.map { p throws(ShareError) in try Y4MFileWriter(path: p, frameRate: c.y4mFramesPerSecond) }
        wav = try c.audioOutputPath.map { p throws(ShareError) in try WAVFileWriter(path: p, channels: c.audioChannels) }
    }

    deinit {
        inbox.deallocate()
        pcm.deallocate()
    }

    // MARK: the loop

    func run(events: EventLoop, stopRequested: () -> Bool, onNotice: (String) -> Void) -> ReceiveReport {
        let start = MonotonicClock.now().microseconds
        let end = configuration.durationMicroseconds.map { start + $0 }
        var lastArrival: Int64? = nil
        var byeDeadline: Int64? = nil

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
            var wake = Int64.max
            func earliest(_ d: Int64?) { if let d { wake = min(wake, d) } }
            earliest(core.nextDeadline?.microseconds)
            earliest(end)
            earliest(byeDeadline)
            earliest(lastArrival.map { $0 + configuration.idleTimeoutMicroseconds })
            events.wait(until: wake == Int64.max ? nil : MediaTime(microseconds: wake))

            for s in sockets.indices {
                for _ in 0..<Self.maxDatagramsPerWake {
                    let result = sockets[s].receive(into: UnsafeMutableRawBufferPointer(
                        rebasing: inbox[0..<RTPReceiverConfiguration.datagramBytes]))
                    guard case .datagram(let count, let from) = result else { break }
                    now = MonotonicClock.now().microseconds
                    if lastArrival == nil { onNotice("receiving from \(from)") }
                    lastArrival = now
                    switch core.receive(datagram: inbox, count: count, at: MediaTime(microseconds: now)) {
                    case .video:
                        if videoPeer == nil || videoPeer!.socket == s { videoPeer = Peer(socket: s, address: from) }
                    case .audio:
                        if audioPeer == nil || audioPeer!.socket == s { audioPeer = Peer(socket: s, address: from) }
                    case .control(let goodbye):
                        if goodbye && byeDeadline == nil { byeDeadline = now + 300_000 }
                    case .dropped:
                        break
                    }
                }
            }
            let s = core.stats
            if !warnedAboutKey && s.srtpFailures >= Self.failuresBeforeKeyWarning
                && s.packets + s.audioPackets + s.rtcpReceived == 0 {
                warnedAboutKey = true
                onNotice("\(s.srtpFailures) packets failed SRTP authentication and none decrypted yet: "
                         + "is --srtp-key (and --srtp-profile) the sender's?")
            }
            let plis = core.stats.plis
            core.poll(at: MonotonicClock.now(), output: self)
            if core.stats.plis > plis && core.stats.plis <= 3 { onNotice("asked for a keyframe (PLI)") }
        }
        // Whatever is still held goes out (holes as lost) so the counts are final.
        core.drain(at: MediaTime(microseconds: Int64.max / 4), output: self)
        // Unless the sender already said goodbye, tell it this end has gone.
        if report.stopReason != "bye" { core.finish(at: MonotonicClock.now(), output: self) }
        if audioLossPending { concealAudio() }
        return finish(elapsed: MonotonicClock.now().microseconds - start)
    }

    // MARK: the core's output

    func transmit(_ datagram: UnsafeRawBufferPointer, route: RTPRoute) {
        let peer = route == .audioRTCP || route == .audioRTP ? audioPeer : videoPeer
        guard let peer else { return }
        _ = sockets[peer.socket].send(datagram, to: peer.address)
    }

    func videoFrame(_ frame: ReceivedVideoFrame, bytes: UnsafeRawBufferPointer) {
        do {
            let decoded: Void? = try decoder.decode(bytes) { picture throws(MediaError) in
                let y = picture.plane(0)
                let marker = FrameMarker.read(luma: y.base, stride: y.stride, width: y.width, rows: y.rows)
                // Timed when decoded (not the poll time, which is a flush time at the end).
                markers.frameDecoded(marker: marker, now: MonotonicClock.now().microseconds)
                report.width = picture.width
                report.height = picture.height
                if let y4m, outputError == nil {
                    do throws(ShareError) { try y4m.append(width: picture.width, height: picture.height, plane: picture.plane) } catch {
                        outputError = error
                    }
                }
            }
            if decoded == nil, configuration.videoCodec == .vp8, VP8FrameTag.isShown(bytes) == false { report.framesHidden += 1 }
        } catch {
            core.decodeFailed()
        }
    }

    /// A lost audio packet waits for the next one: when that carries in-band FEC (LBRR) the
    /// loss is rebuilt from it, otherwise concealed. Two losses in a row: the first is concealed.
    func audioPacket(_ payload: UnsafeRawBufferPointer?) {
        guard let payload else {
            if audioLossPending { concealAudio() }
            audioLossPending = true
            return
        }
        if audioLossPending {
            audioLossPending = false
            if let n = opus.decodeRedundancy(in: payload, samples: 960, into: pcm) {
                report.audioRecoveredByFEC += 1
                writeAudio(n)
            } else {
                concealAudio()
            }
        }
        if let n = try? opus.decode(payload, into: pcm) {
            report.audioDecoded += 1
            writeAudio(n)
        } else {
            concealAudio()
        }
    }

    /// A lost 20 ms of audio, concealed (Opus PLC).
    func concealAudio() {
        report.audioConcealed += 1
        writeAudio((try? opus.decode(nil, into: pcm)) ?? 0)
    }

    private func writeAudio(_ samples: Int) {
        if let wav, outputError == nil, samples > 0 {
            do { try wav.append(UnsafeBufferPointer(rebasing: pcm[0..<(samples * opus.channels)])) } catch {
                outputError = error
            }
        }
    }

    // MARK: the end

    func finish(elapsed: Int64) -> ReceiveReport {
        var r = report
        let s = core.stats
        r.elapsedMicroseconds = elapsed
        r.frames = markers.frames
        // VP8: PictureID gaps count the frames never assembled; H.264 has no such number, so
        // the access units the depacketizer gave up stand for them.
        r.framesLost = (configuration.videoCodec == .vp8 ? s.pictureIDGaps : core.framesIncomplete) + s.framesUndecodable
        r.framesSkipped = markers.skipped
        r.framesRepeated = markers.repeated
        r.framesOutOfOrder = markers.outOfOrder
        r.markersUnreadable = markers.unreadable
        r.freezes = markers.freezes
        r.freezeMicroseconds = markers.freezeMicroseconds
        r.longestFreezeMicroseconds = markers.longestGapMicroseconds
        r.settleMicroseconds = markers.settleMicroseconds
        r.longestFreezeAfterSettleMicroseconds = markers.longestGapAfterSettleMicroseconds
        r.freezesAfterSettle = markers.freezesAfterSettle
        r.latencyP50Microseconds = markers.latency.percentile(50)
        r.latencyP99Microseconds = markers.latency.percentile(99)
        r.latencyMaxMicroseconds = markers.latency.count > 0 ? markers.latency.maximumMicroseconds : nil
        r.framesUndecodable = s.framesUndecodable
        r.framesIncomplete = core.framesIncomplete
        r.keyframes = s.keyframes
        r.packets = s.packets
        r.packetsLost = s.packetsLost
        r.packetsNacked = core.nackCounters.nacked
        r.packetsRecovered = core.nackCounters.recovered
        r.packetsDuplicate = s.packetsDuplicate
        r.packetsLate = s.packetsLate
        r.nackPackets = s.nackPackets
        r.plis = s.plis
        r.bytes = s.bytes
        r.bytesRetransmitted = s.bytesRepaired
        r.nackRoundTripMicroseconds = core.recovery.smoothedRoundTripMicroseconds
        r.nackRoundTripVariationMicroseconds = core.recovery.samples > 0 ? core.recovery.roundTripVariationMicroseconds : nil
        let n = core.nackCounters
        r.packetsInferredMissing = n.inferred
        r.inferredUnasked = n.inferredUnasked
        r.unfinishedFrames = s.unfinishedFrames
        r.inferredDropped = n.inferredDropped
        let missing = n.missing > n.reordered ? n.missing - n.reordered : 0
        r.bytesLostEstimate = s.packets > 0 ? missing * (s.bytes / s.packets) : 0
        r.jitterMicroseconds = core.videoJitterMicroseconds
        r.audioPackets = s.audioPackets
        r.srtpFailures = s.srtpFailures
        r.malformed = s.malformed
        r.rtcpReceived = s.rtcpReceived
        r.sendersReportsReceived = s.senderReportsReceived
        r.byeReceived = s.byeReceived
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
