import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP

/// Where a share's media goes and what comes back: its sinks (files, a peer, a WebRTC
/// connection) and its audio path, on the pipeline thread. It hands media out in order, services
/// the transports, and passes what they ask for to the pipeline's policy — it decides nothing.
final class ShareOutputs {
    let sinks: [any MediaSink]
    let audio: (any AudioPath)?
    private let onEvent: @Sendable (ShareEvent) -> Void
    private var finished = false
    /// The loop watching the sinks' descriptors, what it watches, and the generation of each
    /// sink's list it last read.
    private var loop: EventLoop?
    private var watched: [Int32] = []
    private var generations: [Int] = []

    init(sinks: [any MediaSink], audio: (any AudioPath)?, onEvent: @escaping @Sendable (ShareEvent) -> Void) {
        self.sinks = sinks
        self.audio = audio
        self.onEvent = onEvent
    }

    deinit {
        // A failure before the loop still closes what was opened.
        if !finished { for sink in sinks { try? sink.finish(.failed(.pipeline("not started"))) } }
    }

    /// Whether a video frame sent now reaches anyone (not while every connection is being made).
    var acceptVideo: Bool { sinks.isEmpty || sinks.contains(where: { $0.acceptsVideo }) }

    /// The first output with transport figures (a peer), if any.
    var transportStats: TransportStats? { sinks.lazy.compactMap { $0.transportStats }.first }

    func send(video frame: OutgoingVideoFrame) throws(ShareError) {
        for sink in sinks { try sink.send(video: frame) }
    }

    func setMaximumBitrate(kbps: Int, at now: MediaTime) {
        for sink in sinks { sink.maximumBitrateChanged(kbps: kbps, at: now) }
    }

    /// An event loop watching every sink's sockets (feedback wakes the pipeline).
    func makeEventLoop() throws(ShareError) -> EventLoop {
        do {
            let loop = try EventLoop()
            self.loop = loop
            try watchDescriptors()
            return loop
        } catch {
            throw .output("event loop: \(error)")
        }
    }

    /// Watches what the sinks list now. Everything is unwatched first: a descriptor closed since
    /// (epoll forgot it) may have come back under the same number.
    private func watchDescriptors() throws(SocketError) {
        guard let loop else { return }
        generations = sinks.map(\.descriptorGeneration)
        for fd in watched { loop.unwatch(fd) }
        watched = sinks.flatMap(\.descriptors)
        for fd in watched { try loop.watch(fd, token: Int(fd)) }
    }

    /// A watched descriptor was readable: the sinks hear which.
    func ready(descriptor: Int32) {
        for sink in sinks { sink.descriptorReady(descriptor) }
    }

    /// Encodes the audio due by `now` and sends it (let go of while paused), counted in the
    /// pipeline's stats.
    func pumpAudio(at now: MediaTime, pipeline: inout SharePipelineStateMachine) throws(ShareError) {
        guard let audio else { return }
        let paused = pipeline.isPaused
        var sent = (packets: 0, bytes: 0)
        try audio.pump(at: now) { (packet: OutgoingAudioPacket) throws(ShareError) in
            guard !paused else { return }
            sent.packets += 1
            sent.bytes += packet.bytes.count
            for sink in sinks { try sink.send(audio: packet) }
        }
        pipeline.stats.audioPackets += sent.packets
        pipeline.stats.audioBytes += UInt64(sent.bytes)
    }

    /// Reads every sink's feedback and runs its timers; what each asked for goes to `pipeline`.
    /// Returns the earliest time a sink wants servicing again.
    func service(at now: MediaTime, pipeline: inout SharePipelineStateMachine) throws(ShareError) -> MediaTime? {
        var wake: MediaTime?
        for (i, sink) in sinks.enumerated() {
            let requests = try sink.service(at: now)
            if sink.descriptorGeneration != generations[i] {
                do { try watchDescriptors() } catch { throw .output("event loop: \(error)") }
            }
            for line in sink.takeNotices() { onEvent(.notice(line)) }
            for change in sink.takeConnectionChanges() { pipeline.connection(change, output: sink.name) }
            if let lost = requests.audioFractionLost, let audio {
                audio.receiverReport(fractionLost: lost)
                pipeline.audioExpectedLoss(percent: audio.expectedLossPercent)
            }
            pipeline.transport(requests, output: sink.name,
                               roundTripMicroseconds: sink.transportStats?.roundTripMicroseconds, at: now)
            if let w = requests.nextWakeup, w < (wake ?? w + .microseconds(1)) { wake = w }
        }
        pipeline.outputsAcceptVideo(acceptVideo)
        return wake
    }

    /// Says goodbye on every output, once. Returns the first failure, if any.
    func finish(_ reason: FinishReason) -> ShareError? {
        finished = true
        var failure: ShareError?
        for sink in sinks {
            do { try sink.finish(reason) } catch { if failure == nil { failure = error } }
            for line in sink.takeNotices() { onEvent(.notice(line)) }  // a DELETE that failed
        }
        return failure
    }
}
