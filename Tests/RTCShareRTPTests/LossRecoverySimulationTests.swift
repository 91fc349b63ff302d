import RTCShareCore
import RTCShareImpairment
@testable import RTCShareRTP
import TestSupport
import Testing

/// Loss recovery that follows the network, in fake time: `RTPSender` and `RTPReceiver` over an
/// `ImpairedPath` (the relay's model) at the round trips and loss patterns of real paths. The
/// receiver must learn the round trip, ask again one answer time apart, wait long enough for the
/// answers to be used, and ask for a keyframe only when a packet cannot come; the sender must
/// answer within its budget and not resend a packet twice within a round trip.
@Suite struct LossRecoverySimulationTests {
    typealias Simulation = RTPSenderSimulationTests.Simulation

    /// A simulation whose way to the receiver is `profile` (the way back: the same delay, no loss).
    static func simulation(_ profile: ImpairmentProfile, seed: UInt64, audio: Bool = false,
                           infersLoss: Bool = true, watchesUnfinishedFrames: Bool = true) throws -> Simulation {
        let sim = try Simulation(loss: 0, delay: profile.delay, audio: audio, infersLoss: infersLoss,
                                 watchesUnfinishedFrames: watchesUnfinishedFrames, seed: seed)
        sim.forward = ImpairedPath(profile: try profile.validated(), random: SeededRandom(seed: seed &+ 100))
        return sim
    }

    struct Figures: CustomStringConvertible {
        var framesSent = 0, framesWhole = 0
        var longestGap: MediaDuration = .zero
        var missing: UInt64 = 0, recovered: UInt64 = 0, givenUp: UInt64 = 0
        var bytesLost: UInt64 = 0, bytesRetransmitted: UInt64 = 0
        var rtt: Int64?
        var description: String {
            "frames \(framesWhole)/\(framesSent) whole, longest gap \(longestGap.microseconds / 1000) ms, "
                + "missing \(missing) recovered \(recovered) given up \(givenUp), "
                + "bytes lost \(bytesLost) retransmitted \(bytesRetransmitted), rtt \(rtt.map(String.init) ?? "-") µs"
        }
    }

    static func figures(_ sim: Simulation) -> Figures {
        var f = Figures()
        f.framesSent = sim.frameIndex - 10
        f.framesWhole = (0..<f.framesSent).filter { sim.receiver.holds(frame: $0) }.count
        // From the first frame handed out: the start waits for the first keyframe.
        for (a, b) in zip(sim.handedOut, sim.handedOut.dropFirst()) { f.longestGap = max(f.longestGap, b - a) }
        let n = sim.receiver.core.nackCounters
        f.missing = n.missing - n.reordered
        f.recovered = n.recovered
        f.givenUp = sim.receiver.core.stats.packetsLost
        f.bytesLost = sim.forward.statistics.bytesLost
        f.bytesRetransmitted = sim.sender.stats.bytesRetransmitted
        f.rtt = sim.receiver.core.smoothedRTTMicroseconds
        return f
    }

    /// Time frozen: the gaps between frames handed out beyond the 50 ms frame interval.
    static func frozen(_ sim: Simulation) -> MediaDuration {
        var frozen = MediaDuration.zero
        for (a, b) in zip(sim.handedOut, sim.handedOut.dropFirst()) where b - a > .milliseconds(50) {
            frozen = frozen + (b - a - .milliseconds(50))
        }
        return frozen
    }

