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
}
