import Testing
@testable import RTCShareRTP

/// NACK timing with a fake clock: reorder wait, RTT-spaced retries, give-up → keyframe.
@Suite struct NackGeneratorTests {
    static func due(_ g: inout NackGenerator, at now: Int64, rtt: Int64? = nil) -> [UInt16] {
        var buf = [UInt16](repeating: 0, count: 64)
        let n = buf.withUnsafeMutableBufferPointer { g.collectDue(now: now, roundTripMicroseconds: rtt, into: $0) }
        return Array(buf[0..<n])
    }

    static var config: NackGenerator.Configuration {
        var c = NackGenerator.Configuration()
        c.reorderWaitMicroseconds = 5_000
        c.minimumRetrySpacingMicroseconds = 20_000
        c.maxTries = 3
        return c
    }

    @Test func gapIsNackedAfterTheReorderWait() {
        var g = NackGenerator(configuration: Self.config)
        g.packetReceived(sequenceNumber: 10, now: 0)
        g.packetReceived(sequenceNumber: 13, now: 1_000)
        #expect(g.missingCount == 2)
        #expect(Self.due(&g, at: 5_999).isEmpty)
        #expect(Self.due(&g, at: 6_000) == [11, 12])
        #expect(g.counters.nacked == 2)
        #expect(g.nextDeadline == 26_000)
    }

    @Test func reorderedPacketIsNeverNacked() {
        var g = NackGenerator(configuration: Self.config)
        g.packetReceived(sequenceNumber: 10, now: 0)
        g.packetReceived(sequenceNumber: 12, now: 0)
        let r = g.packetReceived(sequenceNumber: 11, now: 1_000)
        #expect(r == nil)
        #expect(Self.due(&g, at: 100_000).isEmpty)
        #expect(g.counters.reordered == 1)
    }

    @Test func retriesAreSpacedByRTTAndRecoveryIsReported() {
        var g = NackGenerator(configuration: Self.config)
        g.packetReceived(sequenceNumber: 1, now: 0)
        g.packetReceived(sequenceNumber: 3, now: 0)
        #expect(Self.due(&g, at: 5_000, rtt: 40_000) == [2])
        // Spacing = max(20 ms, 1.5 × 40 ms) = 60 ms.
        #expect(Self.due(&g, at: 64_999, rtt: 40_000).isEmpty)
        #expect(Self.due(&g, at: 65_000, rtt: 40_000) == [2])
        let r = g.packetReceived(sequenceNumber: 2, now: 70_000)
        #expect(r == 65_000)
        #expect(g.counters.recovered == 1)
        #expect(g.counters.requests == 2)
        #expect(g.missingCount == 0)
    }

    @Test func givingUpAsksForAKeyframe() {
        var g = NackGenerator(configuration: Self.config)
        g.packetReceived(sequenceNumber: 1, now: 0)
        g.packetReceived(sequenceNumber: 3, now: 0)
        var t: Int64 = 5_000
        for _ in 0..<3 {
            #expect(Self.due(&g, at: t) == [2])
            t += 20_000
        }
        let early = g.takeKeyframeRequest()
        #expect(!early)
        #expect(Self.due(&g, at: t).isEmpty)
        let wanted = g.takeKeyframeRequest(), again = g.takeKeyframeRequest()
        #expect(wanted && !again)
        #expect(g.counters.givenUp == 1)
        #expect(g.nextDeadline == nil)
    }

    @Test func abandonedNumberIsNotAskedForAgain() {
        var g = NackGenerator(configuration: Self.config)
        g.packetReceived(sequenceNumber: 65_535, now: 0)
        g.packetReceived(sequenceNumber: 1, now: 0)  // 0 missing, across the wrap
        #expect(Self.due(&g, at: 5_000) == [0])
        g.abandon(sequenceNumber: 0)
        #expect(Self.due(&g, at: 100_000).isEmpty)
        let wanted = g.takeKeyframeRequest()
        #expect(!wanted)
    }

    @Test func gapWiderThanTheRingTracksTheNewestAndAsksForAKeyframe() {
        var c = Self.config
        c.capacity = 8
        var g = NackGenerator(configuration: c)
        g.packetReceived(sequenceNumber: 0, now: 0)
        g.packetReceived(sequenceNumber: 100, now: 0)
        #expect(g.missingCount == 8)
        let wanted = g.takeKeyframeRequest()
        #expect(wanted)
        #expect(Self.due(&g, at: 5_000) == Array(92...99))
    }

    @Test func keyframeRequestsAreRateLimited() {
        var k = KeyframeRequestLimiter(minimumIntervalMicroseconds: 300_000)
        k.request()
        let a = k.takeDue(now: 0)
        k.request()
        let b = k.takeDue(now: 100_000)
        #expect(a && !b)
        #expect(k.nextDeadline == 300_000)
        let c = k.takeDue(now: 300_000)
        k.request()
        k.keyframeReceived()
        let d = k.takeDue(now: 1_000_000)
        #expect(c && !d)
        #expect(k.sent == 2)
    }
}