    @Test func fivePercentRandomLossAt40msRTTKeepsNearlyEveryFrameWithoutFreezes() throws {
        var p = ImpairmentProfile()
        p.lossPercent = 5
        p.delay = .milliseconds(20)
        let sim = try Self.simulation(p, seed: 41)
        try sim.run(for: .seconds(30))
        let f = Self.figures(sim)
        #expect(f.missing > 100, "\(f)")
        print("random 5 %, 40 ms RTT, 30 s simulated: \(f)")
        #expect(f.framesWhole * 100 >= f.framesSent * 99, "\(f)")
        #expect(f.longestGap <= .milliseconds(200), "\(f)")
        #expect(f.recovered * 100 >= f.missing * 99, "\(f)")
        #expect(f.bytesRetransmitted * 2 <= f.bytesLost * 3, "\(f)")
        // The round trip it learnt is the path's (40 ms) plus the 5 ms steps of the simulation.
        let rtt = try #require(f.rtt)
        #expect(rtt >= 40_000 && rtt <= 60_000, "\(f)")
    }

    /// The last packets of a frame are found lost from the audio packets' transport-wide numbers
    /// (the next audio packet, ≤ 20 ms) instead of from the next frame (50 ms), so their resends
    /// come sooner. Same path, same seeds, with and without the inference (the watch for
    /// unfinished frames off in both, so the figures are the transport-wide numbers' alone).
    @Test func videoLostAfterTheNewestPacketIsAskedForFromTheAudiosTransportWideGap() throws {
        var p = ImpairmentProfile()
        p.lossPercent = 5
        p.delay = .milliseconds(20)
        for seed: UInt64 in [43, 44, 45] {
            var results: [(Figures, NackGenerator.Counters, TransportStats, MediaDuration)] = []
            for infers in [true, false] {
                let sim = try Self.simulation(p, seed: seed, audio: true, infersLoss: infers, watchesUnfinishedFrames: false)
                try sim.run(for: .seconds(30))
                let frozen = Self.frozen(sim)
                results.append((Self.figures(sim), sim.receiver.core.nackCounters, sim.sender.stats, frozen))
            }
            let (with, n, tx, frozen) = results[0]
            let (without, n0, _, frozen0) = results[1]
            print("seed \(seed): inferring: \(with), frozen \(frozen.microseconds / 1000) ms, inferred \(n.inferred) "
                  + "answered \(n.inferredAnswered) confirmed \(n.inferredConfirmed) unasked \(n.inferredUnasked) "
                  + "dropped \(n.inferredDropped), NACKs ahead of sent \(tx.nacksAheadOfSent); "
                  + "not inferring: \(without), frozen \(frozen0.microseconds / 1000) ms")
            #expect(n0.inferred == 0)
            // Inferred and then shown lost by the next frame (its answer comes after it at this
            // round trip), or answered before it: either way asked for before the next frame.
            #expect(n.inferredConfirmed + n.inferredAnswered >= 10, "tail losses asked for early")
            // A guess without a video loss behind it (the gap was a lost second copy of a resend)
            // is rare and costs nothing but a NACK the sender ignores.
            #expect((n.inferredDropped + n.inferredUnasked) * 10 <= n.inferred, "few guesses without a loss behind them")
            #expect(tx.retransmitsMissed == 0, "no NACK for a number not sent cost a keyframe")
            #expect(with.framesWhole * 100 >= with.framesSent * 99, "\(with)")
            #expect(with.longestGap <= .milliseconds(200), "\(with)")
            #expect(with.bytesRetransmitted * 2 <= with.bytesLost * 3, "\(with)")
            #expect(frozen < frozen0, "inferring: \(frozen.microseconds) µs frozen, not: \(frozen0.microseconds)")
        }
    }

