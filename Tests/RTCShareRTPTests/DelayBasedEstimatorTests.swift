@testable import RTCShareRTP
import Testing

/// The delay-based estimator fed synthetic feedback: a path whose delay is steady, one whose
/// queue grows, and the AIMD rules.
@Suite struct DelayBasedEstimatorTests {
    /// Packets of 1200 bytes sent every `interval` µs for `seconds`; the arrival of packet i is
    /// its send time + 20 ms + `queue(i)`. Feedback every 50 ms. Returns the estimate after.
    func feed(_ e: inout DelayBasedEstimator, interval: Int64, seconds: Int64, from start: Int64 = 0,
              queue: (Int64) -> Int64) -> [Int] {
        var estimates: [Int] = []
        var t = start
        var nextFeedback = start + 50_000
        var i: Int64 = 0
        while t < start + seconds * 1_000_000 {
            e.packetReceived(sentAt: t, arrivedAt: t + 20_000 + queue(t - start), bytes: 1200)
            t += interval
            i += 1
            if t >= nextFeedback {
                estimates.append(e.feedbackProcessed(now: t + 40_000, roundTrip: 40_000))
                nextFeedback += 50_000
            }
        }
        return estimates
    }

    @Test func aSteadyPathIsNeverTakenForOveruse() {
        // 960 kbit/s sent, constant delay: the estimate only grows, within 1.5 × what arrives.
        var e = DelayBasedEstimator(startKbps: 500, maximumKbps: 5000)
        let estimates = feed(&e, interval: 10_000, seconds: 10) { _ in 0 }
        #expect(e.overuses == 0 && e.rate.decreases == 0)
        #expect(estimates == estimates.sorted(), "never falls")
        #expect(e.estimateKbps > 500 && e.estimateKbps <= 960 * 3 / 2 + 10 + 5)
        let acked = e.acknowledged.bitsPerSecond ?? 0
        #expect(acked > 900_000 && acked < 1_020_000, "acknowledged \(acked)")
    }

    @Test func aDeepQueueIsOveruseAfterATenthOfASecondAShallowOneOnlyAfterItsHold() {
        // A frame every 40 ms (too few groups for the trendline's first 0.3 s); from the second
        // one on the queue is `depth` deep and flat. When is the first cut?
        func firstCut(depth: Int64) -> Int64? {
            var e = DelayBasedEstimator(startKbps: 2500, maximumKbps: 2500)
            var t: Int64 = 0
            var nextFeedback: Int64 = 50_000
            while t < 600_000 {
                e.packetReceived(sentAt: t, arrivedAt: t + 20_000 + (t == 0 ? 0 : depth), bytes: 1200)
                t += 40_000
                if t >= nextFeedback {
                    e.feedbackProcessed(now: t + 40_000, roundTrip: 40_000)
                    if e.rate.decreases > 0 { return t }
                    nextFeedback += 50_000
                }
            }
            return nil
        }
        let deep = firstCut(depth: 80_000)
        #expect(deep != nil && deep! <= 250_000, "first cut at \(String(describing: deep)) µs")
        let shallow = firstCut(depth: 50_000)
        #expect(shallow == nil || shallow! >= 320_000, "first cut at \(String(describing: shallow)) µs")
    }

    @Test func aGrowingQueueIsOveruseAndTheRateFallsUnderWhatArrives() {
        // Sent at 2 Mbit/s into a 1 Mbit/s link: each packet waits 4.8 ms more than the one before.
        var e = DelayBasedEstimator(startKbps: 2000, maximumKbps: 2500)
        var arrivals: [Int64] = []
        _ = feed(&e, interval: 4_800, seconds: 1) { offset in
            let i = offset / 4_800
            let arrival = i * 9_600  // the link's pace
            arrivals.append(arrival)
            return arrival - offset
        }
        #expect(e.overuses >= 1 && e.rate.decreases >= 1)
        #expect(e.estimateKbps < 1000, "estimate \(e.estimateKbps)")
        #expect(e.estimateKbps >= 400)
    }

    @Test func theFirstDecreaseIsNearTheAcknowledgedRateAndLaterGrowthIsAdditive() {
        var r = AIMDRateControl(startBitsPerSecond: 2_000_000, minimumBitsPerSecond: 100_000, maximumBitsPerSecond: 3_000_000)
        r.update(.overusing, acknowledged: 1_000_000, roundTrip: 50_000, now: 0)
        #expect(r.bitsPerSecond == 850_000 && r.state == .hold)
        // A second overuse within the round trip does not cut again.
        r.update(.overusing, acknowledged: 1_000_000, roundTrip: 50_000, now: 20_000)
        #expect(r.bitsPerSecond == 850_000)
        // Near the rate it congested at: about a packet (9.4 kbit at this rate) per response time
        // (round trip + 100 ms = 0.6 s) a second, not 8 % (which would be 991 kbit/s by now).
        r.update(.normal, acknowledged: 850_000, roundTrip: 500_000, now: 1_000_000)
        r.update(.normal, acknowledged: 850_000, roundTrip: 500_000, now: 2_000_000)
        #expect(r.isNearCapacity)
        #expect(r.bitsPerSecond > 870_000 && r.bitsPerSecond < 890_000, "\(r.bitsPerSecond)")
        // Far above it (the path got faster): multiplicative again.
        var far = r
        far.update(.normal, acknowledged: 1_400_000, roundTrip: 50_000, now: 3_000_000)
        #expect(!far.isNearCapacity)
        // Underuse holds.
        let before = r.bitsPerSecond
        r.update(.underusing, acknowledged: 850_000, roundTrip: 50_000, now: 4_000_000)
        #expect(r.bitsPerSecond == before)
    }

