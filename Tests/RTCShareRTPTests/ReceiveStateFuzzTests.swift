import RTCShareCore
import TestSupport
import Testing
@testable import RTCShareRTP

/// Random sequence numbers, times and lengths into the receive-side state machines (the jitter
/// buffer, the NACK generator, the receive statistics): none traps, and the jitter buffer's
/// oracle holds — what it hands out is in strictly increasing order, each number once (between
/// resyncs to a restarted sender's numbers).
@Suite struct ReceiveStateFuzzTests {
    @Test func randomArrivalsNeverTrapAndComeOutInOrder() throws {
        var rng = SeededRandom(seed: 7)
        let budget = try MemoryBudget(capBytes: 4 << 20, prefault: false)
        for _ in 0..<8 {
            var jb = try JitterBuffer(budget: budget, capacity: 32, slotBytes: 200, waitMicroseconds: 10_000)
            var nack = NackGenerator()
            var stats = ReceiveStatistics(ssrc: 1, clockRate: 90_000)
            var out = [UInt16](repeating: 0, count: 16)
            var t: Int64 = 0
            var base = UInt16.random(in: 0...UInt16.max, using: &rng)
            var lastOut: Int64? = nil
            var extendedOut: Int64 = 0
            var resyncs: UInt64 = 0
            for _ in 0..<1_000 {
                // Mostly near the previous number, sometimes anywhere (a jump, a restart).
                let seq: UInt16 = Int.random(in: 0..<20, using: &rng) == 0
                    ? UInt16.random(in: 0...UInt16.max, using: &rng)
                    : base &+ UInt16(truncatingIfNeeded: Int.random(in: -40...60, using: &rng))
                base = seq
                let length = Int.random(in: 0...260, using: &rng)
                let bytes = rng.bytes(length)
                _ = bytes.withUnsafeBytes { jb.insert($0, sequenceNumber: seq, now: t) }
                nack.packetReceived(sequenceNumber: seq, now: t)
                stats.received(sequenceNumber: seq, rtpTimestamp: UInt32.random(in: 0...UInt32.max, using: &rng),
                               arrival: t)
                if jb.counters.resyncs != resyncs {
                    // Started over at a restarted sender's numbers: the order restarts too.
                    resyncs = jb.counters.resyncs
                    lastOut = nil
                }
                while let o = jb.pop(now: t) {
                    let s: UInt16
                    switch o {
                    case .packet(let q, _, let n):
                        s = q
                        let copy = jb.withPacket(o) { Array($0) }
                        #expect(copy?.count == n)
                    case .lost(let q):
                        s = q
                        nack.abandon(sequenceNumber: q)
                    }
                    // Unwrap against the last one handed out: it must be the next number up.
                    if let last = lastOut {
                        let delta = Int64(Int16(bitPattern: s &- UInt16(truncatingIfNeeded: last)))
                        #expect(delta == 1)
                        extendedOut = last + delta
                    } else {
                        extendedOut = Int64(s)
                    }
                    lastOut = extendedOut
                }
                _ = out.withUnsafeMutableBufferPointer {
                    nack.collectDue(now: t, roundTripMicroseconds: Int64.random(in: 0...200_000, using: &rng), into: $0)
                }
                _ = nack.takeKeyframeRequest()
                if Int.random(in: 0..<50, using: &rng) == 0 { _ = stats.makeReportBlock(now: t) }
                t += Int64.random(in: 0...5_000, using: &rng)
            }
        }
    }
}
