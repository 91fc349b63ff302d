import RTCShareCore
import RTCShareImpairment
import RTCShareRTP
import RTCShareTransport
import Testing

/// The whole WebRTC transport between two ends in one process and fake time: ICE, DTLS, SRTP,
/// RTCP feedback and congestion control, over a seeded impaired link (`TwoPeerSimulation`).
/// Beside, not instead of, the interop tests against aiortc and Janus.
@Suite struct TwoPeerTransportTests {
    static func seconds(_ s: Int64) -> MediaDuration { .seconds(s) }

    @Test func bothEndsConnectAndTheSenderIsToldToStartWithAKeyframe() throws {
        let sim = try TwoPeerSimulation(seed: 1)
        #expect(sim.sender.state == .connecting)
        sim.run(until: sim.now + Self.seconds(2))
        #expect(sim.sender.state == .connected)
        #expect(sim.answerer.state == .connected)
        let started = try #require(sim.senderRequests.first { $0.1.mediaStarted })
        #expect(started.1.keyframe)
        #expect(started.1.withoutTransportFeedback == false)
        // ICE's round trip before media: 20 ms each way.
        let rtt = try #require(started.1.pathRoundTripMicroseconds)
        #expect(rtt >= 40_000 && rtt < 45_000, "\(rtt) µs")
        // Media flowed: SRTP both ways (frames in, RTCP reports back).
        #expect(sim.framesReceived.count >= 20)
        #expect(sim.framesReceived.first?.isKeyframe == true)
        #expect((sim.sender.stats?.receiverReports ?? 0) >= 1)
        let measured = try #require(sim.sender.stats?.roundTripMicroseconds)
        // From the receiver reports (NTP short format: 1/65536 s steps).
        #expect(measured >= 39_000 && measured < 60_000, "\(measured) µs")
    }

    @Test func fivePercentLossIsRepairedByNACKAndRTX() throws {
        var lossy = ImpairmentProfile()
        lossy.lossPercent = 5
        let sim = try TwoPeerSimulation(seed: 7, mediaProfile: lossy)
        sim.run(until: sim.now + Self.seconds(12))
        let stats = try #require(sim.sender.stats)
        #expect(sim.lostToAnswerer > 20, "the link lost \(sim.lostToAnswerer)")
        #expect(stats.nacksReceived > 0)
        #expect(stats.packetsRetransmitted > 0)
        // 20 fps for ~12 s: every frame but those whose resends were lost too comes through, in
        // order (5 % loss squared, over a few packets a frame: a handful at most).
        let frames = sim.framesReceived
        #expect(frames.count >= 225, "\(frames.count) frames")
        let timestamps = frames.map(\.timestamp)
        #expect(timestamps == timestamps.sorted())
    }

    @Test func theTargetComesUnderACappedPathAndHoldsThere() throws {
        var capped = ImpairmentProfile()
        capped.rateBitsPerSecond = 600_000
        capped.queueBytes = 40_000
        let sim = try TwoPeerSimulation(seed: 3, mediaProfile: capped, maximumKbps: 1500)
        // The encoder's part, played simply: each frame is sized for the target the transport's
        // rate control made of its estimates (20 fps); the transport paces at it itself.
        var target = 1500
        var targets: [Int] = []
        var delayBased: [Int] = []
        sim.run(until: sim.now + Self.seconds(10), frameBytes: { n in n == 0 ? 15_000 : target * 1000 / 8 / 20 }) {
            requests, _ in
            if let estimate = requests.delayBasedKbps { delayBased.append(estimate) }
            guard let kbps = requests.targetKbps else { return }
            #expect(requests.maximumKbps == 1500)
            target = kbps
            targets.append(kbps)
        }
        #expect((sim.sender.stats?.transportFeedbackReceived ?? 0) > 50)
        #expect(delayBased.count > 50)
        // Under the cap, and not collapsed to the floor: the path's rate is found, not guessed.
        let settled = targets.suffix(20)
        #expect(!settled.isEmpty)
        #expect(settled.allSatisfy { $0 < 600 && $0 >= 250 }, "last targets: \(Array(settled))")
        // And the picture keeps coming: most of 10 s at 20 fps is decoded.
        #expect(sim.framesReceived.count >= 150, "\(sim.framesReceived.count) frames")
    }

