import RTCShareCore
import RTCShareImpairment
@testable import RTCShareRTP
import TestSupport
import Testing

/// The whole rate loop in fake time: `RTPSender` (pacer, delay-based estimator) and
/// `RTPReceiver` (transport-wide feedback, receiver reports) over a simulated path (`ImpairedPath`,
/// the relay's model) whose forward direction has a bottleneck — a rate cap with a bounded
/// tail-drop queue — and a
/// `SendBitrateController` playing the session's part: the target is the smallest of every
/// estimate and goes back to the sender's pacer; a model encoder makes frames of the target's
/// size (20 fps, a keyframe three times as large every 3 s).
@Suite struct CongestionControlSimulationTests {
    static let key = try! SRTPMasterKey(profile: .aesCM128HmacSHA1_80, bytes: (0..<30).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) })

    /// What the receive core hands out, kept as counts.
    final class Sink: RTPReceiverOutput {
        var outgoing: [[UInt8]] = []
        var frames = 0
        func transmit(_ datagram: UnsafeRawBufferPointer, route: RTPRoute) { outgoing.append(Array(datagram)) }
        func videoFrame(_ frame: ReceivedVideoFrame, bytes: UnsafeRawBufferPointer) { frames += 1 }
        func audioPacket(_ payload: UnsafeRawBufferPointer?) {}
    }

    enum PeerFeedback { case transportWide, rembOnly(kbps: Int), reportsOnly }

    /// A rate cap with a bounded tail-drop queue on the way to the receiver.
    struct Bottleneck {
        var bitsPerSecond: Int
        var queueBytes: Int
    }

    /// The bottleneck's figures from the fates the path gives, since the test last reset them:
    /// datagrams offered and tail-dropped, and each datagram's wait from being sent to leaving
    /// the queue (its own serialisation included).
    struct QueueFigures {
        var offered = 0, dropped = 0, queued = 0
        var totalDelay = MediaDuration.zero, maxDelay = MediaDuration.zero
        /// The mean wait (how long the queue stood, where the longest is only its worst moment).
        var meanDelay: MediaDuration { .microseconds(totalDelay.microseconds / Int64(max(queued, 1))) }
    }

    final class Simulation {
        let sender: RTPSender
        let receiver: RTPReceiver
        let sink = Sink()
        var forward: ImpairedPath<[UInt8], SeededRandom>
        var backward: ImpairedPath<[UInt8], SeededRandom>
        let delay: MediaDuration
        var queue = QueueFigures()
        var rate: SendBitrateController
        let feedback: PeerFeedback
        let start = MediaTime(microseconds: 5_000_000)
        var now: MediaTime
        var nextFrame: MediaTime
        var frameIndex = 0
        var rembSender: SRTPContext
        var nextREMB: MediaTime
        /// (time since start, target kbit/s) at every change.
        var targets: [(MediaDuration, Int)] = []
        /// What the model encoder spends for each bit it is asked for (1: exactly the target).
        var encoderOvershoot = 1.0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        let frameBytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        let budget: MemoryBudget

        init(feedback: PeerFeedback, maximumKbps: Int = 2500, bottleneck: Bottleneck?,
             delay: MediaDuration = .milliseconds(20), seed: UInt64) throws {
            self.feedback = feedback
            now = start
            nextFrame = start
            nextREMB = start
            var c = RTPSenderConfiguration()
            c.protection = .keys(local: CongestionControlSimulationTests.key, remote: CongestionControlSimulationTests.key)
            budget = try MemoryBudget(capBytes: RTPSender.budgetBytes(historyBytes: c.historyBytes) + (8 << 20), prefault: false)
            sender = try RTPSender(configuration: c, budget: budget, random: SeededRandom(seed: seed))
            var r = RTPReceiverConfiguration()
            r.protection = CongestionControlSimulationTests.key
            r.reportIntervalMicroseconds = 500_000
            if case .transportWide = feedback { r.transportSequenceID = c.transportSequenceID }
            receiver = try RTPReceiver(configuration: r, budget: budget, random: SeededRandom(seed: seed &+ 1))
            rembSender = try SRTPContext(key: CongestionControlSimulationTests.key, direction: .sender)
            var way = ImpairmentProfile()
            way.delay = delay
            backward = ImpairedPath(profile: way, random: SeededRandom(seed: seed &+ 3))
            way.rateBitsPerSecond = bottleneck?.bitsPerSecond
            if let bottleneck { way.queueBytes = bottleneck.queueBytes }
            forward = ImpairedPath(profile: way, random: SeededRandom(seed: seed &+ 2))
            self.delay = delay
            rate = SendBitrateController(maximumKbps: maximumKbps)
            sender.setTargetBitrate(kbps: rate.targetKbps, maximumKbps: maximumKbps, at: now)
            frameBytes.initializeMemory(as: UInt8.self, repeating: 0x5A)
        }

        deinit {
            buffer.deallocate()
            frameBytes.deallocate()
        }

        func transmit(_ bytes: UnsafeRawBufferPointer, _ route: RTPRoute) {
            let fate = forward.submit(Array(bytes), bytes: bytes.count + 28, at: now)  // + IPv4 and UDP headers
            guard forward.profile.rateBitsPerSecond != nil else { return }
            queue.offered += 1
            switch fate {
            case .tailDropped:
                queue.dropped += 1
            case .delivered(let at, _):
                let wait = at - now - delay
                queue.queued += 1
                queue.totalDelay = queue.totalDelay + wait
                queue.maxDelay = max(queue.maxDelay, wait)
            case .lost:
                break
            }
        }

        /// Lifts the cap: what is queued still drains, nothing sent after it waits longer.
        func liftBottleneck() { forward.profile.rateBitsPerSecond = nil }

        var elapsed: MediaDuration { now - start }

        func run(until end: MediaDuration) throws {
            while elapsed < end {
                if now >= nextFrame {
                    let keyframe = frameIndex % 60 == 0
                    let kbps = Int(Double(rate.targetKbps) * encoderOvershoot)
                    let size = min(kbps * 1000 / 8 / 20 * (keyframe ? 3 : 1), frameBytes.count)
                    frameBytes[0] = keyframe ? 0x00 : 0x01  // VP8 payload header: P bit clear on a keyframe
                    try sender.sendVideo(UnsafeRawBufferPointer(rebasing: frameBytes[0..<max(size, 100)]),
                                         mediaTimestamp: UInt32(truncatingIfNeeded: frameIndex * 4500), orientation: .up,
                                         at: now, transmit: transmit)
                    frameIndex += 1
                    nextFrame = nextFrame + .milliseconds(50)
                }
                sender.poll(at: now, transmit: transmit)
                forward.release(until: now) { datagram in
                    var bytes = datagram
                    let n = bytes.count
                    bytes += [UInt8](repeating: 0, count: 64)
                    bytes.withUnsafeMutableBytes { raw in
                        buffer.copyMemory(from: UnsafeRawBufferPointer(raw))
                        _ = receiver.receive(datagram: buffer, count: n, at: now)
                    }
                }
                receiver.poll(at: now, output: sink)
                if case .rembOnly(let kbps) = feedback, now >= nextREMB, receiver.videoSSRC != nil {
                    try injectREMB(kbps: kbps)
                    nextREMB = now + .seconds(1)
                }
                for bytes in sink.outgoing { backward.submit(bytes, bytes: bytes.count + 28, at: now) }
                sink.outgoing = []
                backward.release(until: now) { datagram in
                    var bytes = datagram
                    let n = bytes.count
                    bytes += [UInt8](repeating: 0, count: 64)
                    bytes.withUnsafeMutableBytes { raw in sender.handle(datagram: raw, count: n, at: now, transmit: transmit) }
                }
                let wanted = sender.takeRequests()
                if let kbps = wanted.delayBasedKbps { rate.delayBased(kbps: kbps) }
                if let kbps = wanted.bitrateCeilingKbps { rate.remb(kbps: kbps) }
                if let lost = wanted.videoFractionLost { rate.receiverReport(fractionLost: lost, now: now.microseconds) }
                if targets.last?.1 != rate.targetKbps {
                    targets.append((elapsed, rate.targetKbps))
                    sender.setTargetBitrate(kbps: rate.targetKbps, maximumKbps: rate.maximumKbps, at: now)
                }
                now = now + .milliseconds(1)
            }
        }

        func injectREMB(kbps: Int) throws {
            let plain = try RTCPREMB(sender: receiver.ssrc, bitrate: UInt64(kbps) * 1000, ssrcs: [sender.video.ssrc]).serialized()
            var bytes = plain + [UInt8](repeating: 0, count: SRTPProfile.requiredTailroom)
            let n = try bytes.withUnsafeMutableBytes { raw in try rembSender.protectRTCP(raw, length: plain.count) }
            sink.outgoing.append(Array(bytes[0..<n]))
        }

        /// The first time the target went under `kbps`.
        func firstTarget(below kbps: Int) -> MediaDuration? { targets.first { $0.1 < kbps }?.0 }
    }

    /// A 1 Mbit/s uplink with a quarter-second queue (31.25 KB), as a home router's.
    static let megabit = Bottleneck(bitsPerSecond: 1_000_000, queueBytes: 31_250)

    @Test func aMegabitBottleneckFromTwoAndAHalfConvergesWithoutQueueOrLoss() throws {
        // The target must fall under the cap within 3 s and then keep the queue short and the
        // loss low.
        let sim = try Simulation(feedback: .transportWide, bottleneck: Self.megabit, seed: 1)
        try sim.run(until: .seconds(3))
        let under = try #require(sim.firstTarget(below: 1000), "targets \(sim.targets.suffix(10))")
        #expect(under <= .seconds(3))
        sim.queue = QueueFigures()
        try sim.run(until: .seconds(30))
        let offered = sim.queue.offered, dropped = sim.queue.dropped
        #expect(dropped * 100 < offered * 2, "bottleneck dropped \(dropped) of \(offered)")
        #expect(sim.queue.maxDelay < .milliseconds(150), "queueing up to \(sim.queue.maxDelay)")
        // The link is used, not starved: the target settled near the cap.
        let late = sim.targets.filter { $0.0 >= .seconds(10) }.map(\.1) + [sim.rate.targetKbps]
        #expect(late.min()! >= 450 && late.max()! <= 1100, "targets after 10 s: \(late.min()!)...\(late.max()!)")
        #expect(sim.sender.stats.transportFeedbackReceived > 400)
        #expect(sim.sender.delayBasedEstimator!.overuses >= 1)
        // Frames lost to the first second's overflow (and the resends it set off) aside.
        #expect(sim.sink.frames >= sim.frameIndex * 85 / 100, "\(sim.sink.frames) of \(sim.frameIndex) frames")
    }

    @Test func aDeepQueueIsDrainedToo() throws {
        // A one-second queue (125 KB): the first keyframe and quarter second at 2.5 Mbit/s fill
        // most of it before any feedback can come back, so the queue takes longer to drain than
        // the target takes to fall; measured from 6 s on.
        let deep = Bottleneck(bitsPerSecond: 1_000_000, queueBytes: 125_000)
        let sim = try Simulation(feedback: .transportWide, bottleneck: deep, seed: 6)
        try sim.run(until: .seconds(6))
        let under = try #require(sim.firstTarget(below: 1000))
        #expect(under <= .seconds(3))
        sim.queue = QueueFigures()
        try sim.run(until: .seconds(30))
        let offered = sim.queue.offered, dropped = sim.queue.dropped
        #expect(dropped * 100 < offered * 2, "bottleneck dropped \(dropped) of \(offered)")
        #expect(sim.queue.maxDelay < .milliseconds(150), "queueing up to \(sim.queue.maxDelay)")
    }

    @Test func aQueueKeptFullByAnOvershootingEncoderIsDrained() throws {
        // An encoder that spends 60 % more than it is asked (busy content at its coarsest
        // quantizer), through a one-second queue: after a cut to 0.85 × what arrives it still
        // sends more than the path carries, the queue fills and then stands high and flat — no
        // gradient for the trendline, so the estimate used to climb again on a full queue. A
        // standing queue must be cut until it drains, and growth must wait while it stands.
        let deep = Bottleneck(bitsPerSecond: 1_000_000, queueBytes: 125_000)
        let sim = try Simulation(feedback: .transportWide, bottleneck: deep, seed: 7)
        sim.encoderOvershoot = 1.6
        try sim.run(until: .seconds(3))
        let under = try #require(sim.firstTarget(below: 1000), "targets \(sim.targets.suffix(10))")
        #expect(under <= .seconds(3))
        try sim.run(until: .seconds(10))
        sim.queue = QueueFigures()
        try sim.run(until: .seconds(40))
        let offered = sim.queue.offered, dropped = sim.queue.dropped
        #expect(dropped * 100 < offered * 2, "bottleneck dropped \(dropped) of \(offered)")
        // The model's keyframes (3 × 1.6 frames) sent on a full link still wait a while; the
        // queue must not stand (it stood at 128 ms on average, up to 368 ms, before).
        #expect(sim.queue.meanDelay < .milliseconds(75), "mean queueing \(sim.queue.meanDelay)")
        #expect(sim.queue.maxDelay < .milliseconds(300), "queueing up to \(sim.queue.maxDelay)")
        let late = sim.targets.filter { $0.0 >= .seconds(10) }.map(\.1) + [sim.rate.targetKbps]
        #expect(late.min()! >= 200, "targets after 10 s: \(late.min()!)...\(late.max()!)")
    }

    @Test func theEstimateRecoversWhenTheCapIsLifted() throws {
        let sim = try Simulation(feedback: .transportWide, bottleneck: Self.megabit, seed: 2)
        try sim.run(until: .seconds(15))
        #expect(sim.rate.targetKbps < 1100)
        sim.liftBottleneck()
        try sim.run(until: .seconds(35))
        #expect(sim.rate.targetKbps >= 2000, "targets \(sim.targets.suffix(5))")
    }

    @Test func theKeyframeBurstIsSpreadByThePacer() throws {
        // No bottleneck: a keyframe of three frames' size leaves at 2.5 × the target, not at once.
        let sim = try Simulation(feedback: .transportWide, bottleneck: nil, seed: 3)
        var sendTimes: [MediaTime] = []
        try sim.run(until: .milliseconds(10))
        #expect(sim.frameIndex == 1)
        let paced = sim.sender.pacerState
        #expect(paced.isPacing && paced.queuedPackets > 0, "the keyframe waits in the pacer")
        while sim.sender.pacerState.queuedPackets > 0 {
            let before = sim.sender.stats.packetsSent
            try sim.run(until: sim.elapsed + .milliseconds(1))
            if sim.sender.stats.packetsSent > before { sendTimes.append(sim.now) }
        }
        // 2500 kbit/s × 3 / 20 fps = 46.9 KB at 781 KB/s: about 60 ms, in small bursts.
        let span = try #require(sendTimes.last) - sim.start
        #expect(span >= .milliseconds(40) && span <= .milliseconds(90), "keyframe spread over \(span)")
        #expect(sendTimes.count >= 8)
    }

    @Test func aREMBOnlyPeerStillSetsTheRate() throws {
        let sim = try Simulation(feedback: .rembOnly(kbps: 700), bottleneck: Self.megabit, seed: 4)
        try sim.run(until: .seconds(6))
        #expect(sim.rate.targetKbps == 700)
        #expect(sim.sender.stats.transportFeedbackReceived == 0)
        #expect(sim.sender.delayBasedEstimator!.overuses == 0)
        sim.queue = QueueFigures()
        try sim.run(until: .seconds(10))
        #expect(sim.queue.dropped == 0)
    }

    @Test func aReportsOnlyPeerFallsBackToLoss() throws {
        let sim = try Simulation(feedback: .reportsOnly, bottleneck: Self.megabit, seed: 5)
        try sim.run(until: .seconds(20))
        #expect(sim.sender.stats.transportFeedbackReceived == 0)
        #expect(sim.rate.decreases >= 1)
        #expect(sim.rate.targetKbps < 1500, "targets \(sim.targets.suffix(5))")
        #expect(sim.sink.frames > 100)
    }
}