extension NackGeneratorTests {
    @Test func restartedSenderIsFollowedAndOldHolesForgotten() {
        var g = NackGenerator(configuration: Self.config)
        g.packetReceived(sequenceNumber: 40_000, now: 0)
        g.packetReceived(sequenceNumber: 40_002, now: 0)  // 40 001 missing
        // 20 000 is 20 002 behind (more than 3000, less than half the number space).
        g.packetReceived(sequenceNumber: 20_000, now: 1_000)
        g.packetReceived(sequenceNumber: 20_001, now: 1_000)
        #expect(g.missingCount == 0)
        g.packetReceived(sequenceNumber: 20_003, now: 2_000)
        #expect(Self.due(&g, at: 10_000) == [20_002])
    }

    // MARK: numbers inferred missing above the highest

    @Test func anInferredNumberIsAskedForAfterTheReorderWaitAndItsAnswerIsARecoveryButNoRoundTrip() {
        var g = NackGenerator(configuration: Self.config)
        g.packetReceived(sequenceNumber: 10, now: 0)
        g.inferMissing(count: 1, now: 10_000)
        #expect(g.nextDeadline == 15_000)
        #expect(Self.due(&g, at: 14_999).isEmpty)
        #expect(Self.due(&g, at: 15_000) == [11])
        // Not counted as missing or asked for until it is known to have been lost.
        #expect(g.counters.missing == 0 && g.counters.nacked == 0 && g.counters.inferred == 1)
        let since = g.packetReceived(sequenceNumber: 11, now: 55_000)
        #expect(since == 40_000)
        #expect(g.lastRecoveryInferred)
        #expect(g.counters.missing == 1 && g.counters.nacked == 1 && g.counters.recovered == 1)
        #expect(g.counters.inferredAnswered == 1)
        #expect(g.nextDeadline == nil)
        // An ordinary recovery after it is an ordinary one again.
        g.packetReceived(sequenceNumber: 13, now: 60_000)
        _ = Self.due(&g, at: 65_000)
        #expect(g.packetReceived(sequenceNumber: 12, now: 100_000) == 35_000)
        #expect(!g.lastRecoveryInferred)
    }

    @Test func anInferredNumberConfirmedByAHigherOneKeepsItsRequestsAndIsNotAskedTwiceAtOnce() {
        var g = NackGenerator(configuration: Self.config)
        g.packetReceived(sequenceNumber: 100, now: 0)
        g.inferMissing(count: 2, now: 10_000)
        #expect(Self.due(&g, at: 15_000, rtt: 40_000) == [101, 102])
        // 103 arrives: 101 and 102 were lost, now known; 104 inferred nothing.
        g.packetReceived(sequenceNumber: 103, now: 50_000)
        #expect(g.counters.inferredConfirmed == 2)
        #expect(g.counters.missing == 2 && g.counters.nacked == 2)
        #expect(g.missingCount == 2)
        // Their next request is one spacing after the first (60 ms), not a reorder wait after 103.
        #expect(Self.due(&g, at: 55_000, rtt: 40_000).isEmpty)
        #expect(Self.due(&g, at: 75_000, rtt: 40_000) == [101, 102])
        #expect(g.packetReceived(sequenceNumber: 101, now: 80_000) == 65_000)
        #expect(!g.lastRecoveryInferred)
    }

    @Test func anInferredNumberThatNeverCameIsDroppedWithoutAKeyframeUntilAHigherOneShowsItLost() {
        var g = NackGenerator(configuration: Self.config)
        g.packetReceived(sequenceNumber: 7, now: 0)
        g.inferMissing(count: 1, now: 0)
        var t: Int64 = 5_000
        var asked = 0
        while t < 200_000 {
            asked += Self.due(&g, at: t).count
            t += 5_000
        }
        #expect(asked == 3, "maxTries")
        #expect(g.counters.inferredDropped == 1)
        let keyframeAfterDrop = g.takeKeyframeRequest()
        #expect(!keyframeAfterDrop)
        #expect(g.counters.givenUp == 0 && g.counters.missing == 0)
        // It did exist and was lost: that costs the keyframe now.
        g.packetReceived(sequenceNumber: 9, now: 210_000)
        #expect(g.counters.givenUp == 1)
        let keyframeWhenShownLost = g.takeKeyframeRequest()
        #expect(keyframeWhenShownLost)
        #expect(g.missingCount == 0)
        #expect(g.counters.missing == 1)
    }

    @Test func anInferredNumberArrivingUnaskedWasNotLostAndTheInferenceIsBounded() {
        var g = NackGenerator(configuration: Self.config)
        g.packetReceived(sequenceNumber: 65_534, now: 0)
        g.inferMissing(count: 50, now: 1_000)
        #expect(g.counters.inferred == UInt64(NackGenerator.maxInferred))
        // Asking again for more (or the same) adds only numbers not yet inferred.
        g.inferMissing(count: 2, now: 2_000)
        #expect(g.counters.inferred == UInt64(NackGenerator.maxInferred))
        // The next two arrive across the wrap before their reorder wait ends.
        #expect(g.packetReceived(sequenceNumber: 65_535, now: 3_000) == nil)
        #expect(g.packetReceived(sequenceNumber: 0, now: 3_500) == nil)
        #expect(g.counters.inferredUnasked == 2)
        #expect(g.counters.missing == 0)
        #expect(Self.due(&g, at: 6_000) == [1, 2])
    }
}