    @Test func aCutDeepenedToDrainAQueueReturnsToThePlainCutOnceTheQueueIsGone() {
        // A start far above a 1 Mbit/s path: 300 ms of queue when overuse is seen.
        var r = AIMDRateControl(startBitsPerSecond: 2_500_000, minimumBitsPerSecond: 100_000, maximumBitsPerSecond: 2_500_000)
        r.update(.overusing, acknowledged: 1_000_000, roundTrip: 340_000, queueing: 300_000, now: 0)
        #expect(r.bitsPerSecond == 0.85 * 0.5 * 1_000_000, "deep enough to drain: \(r.bitsPerSecond)")
        #expect(r.afterDrainBitsPerSecond == 850_000)
        // Draining (underuse), then normal with the queue still long: held down.
        r.update(.underusing, acknowledged: 500_000, roundTrip: 300_000, queueing: 200_000, now: 300_000)
        r.update(.normal, acknowledged: 450_000, roundTrip: 200_000, queueing: 90_000, now: 600_000)
        #expect(r.bitsPerSecond == 425_000 && r.state == .hold)
        // The queue is gone: back to the plain cut at once, then additive growth from there.
        r.update(.normal, acknowledged: 430_000, roundTrip: 50_000, queueing: 10_000, now: 900_000)
        #expect(r.bitsPerSecond >= 850_000 && r.bitsPerSecond < 860_000, "\(r.bitsPerSecond)")
        #expect(r.afterDrainBitsPerSecond == nil)
        r.update(.normal, acknowledged: 850_000, roundTrip: 50_000, queueing: 10_000, now: 1_900_000)
        #expect(r.bitsPerSecond > 860_000 && r.bitsPerSecond < 920_000, "additive near capacity: \(r.bitsPerSecond)")
        // A cut with no queue to drain leaves nothing to return to.
        var shallow = AIMDRateControl(startBitsPerSecond: 2_000_000, minimumBitsPerSecond: 100_000, maximumBitsPerSecond: 3_000_000)
        shallow.update(.overusing, acknowledged: 1_000_000, roundTrip: 50_000, queueing: 20_000, now: 0)
        #expect(shallow.bitsPerSecond == 850_000 && shallow.afterDrainBitsPerSecond == nil)
    }
}

/// An overuse verdict while the encoder offers much less than the estimate (big frames at a low
/// frame rate) does not take the estimate down to what was offered.
@Suite struct ApplicationLimitedDecreaseTests {
    @Test func anApplicationLimitedSenderIsCutFromTheEstimateNotFromWhatItOffered() {
        var r = AIMDRateControl(startBitsPerSecond: 900_000, minimumBitsPerSecond: 100_000, maximumBitsPerSecond: 3_000_000)
        // The encoder made 300 kbit/s; the path took all of it with no queue.
        r.update(.overusing, acknowledged: 300_000, roundTrip: 50_000, queueing: 5_000, sent: 300_000, now: 0)
        #expect(r.bitsPerSecond >= 0.85 * 0.85 * 900_000 - 1, "\(r.bitsPerSecond)")
        #expect(r.decreases == 1 && r.state == .hold)
        // A sender that filled its estimate and met a queue is cut from what arrived.
        var full = AIMDRateControl(startBitsPerSecond: 900_000, minimumBitsPerSecond: 100_000, maximumBitsPerSecond: 3_000_000)
        full.update(.overusing, acknowledged: 600_000, roundTrip: 50_000, queueing: 5_000, sent: 880_000, now: 0)
        #expect(full.bitsPerSecond == 0.85 * 600_000)
        // Application-limited but with a standing queue behind it: the queue is real, the cut too.
        var queued = AIMDRateControl(startBitsPerSecond: 900_000, minimumBitsPerSecond: 100_000, maximumBitsPerSecond: 3_000_000)
        queued.update(.overusing, acknowledged: 300_000, roundTrip: 50_000, queueing: 60_000, sent: 300_000, now: 0)
        #expect(queued.bitsPerSecond < 300_000)
    }

    @Test func theEstimatorTellsTheRateControlWhatWasSent() {
        // A 1875-byte frame every 50 ms in two packets 10 ms apart (300 kbit/s), no queue: after
        // a second the sent rate is known and close to 300 kbit/s.
        var e = DelayBasedEstimator(startKbps: 900, maximumKbps: 3000)
        var t: Int64 = 0
        while t < 1_000_000 {
            e.packetReceived(sentAt: t, arrivedAt: t + 20_000, bytes: 937)
            e.packetReceived(sentAt: t + 10_000, arrivedAt: t + 30_000, bytes: 938)
            t += 50_000
        }
        let sent = e.sent.bitsPerSecond ?? 0
        #expect(sent > 250_000 && sent < 350_000, "\(sent)")
    }
}