    /// A frame whose packets stop before its last (no marker bit) has lost its tail: the next
    /// number is asked for a few packet spacings later, not when the next frame shows the gap.
    /// Same path and seeds (video only, so no transport-wide numbers), with and without.
    @Test func aFrameWhoseLastPacketDoesNotFollowIsAskedForAtOnce() throws {
        var p = ImpairmentProfile()
        p.lossPercent = 5
        p.delay = .milliseconds(20)
        for seed: UInt64 in [46, 47] {
            var frozenBy: [Bool: MediaDuration] = [:]
            for watches in [true, false] {
                let sim = try Self.simulation(p, seed: seed, watchesUnfinishedFrames: watches)
                try sim.run(for: .seconds(30))
                let frozen = Self.frozen(sim)
                frozenBy[watches] = frozen
                let f = Self.figures(sim)
                let n = sim.receiver.core.nackCounters
                let unfinished = sim.receiver.core.stats.unfinishedFrames
                print("seed \(seed), watching \(watches): \(f), frozen \(frozen.microseconds / 1000) ms, "
                      + "unfinished frames \(unfinished), inferred \(n.inferred) answered \(n.inferredAnswered) "
                      + "confirmed \(n.inferredConfirmed) unasked \(n.inferredUnasked) dropped \(n.inferredDropped)")
                if watches {
                    #expect(unfinished >= 5, "tails found lost before the next frame")
                    #expect(n.inferredConfirmed + n.inferredAnswered >= 5)
                    // A packet merely slow is rare: it arrives unasked or is answered needlessly.
                    #expect((n.inferredDropped + n.inferredUnasked) * 10 <= n.inferred, "few guesses without a loss")
                    #expect(sim.sender.stats.retransmitsMissed == 0)
                    #expect(f.framesWhole * 100 >= f.framesSent * 99, "\(f)")
                    #expect(f.bytesRetransmitted * 2 <= f.bytesLost * 3, "\(f)")
                } else {
                    #expect(unfinished == 0 && n.inferred == 0)
                }
            }
            #expect(frozenBy[true]! < frozenBy[false]!, "watching: \(frozenBy[true]!.microseconds) µs, not: \(frozenBy[false]!.microseconds)")
        }
    }

    @Test func twoPercentBurstyLossAt100msRTTRecoversNinetyFivePercent() throws {
        var p = ImpairmentProfile()
        p.burstLossPercent = 2
        p.meanBurstLength = 5
        p.delay = .milliseconds(50)
        let sim = try Self.simulation(p, seed: 42)
        try sim.run(for: .seconds(30))
        let f = Self.figures(sim)
        #expect(f.missing > 20, "\(f)")
        print("bursty 2 %, 100 ms RTT, 30 s simulated: \(f)")
        #expect(f.recovered * 100 >= f.missing * 95, "\(f)")
        #expect(f.longestGap <= .milliseconds(500), "\(f)")
        #expect(f.bytesRetransmitted * 2 <= f.bytesLost * 3, "\(f)")
        #expect(sim.receiver.core.stats.lateRetransmissions == 0, "answers came in time: \(sim.receiver.core.stats)")
    }

    @Test func theFirstLossesBeforeAnyRoundTripIsKnownAreRecoveredAtAFarRoundTrip() throws {
        // 140 ms each way, far above the 100 ms the receiver assumes, and two packets of the first
        // keyframe lost: asked for before any round trip is known, they must still be waited
        // for and used, with no keyframe request.
        let sim = try Simulation(loss: 0, delay: .milliseconds(140), seed: 43)
        sim.forwardLosesIndices = [2, 3]
        try sim.run(for: .seconds(3))
        let rx = sim.receiver.core
        #expect(rx.nackCounters.recovered == 2, "\(rx.nackCounters) \(rx.stats)")
        #expect(rx.stats.packetsLost == 0 && rx.stats.plis == 0, "\(rx.stats)")
        #expect(sim.receiver.holds(frame: 0))
        let rtt = try #require(rx.smoothedRTTMicroseconds)
        #expect(rtt >= 280_000 && rtt <= 300_000, "learnt \(rtt) µs")
    }

