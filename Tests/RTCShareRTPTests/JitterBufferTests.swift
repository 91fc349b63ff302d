import RTCShareCore
import TestSupport
import Testing
@testable import RTCShareRTP

/// The reorder buffer with a fake clock (plain microsecond numbers): order, duplicates, the
/// wait for a missing packet, wraps, overflow, and random arrival orders (property test).
@Suite struct JitterBufferTests {
    /// A minimal RTP packet with sequence number `seq`: 12-byte header + 2 payload bytes.
    static func packet(_ seq: UInt16) -> [UInt8] {
        [0x80, 96, UInt8(seq >> 8), UInt8(seq & 0xFF), 0, 0, 0, 1, 0, 0, 0, 7, UInt8(seq >> 8), UInt8(seq & 0xFF)]
    }

    static func make(capacity: Int = 64, wait: Int64 = 60_000) throws -> JitterBuffer {
        try JitterBuffer(budget: MemoryBudget(capBytes: 1 << 20, prefault: false), capacity: capacity,
                         slotBytes: 1500, waitMicroseconds: wait)
    }

    static func insert(_ jb: inout JitterBuffer, _ seq: UInt16, at now: Int64) -> JitterBuffer.InsertResult {
        packet(seq).withUnsafeBytes { jb.insert($0, sequenceNumber: seq, now: now) }
    }

    /// Pops everything due; "p<seq>" for a packet (its bytes checked), "l<seq>" for a loss.
    static func drain(_ jb: inout JitterBuffer, at now: Int64) -> [String] {
        var out: [String] = []
        while let o = jb.pop(now: now) {
            switch o {
            case .packet(let seq, _, let length):
                let bytes = jb.withPacket(o) { Array($0) }
                #expect(bytes == packet(seq) && length == 14)
                out.append("p\(seq)")
            case .lost(let seq):
                out.append("l\(seq)")
            }
        }
        return out
    }

    @Test func packetsInOrderComeOutAtOnce() throws {
        var jb = try Self.make()
        for s: UInt16 in 10...12 { #expect(Self.insert(&jb, s, at: 0) == .stored) }
        #expect(Self.drain(&jb, at: 0) == ["p10", "p11", "p12"])
        #expect(jb.nextDeadline == nil)
    }

    @Test func reorderedPacketIsPutBackInPlace() throws {
        var jb = try Self.make()
        _ = Self.insert(&jb, 10, at: 0)
        _ = Self.insert(&jb, 12, at: 1_000)
        #expect(Self.drain(&jb, at: 1_000) == ["p10"])
        #expect(jb.nextDeadline == 61_000)
        _ = Self.insert(&jb, 11, at: 5_000)
        #expect(Self.drain(&jb, at: 5_000) == ["p11", "p12"])
    }

    @Test func gapIsDeclaredLostOnlyAfterTheWait() throws {
        var jb = try Self.make(wait: 60_000)
        _ = Self.insert(&jb, 100, at: 0)
        _ = Self.insert(&jb, 102, at: 10_000)
        #expect(Self.drain(&jb, at: 69_999) == ["p100"])
        #expect(Self.drain(&jb, at: 70_000) == ["l101", "p102"])
        #expect(jb.counters.lost == 1)
        // Too late now.
        #expect(Self.insert(&jb, 101, at: 80_000) == .late)
    }

    @Test func duplicatesAreDroppedAndCounted() throws {
        var jb = try Self.make()
        _ = Self.insert(&jb, 5, at: 0)
        _ = Self.insert(&jb, 7, at: 0)
        #expect(Self.insert(&jb, 7, at: 0) == .duplicate)
        #expect(jb.counters.duplicates == 1)
    }

    @Test func sequenceWrapContinuesInOrder() throws {
        var jb = try Self.make()
        for s: UInt16 in [65_534, 0, 65_535, 1] { _ = Self.insert(&jb, s, at: 0) }
        #expect(Self.drain(&jb, at: 0) == ["p65534", "p65535", "p0", "p1"])
    }

    @Test func farAheadPacketForcesOutTheOldestWithoutOverwriting() throws {
        var jb = try Self.make(capacity: 16)
        _ = Self.insert(&jb, 0, at: 0)
        _ = Self.insert(&jb, 2, at: 0)
        // 20 is past 0 + 16: numbers below 5 must go out at once.
        #expect(Self.insert(&jb, 20, at: 1) == .stored)
        let out = Self.drain(&jb, at: 1)
        #expect(out == ["p0", "l1", "p2", "l3", "l4"])
        #expect(jb.counters.forcedOut == 5)
    }

    @Test func tooLargeOrTooShortIsRefused() throws {
        var jb = try Self.make()
        let short: [UInt8] = [0x80, 96, 0]
        #expect(short.withUnsafeBytes { jb.insert($0, sequenceNumber: 0, now: 0) } == .tooLarge)
        let big = [UInt8](repeating: 0x80, count: 1601)
        #expect(big.withUnsafeBytes { jb.insert($0, sequenceNumber: 0, now: 0) } == .tooLarge)
    }

    /// Property: any arrival order with random losses and duplicates, waited out, hands every
    /// number out exactly once, in order, as a packet iff it arrived.
    @Test func randomArrivalOrderComesOutInOrderExactlyOnce() throws {
        var rng = SeededRandom(seed: 42)
        for round in 0..<50 {
            var jb = try Self.make(capacity: 128, wait: 50_000)
            let start = UInt16.random(in: 0...UInt16.max, using: &rng)
            let n = 100
            var arrived = Set<UInt16>()
            var order: [UInt16] = []
            for i in 0..<n {
                let s = start &+ UInt16(i)
                if Int.random(in: 0..<10, using: &rng) == 0 && i > 0 { continue }  // lost
                arrived.insert(s)
                order.append(s)
                if Int.random(in: 0..<10, using: &rng) == 0 { order.append(s) }  // duplicate
            }
            // Local reordering: swap neighbours at random (never the first packet).
            for i in 1..<max(order.count - 1, 1) where Int.random(in: 0..<4, using: &rng) == 0 {
                order.swapAt(i, i + 1)
            }
            var out: [String] = []
            var t: Int64 = 0
            for s in order {
                _ = Self.insert(&jb, s, at: t)
                out += Self.drain(&jb, at: t)
                t += 1_000
            }
            out += Self.drain(&jb, at: t + 1_000_000)
            let expected = (0..<n).map { i -> String in
                let s = start &+ UInt16(i)
                return (arrived.contains(s) ? "p" : "l") + "\(s)"
            }
            // Trailing losses are never seen as holes (nothing after them arrived).
            let trimmed = Array(expected.prefix(out.count))
            #expect(out == trimmed, "round \(round)")
            #expect(out.count >= order.count / 2)
        }
    }
}

extension JitterBufferTests {
    @Test func restartedSenderFarBehindIsFollowedAfterTwoPackets() throws {
        var jb = try Self.make(capacity: 16)
        for s: UInt16 in 30_000...30_003 { _ = Self.insert(&jb, s, at: 0) }
        _ = Self.drain(&jb, at: 0)
        #expect(Self.insert(&jb, 100, at: 1) == .late)
        #expect(Self.insert(&jb, 101, at: 2) == .stored)
        #expect(Self.insert(&jb, 102, at: 3) == .stored)
        #expect(Self.drain(&jb, at: 3) == ["p101", "p102"])
        #expect(jb.counters.resyncs == 1)
    }
}
