import RTCShareCore
import RTCShareImpairment
@testable import RTCShareRTP
import TestSupport
import Testing

/// The two halves of the transport core — `RTPSender` and `RTPReceiver`, the receive core the
/// built-in receiver runs — in one process over a simulated link in fake time: no sockets, no
/// sleeps, real SRTP. Each test runs the whole feedback loop (NACK → resend, PLI/FIR →
/// keyframe, receiver reports → RTT and rate, BYE), deterministically from its seed.
@Suite struct RTPSenderSimulationTests {
    static let key = try! SRTPMasterKey(profile: .aesCM128HmacSHA1_80, bytes: (0..<30).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 5) })

    /// One direction of the simulated path (the relay's model), in the RTP core's time.
    typealias Link = ImpairedPath<[UInt8], SeededRandom>

    /// The far end: the receive core (`RTPReceiver`, as the built-in receiver runs it), with
    /// what it hands out collected. Feedback the core does not make itself (REMB, FIR) can be
    /// injected, protected with the same key.
    final class Receiver: RTPReceiverOutput {
        let core: RTPReceiver
        var protect: SRTPContext
        /// Each frame handed out: its size and, when every byte after the payload header is the
        /// same, that byte (the simulation's frame index, mod 256).
        var frames: [(frame: ReceivedVideoFrame, count: Int, fill: UInt8?)] = []
        var audio = 0
        var outgoing: [[UInt8]] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)

        init(rtxPayloadType: UInt8? = nil, transportSequenceID: UInt8? = nil, infersLoss: Bool = true,
             watchesUnfinishedFrames: Bool = true, seed: UInt64 = 99) throws {
            var c = RTPReceiverConfiguration()
            c.protection = RTPSenderSimulationTests.key
            c.rtxPayloadType = rtxPayloadType
            c.transportSequenceID = transportSequenceID
            c.infersLossFromTransportGaps = infersLoss
            c.infersLossFromUnfinishedFrames = watchesUnfinishedFrames
            c.reportIntervalMicroseconds = 200_000
            let budget = try MemoryBudget(capBytes: c.budgetBytes + (64 << 10), prefault: false)
            core = try RTPReceiver(configuration: c, budget: budget, random: SeededRandom(seed: seed))
            protect = try SRTPContext(key: RTPSenderSimulationTests.key, direction: .sender)
        }

        deinit { buffer.deallocate() }

        @discardableResult
        func receive(_ bytes: [UInt8], at now: MediaTime) -> RTPReceiverInput {
            bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
            return core.receive(datagram: buffer, count: bytes.count, at: now)
        }

        func transmit(_ datagram: UnsafeRawBufferPointer, route: RTPRoute) { outgoing.append(Array(datagram)) }
        func videoFrame(_ frame: ReceivedVideoFrame, bytes: UnsafeRawBufferPointer) {
            let fill = bytes.count > 1 && bytes.dropFirst().allSatisfy { $0 == bytes[1] } ? bytes[1] : nil
            frames.append((frame, bytes.count, fill))
        }
        func audioPacket(_ payload: UnsafeRawBufferPointer?) { audio += 1 }

        /// `parts` as protected RTCP datagrams, as if the core had sent them.
        func inject(_ parts: [any RTCPWritable]) throws {
            for part in parts {
                let plain = try part.serialized()
                var bytes = plain + [UInt8](repeating: 0, count: SRTPProfile.requiredTailroom)
                let n = try bytes.withUnsafeMutableBytes { raw in try protect.protectRTCP(raw, length: plain.count) }
                outgoing.append(Array(bytes[0..<n]))
            }
        }

        /// Whether frame `i` of the simulation arrived whole.
        func holds(frame i: Int) -> Bool {
            frames.contains { $0.count == 6000 && $0.fill == UInt8(truncatingIfNeeded: i) }
        }
    }

    /// A sender, a receiver and a link each way, driven in 5 ms steps of fake time; a 6 KB
    /// frame every 50 ms (20 fps, a keyframe every 30 frames), a receiver report every 200 ms.
    final class Simulation {
        let sender: RTPSender
        let receiver: Receiver
        var forward: Link
        var backward: Link
        var now = MediaTime(microseconds: 1_000_000)
        var frameIndex = 0
        var requests: [(at: MediaTime, TransportRequests)] = []
        var nextFrame = MediaTime(microseconds: 1_000_000)
        let rtx: Bool
        let budget: MemoryBudget

        /// Frame `i`'s bytes: a VP8 payload header whose P bit marks a keyframe (RFC 7741
        /// §4.3), then `i` repeated.
        static func frame(_ i: Int, keyframe: Bool = false) -> [UInt8] {
            [keyframe ? 0x00 : 0x01] + [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 5999)
        }

        /// `audio`: a 60-byte Opus packet every 20 ms beside the video, and the receiver reads the
        /// transport-wide numbers (transport-cc feedback; `infersLoss`: gaps found from them).
        init(loss: Int, delay: MediaDuration = .milliseconds(20), rtx: Bool = false, historyBytes: Int = 256 << 10,
             audio: Bool = false, infersLoss: Bool = true, watchesUnfinishedFrames: Bool = true,
             seed: UInt64) throws {
            var c = RTPSenderConfiguration()
            c.protection = .keys(local: RTPSenderSimulationTests.key, remote: RTPSenderSimulationTests.key)
            c.rtxPayloadType = rtx ? 97 : nil
            c.audioPayloadType = audio ? 111 : nil
            c.historyBytes = historyBytes
            budget = try MemoryBudget(capBytes: RTPSender.budgetBytes(historyBytes: historyBytes) + (64 << 10))
            sender = try RTPSender(configuration: c, budget: budget, random: SeededRandom(seed: seed))
            receiver = try Receiver(rtxPayloadType: rtx ? 97 : nil, transportSequenceID: audio ? c.transportSequenceID : nil,
                                    infersLoss: infersLoss, watchesUnfinishedFrames: watchesUnfinishedFrames,
                                    seed: seed &+ 3)
            sendsAudio = audio
            var way = ImpairmentProfile()
            way.delay = delay
            backward = Link(profile: way, random: SeededRandom(seed: seed &+ 2))
            way.lossPercent = Double(loss)
            forward = Link(profile: way, random: SeededRandom(seed: seed &+ 1))
            self.rtx = rtx
        }

        /// When each frame was handed out, in fake time.
        var handedOut: [MediaTime] = []
        /// Datagrams towards the receiver (counted from 0) lost whatever the path does: a test
        /// that needs particular packets lost. They never reach the path (it draws nothing for them).
        var forwardLosesIndices: Set<Int> = []
        /// Datagrams sent towards the receiver, and of those lost by `forwardLosesIndices`.
        private(set) var forwardSent = 0
        private(set) var forwardLostByIndex = 0
        /// The way back is cut: everything the receiver sends is lost, with no draw (a receiver
        /// gone silent).
        var backwardIsDown = false
        /// Datagrams lost on the way to the receiver: by the path, and by index.
        var forwardLost: Int { Int(forward.statistics.lost) + forwardLostByIndex }

        func transmit(_ bytes: UnsafeRawBufferPointer, _ route: RTPRoute) {
            defer { forwardSent += 1 }
            if forwardLosesIndices.contains(forwardSent) {
                forwardLostByIndex += 1
                return
            }
            forward.submit(Array(bytes), bytes: bytes.count, at: now)
        }

        func run(for duration: MediaDuration) throws {
            let end = now + duration
            while now < end {
                if now >= nextFrame {
                    // The test plays the encoder: a keyframe every 30 frames and when asked.
                    let key = frameIndex % 30 == 0 || keyframeRequested
                    keyframeRequested = false
                    try Self.frame(frameIndex, keyframe: key).withUnsafeBytes { bytes in
                        try sender.sendVideo(bytes, mediaTimestamp: UInt32(frameIndex * 4500), orientation: .up,
                                             at: now, transmit: transmit)
                    }
                    frameIndex += 1
                    nextFrame = nextFrame + .milliseconds(50)
                }
                if sendsAudio && now >= nextAudio {
                    try Self.audioPayload.withUnsafeBytes { bytes in
                        try sender.sendAudio(bytes, mediaTimestamp: UInt32(truncatingIfNeeded: audioIndex * 960),
                                             samples: 960, at: now, transmit: transmit)
                    }
                    audioIndex += 1
                    nextAudio = nextAudio + .milliseconds(20)
                }
                sender.poll(at: now, transmit: transmit)
                forward.release(until: now) { receiver.receive($0, at: now) }
                let before = receiver.frames.count
                receiver.core.poll(at: now, output: receiver)
                for _ in before..<receiver.frames.count { handedOut.append(now) }
                if !backwardIsDown {
                    for bytes in receiver.outgoing { backward.submit(bytes, bytes: bytes.count, at: now) }
                }
                receiver.outgoing = []
                backward.release(until: now) { datagram in
                    var bytes = datagram
                    let count = bytes.count
                    bytes += [UInt8](repeating: 0, count: 64)
                    bytes.withUnsafeMutableBytes { raw in
                        sender.handle(datagram: raw, count: count, at: now, transmit: transmit)
                    }
                }
                let wanted = sender.takeRequests()
                if wanted != TransportRequests() { requests.append((now, wanted)) }
                if wanted.keyframe { keyframeRequested = true }
                now = now + .milliseconds(5)
            }
        }

        /// Set when the sender asked the pipeline for a keyframe.
        var keyframeRequested = false
        let sendsAudio: Bool
        var audioIndex = 0
        var nextAudio = MediaTime(microseconds: 1_002_500)
        static let audioPayload = [UInt8](repeating: 0x5a, count: 60)
    }

    @Test func everyPacketLostOnTheWayIsRecoveredByNack() throws {
        let sim = try Simulation(loss: 5, seed: 11)
        try sim.run(for: .seconds(5))
        let stats = sim.sender.stats
        #expect(sim.forwardLost > 10, "the link lost \(sim.forwardLost)")
        #expect(stats.nacksReceived >= sim.forwardLost - 5)
        #expect(stats.packetsRetransmitted >= stats.nacksReceived - 5)
        // Nearly every hole was filled by a resend in time; a packet is given up only when its
        // resends were lost too (then the frame is lost and a keyframe asked for).
        let rx = sim.receiver.core
        #expect(rx.nackCounters.recovered > 10, "recovered \(rx.nackCounters.recovered)")
        #expect(rx.stats.packetsLost <= 3, "\(rx.stats)")
        #expect(sim.sender.stats.retransmitsMissed == 0, "every NACKed packet was still held")
        expectFramesWhole(sim, atLeastPercent: 85)
    }

    /// The frames handed out came in order, and at least `percent` of those sent (but the last
    /// few, still on the way) came out whole; every loss cost a keyframe request.
    func expectFramesWhole(_ sim: Simulation, atLeastPercent percent: Int,
                           sourceLocation: SourceLocation = #_sourceLocation) {
        let rx = sim.receiver.core
        let stamps = sim.receiver.frames.map(\.frame.timestamp)
        #expect(stamps == stamps.sorted(), sourceLocation: sourceLocation)
        let sent = sim.frameIndex - 3
        let whole = (0..<sent).filter { sim.receiver.holds(frame: $0) }.count
        #expect(whole * 100 >= sent * percent, "\(whole) of \(sent) frames whole", sourceLocation: sourceLocation)
        if rx.stats.packetsLost > 0 {
            #expect(rx.stats.plis >= 1 && rx.stats.keyframes >= 2, "\(rx.stats)", sourceLocation: sourceLocation)
        }
    }

    @Test func withRTXTheResendsComeOnTheRTXStreamAndFillTheHoles() throws {
        let sim = try Simulation(loss: 5, rtx: true, seed: 12)
        try sim.run(for: .seconds(5))
        let sent = sim.sender.rtx!.packetCount
        #expect(sent > 0)
        #expect(UInt64(sent) == UInt64(sim.sender.stats.packetsRetransmitted))
        // Resends lost again on the way are the only ones that do not arrive.
        let rx = sim.receiver.core.stats
        #expect(rx.rtxPackets > 10 && rx.rtxPackets <= UInt64(sent))
        #expect(rx.packetsLost <= 3, "\(rx)")
        expectFramesWhole(sim, atLeastPercent: 85)
    }

    @Test func aPacketNoLongerHeldCostsAKeyframe() throws {
        // 6 KB of history holds one frame: by the time a NACK comes back (40 ms RTT) the lost
        // packet's frame is gone.
        let sim = try Simulation(loss: 0, delay: .milliseconds(20), historyBytes: 6 << 10, seed: 13)
        sim.forwardLosesIndices = [30]
        try sim.run(for: .seconds(1))
        #expect(sim.sender.stats.retransmitsMissed >= 1)
        #expect(sim.requests.contains { $0.1.keyframe })
        // The receiver gave the packet up, handed out nothing until the keyframe asked for,
        // then everything again.
        let rx = sim.receiver.core.stats
        #expect(rx.packetsLost >= 1)
        #expect(rx.framesUndecodable >= 1)
        #expect(rx.keyframes >= 2, "the first and the one asked for")
        for i in (sim.frameIndex - 6)..<(sim.frameIndex - 2) { #expect(sim.receiver.holds(frame: i), "frame \(i)") }
    }

    @Test func aNackForANumberNotSentYetIsIgnoredNotAnsweredWithAKeyframe() throws {
        let sim = try Simulation(loss: 0, seed: 15)
        try sim.run(for: .milliseconds(300))
        let next = sim.sender.video.nextSequenceNumber
        // Numbers 500 ahead (not made within the 20 ms the NACK travels): three of them.
        try sim.receiver.inject([RTCPGenericNack(sender: 1, media: sim.sender.video.ssrc,
                                                 entries: [RTCPNackEntry(pid: next &+ 500, blp: 0b101)])])
        try sim.run(for: .milliseconds(100))
        let stats = sim.sender.stats
        #expect(stats.nacksReceived == 3)
        #expect(stats.nacksAheadOfSent == 3)
        #expect(stats.packetsRetransmitted == 0 && stats.retransmitsMissed == 0)
        #expect(!sim.requests.contains { $0.1.keyframe })
        // A number that was sent is still answered.
        try sim.receiver.inject([RTCPGenericNack(sender: 1, media: sim.sender.video.ssrc,
                                                 entries: [RTCPNackEntry(pid: next &- 1, blp: 0)])])
        try sim.run(for: .milliseconds(50))
        #expect(sim.sender.stats.packetsRetransmitted == 1)
    }

    @Test func aDecoderFailureSendsAPLIAndTheKeyframeRequestArrivesWithinAFrameInterval() throws {
        let sim = try Simulation(loss: 0, seed: 14)
        try sim.run(for: .milliseconds(500))
        #expect(!sim.requests.contains { $0.1.keyframe })
        let askedAt = sim.now
        sim.receiver.core.decodeFailed()
        try sim.run(for: .milliseconds(100))
        #expect(sim.receiver.core.stats.plis == 1)
        let answer = try #require(sim.requests.first { $0.1.keyframe })
        // One link delay (20 ms) plus the 5 ms step: well within a frame interval (50 ms).
        #expect(answer.at - askedAt <= .milliseconds(50))
    }

    @Test func firAsksForAKeyframeAndRembCapsTheRate() throws {
        let sim = try Simulation(loss: 0, seed: 14)
        try sim.run(for: .milliseconds(500))
        let ssrc = sim.sender.video.ssrc
        try sim.receiver.inject([RTCPFullIntraRequest(sender: 1, entries: [RTCPFIREntry(ssrc: ssrc, sequenceNumber: 1)]),
                                 RTCPREMB(sender: 1, bitrate: 350_000, ssrcs: [ssrc])])
        let sentAt = sim.now
        try sim.run(for: .milliseconds(100))
        let answer = try #require(sim.requests.first { $0.1.keyframe })
        #expect(answer.at - sentAt <= .milliseconds(50))
        #expect(sim.requests.contains { $0.1.bitrateCeilingKbps == 350 })
        var rate = SendBitrateController(maximumKbps: 1000)
        rate.remb(kbps: 350)
        #expect(rate.targetKbps == 350)
    }

    @Test func receiverReportsGiveTheRoundTripAndLossLowersTheRate() throws {
        // Sender reports are lost too (20 %): six seconds hold several, so some arrive.
        let sim = try Simulation(loss: 20, delay: .milliseconds(30), seed: 15)
        try sim.run(for: .seconds(6))
        let rtt = try #require(sim.sender.stats.roundTripMicroseconds,
                               "sender reports received: \(sim.receiver.core.stats.senderReportsReceived)")
        // 30 ms each way, reports sent on a 5 ms grid: 60..70 ms.
        #expect(rtt >= 59_000 && rtt <= 71_000, "rtt \(rtt) µs")
        var rate = SendBitrateController(maximumKbps: 2000)
        for (at, wanted) in sim.requests {
            if let lost = wanted.videoFractionLost { rate.receiverReport(fractionLost: lost, now: at.microseconds) }
        }
        #expect(rate.decreases > 0)
        #expect(rate.targetKbps < 2000)
        // The receiver learnt the round trip from NACK answers (timed from a number's only
        // NACK: a smoothed upper bound) and waits long enough for them: none came late.
        let fromNacks = try #require(sim.receiver.core.smoothedRTTMicroseconds, "\(sim.receiver.core.stats)")
        #expect(fromNacks >= 59_000 && fromNacks <= 150_000, "rtt from NACKs \(fromNacks) µs")
        #expect(sim.receiver.core.stats.lateRetransmissions == 0)
    }

    @Test func byeEndsTheStreamAtTheReceiver() throws {
        let sim = try Simulation(loss: 0, seed: 16)
        try sim.run(for: .milliseconds(300))
        sim.sender.finish(at: sim.now, transmit: sim.transmit)
        sim.now = sim.now + .milliseconds(50)
        var what: [RTPReceiverInput] = []
        sim.forward.release(until: sim.now) { what.append(sim.receiver.receive($0, at: sim.now)) }
        #expect(what.contains(.control(goodbye: true)))
        #expect(sim.receiver.core.stats.byeReceived)
        #expect(sim.sender.nextDeadline == nil, "no more reports after the goodbye")
    }

    @Test func theVideoStillPacedWhenTheShareEndsIsSentBeforeTheGoodbye() throws {
        let sim = try Simulation(loss: 0, seed: 17)
        try sim.run(for: .milliseconds(300))
        // Paced at 2.5 × 100 kbit/s: a frame of 6 KB takes ~190 ms to leave.
        sim.sender.setTargetBitrate(kbps: 100, maximumKbps: 2500, at: sim.now)
        let last = sim.frameIndex
        try Simulation.frame(last).withUnsafeBytes { bytes in
            try sim.sender.sendVideo(bytes, mediaTimestamp: UInt32(last * 4500), orientation: .up, at: sim.now,
                                     transmit: sim.transmit)
        }
        sim.sender.poll(at: sim.now, transmit: sim.transmit)
        #expect(sim.sender.pacerState.queuedPackets > 0, "the frame waits in the pacer")
        sim.sender.finish(at: sim.now, transmit: sim.transmit)
        #expect(sim.sender.pacerState.queuedPackets == 0)
        #expect(sim.sender.stats.pacedPacketsExpired == 0)
        sim.now = sim.now + .milliseconds(50)
        var order: [Bool] = []  // true: the goodbye
        sim.forward.release(until: sim.now) { bytes in
            order.append(sim.receiver.receive(bytes, at: sim.now) == .control(goodbye: true))
        }
        sim.receiver.core.poll(at: sim.now, output: sim.receiver)
        #expect(sim.receiver.holds(frame: last), "the last frame arrived whole")
        #expect(order.last == true && order.dropLast().allSatisfy { !$0 }, "the goodbye came last")
    }

    @Test func queuedPacketsTheHistoryNeedsRoomFromGoAheadOfThePacerInsteadOfExpiring() throws {
        // A 16 KiB history and frames of 6 KB paced at 2.5 × 100 kbit/s (~190 ms a frame): four
        // frames handed in at once are more than the history holds beside what still waits.
        let sim = try Simulation(loss: 0, historyBytes: 16 << 10, seed: 19)
        try sim.run(for: .milliseconds(300))
        sim.sender.setTargetBitrate(kbps: 100, maximumKbps: 2500, at: sim.now)
        let first = sim.frameIndex
        for i in first..<first + 4 {
            try Simulation.frame(i).withUnsafeBytes { bytes in
                try sim.sender.sendVideo(bytes, mediaTimestamp: UInt32(i * 4500), orientation: .up, at: sim.now,
                                         transmit: sim.transmit)
            }
        }
        #expect(sim.sender.stats.pacedSentEarly > 0, "packets sent ahead of the pacer")
        #expect(sim.sender.pacerState.queuedPackets > 0, "the rest still paced")
        for _ in 0..<300 {
            sim.sender.poll(at: sim.now, transmit: sim.transmit)
            sim.forward.release(until: sim.now) { _ = sim.receiver.receive($0, at: sim.now) }
            sim.receiver.core.poll(at: sim.now, output: sim.receiver)
            sim.now = sim.now + .milliseconds(5)
        }
        #expect(sim.sender.stats.pacedPacketsExpired == 0)
        #expect(sim.sender.pacerState.queuedPackets == 0)
        for i in first..<first + 4 { #expect(sim.receiver.holds(frame: i), "frame \(i) arrived whole") }
    }

    @Test func aReceiverThatFallsSilentIsNoticedOnceAndSoIsItsReturn() throws {
        let sim = try Simulation(loss: 0, seed: 18)
        try sim.run(for: .seconds(2))
        #expect(sim.requests.allSatisfy { $0.1.feedback == nil }, "reports every 200 ms: never silent")
        sim.backwardIsDown = true
        let silentFrom = sim.now
        try sim.run(for: .seconds(8))
        let silences = sim.requests.filter { if case .silent? = $0.1.feedback { true } else { false } }
        #expect(silences.count == 1)
        // The last report got through shortly before the link went down; the silence is said
        // five seconds after it, give or take a report interval and a step.
        if let said = silences.first?.at {
            #expect(said > silentFrom + .milliseconds(4_700) && said <= silentFrom + .milliseconds(5_010))
        }
        sim.backwardIsDown = false
        try sim.run(for: .seconds(1))
        let ends = sim.requests.compactMap { if case .resumed(let ms)? = $0.1.feedback { ms } else { nil } }
        #expect(ends.count == 1)
        #expect((7_900...8_500).contains(ends.first ?? 0), "the silence lasted the 8 s the link was down")
        #expect(sim.sender.feedbackWatch.silences == 1)
    }

    @Test func throughATenSecondOutageVideoIsHeldAndAKeyframeGoesAtOnceWhenFeedbackReturns() throws {
        // The plain path (`--peer`): RTCP is the only feedback, a report every 200 ms here.
        let sim = try Simulation(loss: 0, rtx: true, seed: 19)
        try sim.run(for: .seconds(3))
        let before = sim.sender.stats
        #expect(before.feedbackReturns == 0 && before.framesHeldWhileSilent == 0, "reports on time: no outage")
        let steadySent = before.bytesSent
        try sim.run(for: .seconds(2))
        let steady = sim.sender.stats.bytesSent - steadySent
        var down = sim.forward.profile
        down.lossPercent = 100
        sim.forward.profile = down
        sim.backward.profile = down
        let cut = sim.now
        try sim.run(for: .seconds(10))
        down.lossPercent = 0
        sim.forward.profile = down
        sim.backward.profile = down
        let back = sim.now
        let sentBack = sim.sender.stats.bytesSent
        let lostInOutage = sim.forwardLost
        try sim.run(for: .seconds(2))
        let afterReturn = sim.sender.stats.bytesSent - sentBack
        try sim.run(for: .seconds(1))
        let stats = sim.sender.stats
        // Held once the silence passed the limit (1 s at this cadence), but for a frame a second:
        // what went into the dead path is about a second of video and nine frames (6 packets a
        // frame), not ten seconds of it.
        #expect(stats.framesHeldWhileSilent >= 165 && stats.framesHeldWhileSilent <= 175, "\(stats.framesHeldWhileSilent) held")
        #expect(lostInOutage <= 200, "\(lostInOutage) datagrams lost")
        #expect(stats.feedbackReturns == 1)
        // Asked for as the first feedback came back: a round trip and the receiver's first
        // report, not a PLI's wait.
        let returned = try #require(sim.requests.first { $0.1.feedbackReturnedAfterMilliseconds != nil })
        #expect(returned.1.keyframe)
        #expect(returned.at <= back + .milliseconds(300), "\((returned.at - back).microseconds) µs after")
        #expect((10_000...10_500).contains(returned.1.feedbackReturnedAfterMilliseconds ?? 0))
        // No flood: what was lost is asked for and resent within the budget (half the media
        // rate), so the two seconds after the return carry at most one and a half times what two
        // seconds of media did.
        #expect(stats.packetsRetransmitted > before.packetsRetransmitted)
        #expect(afterReturn <= steady + steady / 2, "\(afterReturn) bytes after the return, \(steady) before")
        // The picture stood still for the outage and not much more: the keyframe came out within
        // the wait for the first feedback.
        var longest = MediaDuration.zero
        for (a, b) in zip(sim.handedOut, sim.handedOut.dropFirst()) { longest = max(longest, b - a) }
        #expect(longest <= (back - cut) + .milliseconds(500), "longest freeze \(longest.microseconds / 1_000) ms")
        let key = try #require(sim.handedOut.indices.first { sim.handedOut[$0] > back && sim.receiver.frames[$0].frame.isKeyframe })
        #expect(sim.handedOut[key] <= back + .milliseconds(400), "\((sim.handedOut[key] - back).microseconds) µs after")
    }

    @Test func whileTheReceiverIsSilentAFrameASecondStillGoesSoOneThatRestartedIsHeardFrom() throws {
        // Only the way back is cut (a receiver that lost its state reports only once media
        // reaches it): video is held, but a frame a second still arrives.
        let sim = try Simulation(loss: 0, seed: 20)
        // More than 16 reports: the limit follows their 200 ms (1 s), not the first guess (3 s).
        try sim.run(for: .seconds(5))
        sim.backwardIsDown = true
        let cut = sim.now
        try sim.run(for: .seconds(6))
        let during = sim.handedOut.filter { $0 > cut + .seconds(2) }.count
        #expect((3...5).contains(during), "\(during) frames in the last 4 s of the silence")
        sim.backwardIsDown = false
        let back = sim.now
        try sim.run(for: .seconds(1))
        let returned = try #require(sim.requests.first { $0.1.feedbackReturnedAfterMilliseconds != nil })
        #expect(returned.1.keyframe && returned.at <= back + .milliseconds(300))
        #expect(sim.handedOut.filter { $0 > back }.count >= 15, "video flows again at 20 fps")
    }

    @Test func theSameSeedGivesTheSameCounters() throws {
        func counters() throws -> [Int] {
            let sim = try Simulation(loss: 7, seed: 17)
            try sim.run(for: .seconds(2))
            let s = sim.sender.stats
            let r = sim.receiver.core
            return [s.packetsSent, s.nacksReceived, s.packetsRetransmitted, sim.forwardLost,
                    Int(r.stats.packets), Int(r.stats.nackPackets), Int(r.nackCounters.recovered),
                    sim.receiver.frames.count, Int(sim.sender.video.ssrc & 0xFFFF), Int(r.ssrc & 0xFFFF)]
        }
        #expect(try counters() == counters())
    }

    @Test func withKeysToComeNothingIsSentUntilTheyArrive() throws {
        var c = RTPSenderConfiguration()
        c.protection = .awaitingKeys
        let budget = try MemoryBudget(capBytes: RTPSender.budgetBytes(historyBytes: c.historyBytes) + (64 << 10))
        let sender = try RTPSender(configuration: c, budget: budget, random: SeededRandom(seed: 18))
        var sent = 0
        let frame = [UInt8](repeating: 1, count: 3000)
        try frame.withUnsafeBytes { bytes in
            try sender.sendVideo(bytes, mediaTimestamp: 0, orientation: .up, at: MediaTime(microseconds: 0)) { _, _ in sent += 1 }
        }
        #expect(sent == 0 && sender.droppedWhileConnecting == 1 && !sender.isConnected)
        #expect(sender.nextDeadline == nil)
        try sender.install(local: Self.key, remote: Self.key)
        let receiver = try Receiver()
        var accepted = 0
        try frame.withUnsafeBytes { bytes in
            try sender.sendVideo(bytes, mediaTimestamp: 4500, orientation: .up, at: MediaTime(microseconds: 50_000)) { datagram, route in
                sent += 1
                #expect(route == .videoRTP)
                if receiver.receive(Array(datagram), at: MediaTime(microseconds: 50_000)) == .video { accepted += 1 }
            }
        }
        #expect(sent == 3 && accepted == 3, "protected with the installed key")
    }
}