    @Test func throughATenSecondOutageVideoIsHeldAndAKeyframeGoesAtOnceWhenFeedbackReturns() throws {
        let sim = try TwoPeerSimulation(seed: 11)
        // The bytes the sender has put on the wire, sampled at every step.
        var sent: [(MediaTime, UInt64)] = []
        let record: (TransportRequests, TwoPeerSimulation.Peer) -> Void = { _, peer in
            sent.append((sim.now, peer.stats?.bytesSent ?? 0))
        }
        func bytes(from: MediaTime, to: MediaTime) -> UInt64 {
            let a = sent.last { $0.0 <= from }?.1 ?? 0
            let b = sent.last { $0.0 <= to }?.1 ?? 0
            return b - a
        }
        sim.run(until: sim.now + Self.seconds(5), pipeline: record)
        #expect(sim.bothConnected)
        let before = try #require(sim.sender.stats)
        #expect(before.feedbackReturns == 0, "reports and transport-wide feedback on time: no outage")
        let cut = sim.now
        sim.changeLinks { $0.lossPercent = 100 }
        sim.run(until: cut + Self.seconds(10), pipeline: record)
        let back = sim.now
        let lostInOutage = sim.lostToAnswerer
        sim.changeLinks { $0.lossPercent = 0 }
        sim.run(until: back + Self.seconds(4), pipeline: record)
        let stats = try #require(sim.sender.stats)
        // ICE consent was kept through the outage: the share goes on.
        #expect(sim.sender.state == .connected && sim.answerer.state == .connected)
        // Video was held once the silence passed the limit (1 s with feedback every 50 ms).
        #expect(stats.framesHeldWhileSilent >= 160, "\(stats.framesHeldWhileSilent) held")
        // Lost: about a second of 2 KB frames (two packets each), then a frame a second (the
        // probe a restarted receiver would answer), the sender reports and the consent requests
        // (two a second); not ten seconds of video.
        #expect(lostInOutage <= 130, "\(lostInOutage) datagrams lost")
        #expect(stats.feedbackReturns == 1)
        // The keyframe is asked for when the first feedback (RTCP or a consent answer) comes
        // back: a frame interval, a round trip and the receiver's reaction after the path.
        let returned = try #require(sim.senderRequests.first { $0.1.feedbackReturnedAfterMilliseconds != nil })
        #expect(returned.1.keyframe)
        #expect(returned.0 <= back + .milliseconds(300), "\((returned.0 - back).microseconds) µs after")
        // No flood: the two seconds after the return carry what two seconds before the outage
        // did (2 KB frames at 20 fps), the keyframe and the few resends of what was lost.
        let steady = bytes(from: cut - Self.seconds(2), to: cut)
        let after = bytes(from: back, to: back + Self.seconds(2))
        #expect(after <= steady + 25_000, "\(after) bytes after the return, \(steady) before the outage")
        #expect(stats.packetsRetransmitted - before.packetsRetransmitted <= lostInOutage)
        // The picture stood still for the outage and not much more.
        var longest = MediaDuration.zero
        for (a, b) in zip(sim.frameArrivals, sim.frameArrivals.dropFirst()) { longest = max(longest, b - a) }
        #expect(longest >= .seconds(10) && longest <= .seconds(10) + .milliseconds(500),
                "longest freeze \(longest.microseconds / 1_000) ms")
        // The receive core waits a playout delay for the resends of what was lost before it
        // skips to the keyframe.
        let key = try #require(sim.frameArrivals.indices.first { sim.frameArrivals[$0] > back && sim.framesReceived[$0].isKeyframe })
        #expect(sim.frameArrivals[key] <= back + .milliseconds(600), "\((sim.frameArrivals[key] - back).microseconds) µs after")
    }

    @Test func theSendersGoodbyeAndCloseReachTheAnsweringEnd() throws {
        let sim = try TwoPeerSimulation(seed: 5)
        sim.run(until: sim.now + Self.seconds(2))
        #expect(sim.bothConnected)
        sim.closeSender(thenRunFor: .milliseconds(200))
        #expect(sim.answererRequests.contains { $0.1.peerLeft })
        #expect(sim.answerer.state == .failed(.dtlsClosed))
    }

    @Test func nothingIsSentInTheClearBeforeTheKeys() throws {
        let sim = try TwoPeerSimulation(seed: 9)
        // Before ICE and DTLS complete the send core drops media and counts it.
        let bytes = [UInt8](repeating: 0x10, count: 1000)
        bytes.withUnsafeBytes { raw in
            try? sim.sender.sendVideo(raw, mediaTimestamp: 0, orientation: .up, at: sim.now,
                                      output: NoOutput())
        }
        #expect(sim.sender.stats?.framesDroppedConnecting == 1)
        #expect(sim.sender.stats?.packetsSent == 0)
    }

    struct NoOutput: TransportOutput {
        func transmit(_ datagram: UnsafeRawBufferPointer, to destination: TransportDestination) {
            Issue.record("sent \(datagram.count) bytes to \(destination) before the keys")
        }
    }
}
