import RTCShareCore
import RTCShareMedia
@testable import RTCShareRTP
import Testing

/// The send core against a receiving endpoint in one process, over a simulated link in fake
/// time: no sockets, no sleeps, real SRTP. The receiving endpoint is built from the receive-side
/// pieces the built-in receiver uses (SRTP, RTP parsing, RTX unwrapping, `NackGenerator`,
/// `ReceiveStatistics`, the RTCP writers), so each test runs the whole feedback loop.
@Suite struct RTPSenderSimulationTests {
    static let key = try! SRTPMasterKey(profile: .aesCM128HmacSHA1_80, bytes: (0..<30).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 5) })

    /// One direction of a lossy path: each datagram is lost with `lossPercent` (seeded), or
    /// arrives `delay` later. Optionally loses exactly the datagrams whose index is listed.
    struct Link {
        var delay: MediaDuration
        var lossPercent = 0
        var loseIndices: Set<Int> = []
        var rng: RTPTestRNG
        private(set) var sent = 0
        private(set) var lost = 0
        private var inFlight: [(at: MediaTime, bytes: [UInt8])] = []

        init(delay: MediaDuration, lossPercent: Int = 0, seed: UInt64) {
            self.delay = delay
            self.lossPercent = lossPercent
            rng = RTPTestRNG(seed: seed)
        }

        mutating func send(_ bytes: UnsafeRawBufferPointer, at now: MediaTime) {
            defer { sent += 1 }
            if loseIndices.contains(sent) || Int.random(in: 0..<100, using: &rng) < lossPercent {
                lost += 1
                return
            }
            inFlight.append((now + delay, Array(bytes)))
        }

        mutating func arrivals(until now: MediaTime) -> [[UInt8]] {
            let due = inFlight.prefix { $0.at <= now }.map(\.bytes)
            inFlight.removeFirst(due.count)
            return due
        }
    }

    /// The far end: unprotects, counts, asks for what is missing, reports.
    final class Receiver {
        var unprotect: SRTPContext
        var protect: SRTPContext
        var nack = NackGenerator()
        var stats: ReceiveStatistics?
        var received: Set<UInt16> = []
        var retransmissionsReceived = 0
        var duplicates = 0
        var byeReceived = false
        var senderReports = 0
        let ssrc: UInt32 = 0x1234_5678
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        let numbers = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: 64)

        init() throws {
            unprotect = try SRTPContext(key: RTPSenderSimulationTests.key, direction: .receiver)
            protect = try SRTPContext(key: RTPSenderSimulationTests.key, direction: .sender)
        }

        deinit {
            buffer.deallocate()
            numbers.deallocate()
        }

        func receive(_ bytes: [UInt8], at now: MediaTime, videoSSRC: UInt32, rtxPayloadType: UInt8?) throws {
            bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
            if (192...223).contains(bytes[1]) {
                let n = try unprotect.unprotectRTCP(buffer, length: bytes.count)
                try RTCPParser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) { item in
                    switch item {
                    case .senderReport(let info):
                        senderReports += 1
                        stats?.senderReportReceived(ntpTime: info.ntpTime, arrival: now.microseconds)
                    case .goodbye: byeReceived = true
                    default: break
                    }
                }
                return
            }
            var n = 0
            do { n = try unprotect.unprotectRTP(buffer, length: bytes.count) } catch {
                // A second resend of a packet already here trips SRTP's replay check.
                guard case .srtp(_, let status) = error, status == 9 || status == 10 else { throw error }
                duplicates += 1
                return
            }
            var packet = try RTPHeader.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            if packet.header.payloadType == rtxPayloadType {
                let original = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
                defer { original.deallocate() }
                let m = try RTXPacketizer.unwrap(rtx: UnsafeRawBufferPointer(rebasing: buffer[0..<n]),
                                                 originalSSRC: videoSSRC, originalPayloadType: 96, into: original)
                packet = try RTPHeader.parse(UnsafeRawBufferPointer(rebasing: original[0..<m]))
                retransmissionsReceived += 1
            } else if received.contains(packet.header.sequenceNumber) {
                retransmissionsReceived += 1
            }
            guard packet.header.ssrc == videoSSRC else { return }
            // A hole NACKed and now filled is a retransmission: the report counts loss before
            // repair, as the built-in receiver's does.
            let repaired = nack.packetReceived(sequenceNumber: packet.header.sequenceNumber, now: now.microseconds) != nil
            if stats == nil { stats = ReceiveStatistics(ssrc: videoSSRC, clockRate: 90_000) }
            stats!.received(sequenceNumber: packet.header.sequenceNumber, rtpTimestamp: packet.header.timestamp,
                            arrival: now.microseconds, isRetransmission: repaired)
            received.insert(packet.header.sequenceNumber)
        }

        /// The feedback due at `now`: NACKs, and a receiver report when `report`.
        func feedback(at now: MediaTime, videoSSRC: UInt32, report: Bool, extra: [any RTCPWritable] = [],
                      send: ([UInt8]) -> Void) throws {
            var parts: [any RTCPWritable] = []
            if report, var s = stats, let block = s.makeReportBlock(now: now.microseconds) {
                stats = s
                parts.append(RTCPReceiverReport(ssrc: ssrc, reportBlocks: [block]))
            }
            let count = nack.collectDue(now: now.microseconds, roundTripMicroseconds: nil, into: numbers)
            if count > 0 {
                parts.append(RTCPGenericNack(sender: ssrc, media: videoSSRC,
                                             entries: RTCPNackEntry.minimalEntries(lost: Array(numbers[0..<count]))))
            }
            parts += extra
            for part in parts {
                let plain = try part.serialized()
                var bytes = plain + [UInt8](repeating: 0, count: SRTPProfile.requiredTailroom)
                let n = try bytes.withUnsafeMutableBytes { raw in try protect.protectRTCP(raw, length: plain.count) }
                send(Array(bytes[0..<n]))
            }
        }
    }

    /// A sender, a receiver and a link each way, driven in 5 ms steps of fake time; a 6 KB
    /// frame every 50 ms (20 fps), a receiver report every 200 ms.
    final class Simulation {
        let sender: RTPSender
        let receiver: Receiver
        var forward: Link
        var backward: Link
        var now = MediaTime(microseconds: 1_000_000)
        var frameIndex = 0
        var requests: [(at: MediaTime, SenderRequests)] = []
        var nextFrame = MediaTime(microseconds: 1_000_000)
        var nextReport = MediaTime(microseconds: 1_200_000)
        var extraFeedback: [any RTCPWritable] = []
        let rtx: Bool
        let budget: MemoryBudget

        init(loss: Int, delay: MediaDuration = .milliseconds(20), rtx: Bool = false, historyBytes: Int = 256 << 10,
             seed: UInt64) throws {
            var c = RTPSenderConfiguration()
            c.protection = .keys(local: RTPSenderSimulationTests.key, remote: RTPSenderSimulationTests.key)
            c.rtxPayloadType = rtx ? 97 : nil
            c.historyBytes = historyBytes
            budget = try MemoryBudget(capBytes: RTPSender.budgetBytes(historyBytes: historyBytes) + (64 << 10))
            sender = try RTPSender(configuration: c, budget: budget, random: RTPTestRNG(seed: seed))
            receiver = try Receiver()
            forward = Link(delay: delay, lossPercent: loss, seed: seed &+ 1)
            backward = Link(delay: delay, lossPercent: 0, seed: seed &+ 2)
            self.rtx = rtx
        }

        func transmit(_ bytes: UnsafeRawBufferPointer, _ route: RTPRoute) { forward.send(bytes, at: now) }

        func run(for duration: MediaDuration) throws {
            let end = now + duration
            while now < end {
                if now >= nextFrame {
                    let frame = [UInt8](repeating: UInt8(truncatingIfNeeded: frameIndex), count: 6000)
                    try frame.withUnsafeBytes { bytes in
                        try sender.sendVideo(bytes, mediaTimestamp: UInt32(frameIndex * 4500), orientation: .up,
                                             at: now, transmit: transmit)
                    }
                    frameIndex += 1
                    nextFrame = nextFrame + .milliseconds(50)
                }
                sender.poll(at: now, transmit: transmit)
                for bytes in forward.arrivals(until: now) {
                    try receiver.receive(bytes, at: now, videoSSRC: sender.video.ssrc, rtxPayloadType: rtx ? 97 : nil)
                }
                let report = now >= nextReport
                if report { nextReport = nextReport + .milliseconds(200) }
                try receiver.feedback(at: now, videoSSRC: sender.video.ssrc, report: report, extra: extraFeedback) { bytes in
                    bytes.withUnsafeBytes { backward.send($0, at: now) }
                }
                extraFeedback = []
                for var bytes in backward.arrivals(until: now) {
                    let count = bytes.count
                    bytes += [UInt8](repeating: 0, count: 64)
                    bytes.withUnsafeMutableBytes { raw in
                        sender.handle(datagram: raw, count: count, at: now, transmit: transmit)
                    }
                }
                let wanted = sender.takeRequests()
                if wanted != SenderRequests() { requests.append((now, wanted)) }
                now = now + .milliseconds(5)
            }
        }
    }

    @Test func everyPacketLostOnTheWayIsRecoveredByNack() throws {
        let sim = try Simulation(loss: 5, seed: 11)
        try sim.run(for: .seconds(5))
        let stats = sim.sender.stats
        #expect(sim.forward.lost > 10, "the link lost \(sim.forward.lost)")
        #expect(stats.nacksReceived >= sim.forward.lost - 5)
        #expect(stats.packetsRetransmitted >= stats.nacksReceived - 5)
        // Everything up to the last second's packets arrived, the lost ones through resends.
        let expected = Int(sim.receiver.stats!.expected)
        #expect(sim.receiver.received.count >= expected - 3, "\(sim.receiver.received.count) of \(expected)")
        #expect(sim.receiver.nack.counters.recovered > 0)
        #expect(!sim.requests.contains { $0.1.keyframe }, "nothing needed a keyframe")
    }

    @Test func withRTXTheResendsComeOnTheRTXStreamAndFillTheHoles() throws {
        let sim = try Simulation(loss: 5, rtx: true, seed: 12)
        try sim.run(for: .seconds(5))
        #expect(sim.sender.rtx!.packetCount > 0)
        #expect(UInt64(sim.sender.rtx!.packetCount) == UInt64(sim.sender.stats.packetsRetransmitted))
        let expected = Int(sim.receiver.stats!.expected)
        #expect(sim.receiver.received.count >= expected - 3, "\(sim.receiver.received.count) of \(expected)")
    }

    @Test func aPacketNoLongerHeldCostsAKeyframe() throws {
        // 6 KB of history holds one frame: by the time a NACK comes back (40 ms RTT) the lost
        // packet's frame is gone.
        let sim = try Simulation(loss: 0, delay: .milliseconds(20), historyBytes: 6 << 10, seed: 13)
        sim.forward.loseIndices = [30]
        try sim.run(for: .seconds(1))
        #expect(sim.sender.stats.retransmitsMissed >= 1)
        #expect(sim.requests.contains { $0.1.keyframe })
    }

    @Test func pliAndFirAskForAKeyframeAtOnceAndRembCapsTheRate() throws {
        let sim = try Simulation(loss: 0, seed: 14)
        try sim.run(for: .milliseconds(500))
        let ssrc = sim.sender.video.ssrc
        sim.extraFeedback = [RTCPPictureLossIndication(sender: 1, media: ssrc),
                             RTCPREMB(sender: 1, bitrate: 350_000, ssrcs: [ssrc])]
        let sentAt = sim.now
        try sim.run(for: .milliseconds(100))
        let answer = try #require(sim.requests.first { $0.1.keyframe })
        // The request reaches the pipeline one link delay after it was sent: well within a
        // frame interval (50 ms).
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
        let rtt = try #require(sim.sender.stats.roundTripMicroseconds, "sender reports received: \(sim.receiver.senderReports)")
        // 30 ms each way, reports sent on a 5 ms grid: 60..70 ms.
        #expect(rtt >= 59_000 && rtt <= 71_000, "rtt \(rtt) µs")
        var rate = SendBitrateController(maximumKbps: 2000)
        for (at, wanted) in sim.requests {
            if let lost = wanted.videoFractionLost { rate.receiverReport(fractionLost: lost, now: at.microseconds) }
        }
        #expect(rate.decreases > 0)
        #expect(rate.targetKbps < 2000)
    }

    @Test func byeEndsTheStreamAtTheReceiver() throws {
        let sim = try Simulation(loss: 0, seed: 16)
        try sim.run(for: .milliseconds(300))
        sim.sender.finish(at: sim.now, transmit: sim.transmit)
        sim.now = sim.now + .milliseconds(50)
        for bytes in sim.forward.arrivals(until: sim.now) {
            try sim.receiver.receive(bytes, at: sim.now, videoSSRC: sim.sender.video.ssrc, rtxPayloadType: nil)
        }
        #expect(sim.receiver.byeReceived)
        #expect(sim.sender.nextDeadline == nil, "no more reports after the goodbye")
    }

    @Test func theSameSeedGivesTheSameCounters() throws {
        func counters() throws -> [Int] {
            let sim = try Simulation(loss: 7, seed: 17)
            try sim.run(for: .seconds(2))
            let s = sim.sender.stats
            return [s.packetsSent, s.nacksReceived, s.packetsRetransmitted, sim.forward.lost,
                    sim.receiver.received.count, Int(sim.sender.video.ssrc & 0xFFFF)]
        }
        #expect(try counters() == counters())
    }

    @Test func withKeysToComeNothingIsSentUntilTheyArrive() throws {
        var c = RTPSenderConfiguration()
        c.protection = .awaitingKeys
        let budget = try MemoryBudget(capBytes: RTPSender.budgetBytes(historyBytes: c.historyBytes) + (64 << 10))
        let sender = try RTPSender(configuration: c, budget: budget, random: RTPTestRNG(seed: 18))
        var sent = 0
        let frame = [UInt8](repeating: 1, count: 3000)
        try frame.withUnsafeBytes { bytes in
            try sender.sendVideo(bytes, mediaTimestamp: 0, orientation: .up, at: MediaTime(microseconds: 0)) { _, _ in sent += 1 }
        }
        #expect(sent == 0 && sender.droppedWhileConnecting == 1 && !sender.isConnected)
        #expect(sender.nextDeadline == nil)
        try sender.install(local: Self.key, remote: Self.key)
        let receiver = try Receiver()
        try frame.withUnsafeBytes { bytes in
            try sender.sendVideo(bytes, mediaTimestamp: 4500, orientation: .up, at: MediaTime(microseconds: 50_000)) { datagram, route in
                sent += 1
                #expect(route == .videoRTP)
                try? receiver.receive(Array(datagram), at: MediaTime(microseconds: 50_000), videoSSRC: sender.video.ssrc,
                                      rtxPayloadType: nil)
            }
        }
        #expect(sent == 3 && receiver.received.count == 3, "protected with the installed key")
    }
}