    @Test func aNackStormIsAnsweredWithinTheBudgetAndDuplicateNacksAreNotResentWithinARoundTrip() throws {
        var p = ImpairmentProfile()
        p.delay = .milliseconds(20)
        let sim = try Self.simulation(p, seed: 44)
        try sim.run(for: .seconds(2))
        let before = sim.sender.stats
        let start = sim.now
        // A hostile receiver asks for the 200 newest packets every 20 ms for 5 s.
        while sim.now - start < .seconds(5) {
            let newest = sim.sender.video.nextSequenceNumber &- 1
            let numbers = (0..<200).map { newest &- UInt16($0) }
            try sim.receiver.inject([RTCPGenericNack(sender: 1, media: sim.sender.video.ssrc,
                                                     entries: RTCPNackEntry.minimalEntries(lost: numbers))])
            try sim.run(for: .milliseconds(20))
        }
        let after = sim.sender.stats
        let media = (after.bytesSent - before.bytesSent) - (after.bytesRetransmitted - before.bytesRetransmitted)
        let resent = after.bytesRetransmitted - before.bytesRetransmitted
        let c = sim.sender.configuration
        let burst = UInt64(max(2 * (c.mtu + 64), c.retransmitFloorBytesPerSecond * c.retransmitBurstMilliseconds / 1000))
        // The share of what went out first-hand over the storm, plus one burst at its start.
        let allowed = media * UInt64(c.retransmitSharePercent) / 100 + 4 * burst
        #expect(resent <= allowed, "resent \(resent) bytes, allowed \(allowed) (media \(media))")
        #expect(resent >= media * UInt64(c.retransmitSharePercent) / 200, "the budget is used: \(resent) of \(media)")
        #expect(after.retransmitsOverBudget > before.retransmitsOverBudget)
        #expect(after.retransmitsSuppressed > before.retransmitsSuppressed, "NACKs within a round trip are not resent")
        // The real media still flows: frames keep coming whole.
        #expect(sim.receiver.holds(frame: sim.frameIndex - 3))
    }

    @Test func nacksOverTheBudgetAreOwedAndResentAsItRefillsNotForgotten() throws {
        // A receiver that asks once (aiortc asks again only when a new gap appears): a NACK for
        // more than a burst of the budget must still be answered in full, at the budget's rate.
        let sim = try Self.simulation(ImpairmentProfile(), seed: 45)
        try sim.run(for: .seconds(2))
        let before = sim.sender.stats
        let newest = sim.sender.video.nextSequenceNumber &- 1
        // Half a second of video: paid well within the time the history holds it (~2 s here).
        let numbers = (0..<50).map { newest &- UInt16($0) }
        let nack = [RTCPGenericNack(sender: 1, media: sim.sender.video.ssrc, entries: RTCPNackEntry.minimalEntries(lost: numbers))]
        try sim.receiver.inject(nack)
        // Asked again before anything was paid: owed once, not twice.
        try sim.receiver.inject(nack)
        try sim.run(for: .milliseconds(1))
        let first = sim.sender.stats
        let owed = first.retransmitsDeferred - before.retransmitsDeferred
        #expect(owed > 30, "what the budget holds goes at once, the rest is owed: \(owed) owed")
        #expect(first.packetsRetransmitted - before.packetsRetransmitted + owed == 50)
        try sim.run(for: .seconds(5))
        let after = sim.sender.stats
        #expect(after.deferredRetransmitted - before.deferredRetransmitted == owed, "every owed packet resent")
        #expect(after.packetsRetransmitted - before.packetsRetransmitted == 50, "each once")
        #expect(after.retransmitsMissed == before.retransmitsMissed)
        // Paid at the budget's rate: its share of what went first-hand over the ~5 s, plus one
        // burst (half a second of that rate: a tenth of it, taken as a fifth).
        let media = (after.bytesSent - before.bytesSent) - (after.bytesRetransmitted - before.bytesRetransmitted)
        let share = media * UInt64(sim.sender.configuration.retransmitSharePercent) / 100
        let resent = after.bytesRetransmitted - before.bytesRetransmitted
        #expect(resent <= share + share / 5, "resent \(resent), share of media \(share)")
    }
}
