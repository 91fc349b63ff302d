@testable import RTCShareRTP
import Testing

/// The send pacer in fake time: what it lets go when, how long its ring is, and how a long
/// queue drains.
@Suite struct PacerTests {
    /// Polls `pacer` every 100 µs from `start` until it is empty; the send times of each packet.
    func drain(_ pacer: inout Pacer, from start: Int64) -> [(Int64, UInt16)] {
        var out: [(Int64, UInt16)] = []
        var t = start
        while pacer.queuedPackets > 0 && t < start + 10_000_000 {
            while let s = pacer.next(at: t) { out.append((t, s)) }
            if let due = pacer.nextSendTime { #expect(due > t || pacer.queuedPackets == 0) }
            t += 100
        }
        return out
    }

    @Test func withoutATargetNothingWaits() {
        var p = Pacer(capacity: 1024)
        #expect(!p.isPacing)
        for s in 0..<5 { p.enqueue(UInt16(s), bytes: 1200) }
        var got: [UInt16] = []
        while let s = p.next(at: 0) { got.append(s) }
        #expect(got == [0, 1, 2, 3, 4] && p.nextSendTime == nil)
    }

    @Test func aBurstLeavesAtTwoAndAHalfTimesTheTargetInOrder() {
        var p = Pacer(capacity: 1024)
        p.setTarget(kbps: 1000, at: 0)  // 2.5 Mbit/s: 312.5 bytes per ms
        for s in 0..<20 { p.enqueue(UInt16(s), bytes: 1250) }
        let sent = drain(&p, from: 0)
        #expect(sent.map(\.1) == (0..<20).map(UInt16.init))
        // 25 000 bytes at 312.5 bytes/ms: 80 ms, never more than the 5 ms burst at once.
        let span = sent.last!.0 - sent.first!.0
        #expect(span >= 70_000 && span <= 85_000, "span \(span) µs")
        for (i, (t, _)) in sent.enumerated() {
            let sameTime = sent.filter { $0.0 == t }.count
            #expect(sameTime <= 2, "packet \(i) at \(t) with \(sameTime) at once")
        }
    }

    @Test func whileThePathHoldsTheTargetDownABigFrameLeavesAtOneAndAQuarterTimesIt() {
        var p = Pacer(capacity: 1024)
        p.setTarget(kbps: 800, constrained: true, at: 0)  // 1 Mbit/s: 125 bytes per ms
        for s in 0..<20 { p.enqueue(UInt16(s), bytes: 1250) }
        let sent = drain(&p, from: 0)
        #expect(sent.map(\.1) == (0..<20).map(UInt16.init))
        // 25 000 bytes at 125 bytes/ms: 200 ms (at 2.5 x it would be 80 ms, faster than the path).
        let span = sent.last!.0 - sent.first!.0
        #expect(span >= 185_000 && span <= 205_000, "span \(span) µs")
        // Back at the maximum: 2.5 x again.
        p.setTarget(kbps: 800, constrained: false, at: 1_000_000)
        for s in 20..<40 { p.enqueue(UInt16(s), bytes: 1250) }
        let again = drain(&p, from: 1_000_000)
        let span2 = again.last!.0 - again.first!.0
        #expect(span2 >= 85_000 && span2 <= 105_000, "span \(span2) µs")
    }

    @Test func audioAndResendsSentAtOnceMakeVideoWait() {
        var a = Pacer(capacity: 1024), b = Pacer(capacity: 1024)
        a.setTarget(kbps: 1000, at: 0)
        b.setTarget(kbps: 1000, at: 0)
        for s in 0..<10 {
            a.enqueue(UInt16(s), bytes: 1250)
            b.enqueue(UInt16(s), bytes: 1250)
        }
        // b: 2 KB of audio and resends went out unpaced first, in small pieces.
        for k in 0..<10 { b.charge(bytes: 200, at: Int64(k) * 500) }
        let plain = drain(&a, from: 5_000).last!.0, charged = drain(&b, from: 5_000).last!.0
        #expect(charged > plain + 3_000, "video finished at \(plain) µs alone, \(charged) µs after 2 KB sent first")
    }

    @Test func theRingIsAPowerOfTwoAndSaysWhenItIsFull() {
        #expect(Pacer(capacity: 1).capacity == 16)
        #expect(Pacer(capacity: 2048).capacity == 2048)
        #expect(Pacer(capacity: 3000).capacity == 4096)
        var p = Pacer(capacity: 16)
        p.setTarget(kbps: 100, at: 0)
        for s in 0..<15 { p.enqueue(UInt16(s), bytes: 1200) }
        #expect(!p.isFull)
        p.enqueue(15, bytes: 1200)
        #expect(p.isFull && p.queuedPackets == 16 && p.oldestQueued == 0)
        // Its owner makes room by taking the oldest; the ring goes round and keeps the order.
        #expect(p.takeAnyway() == 0 && !p.isFull && p.queuedBytes == 15 * 1200)
        p.enqueue(16, bytes: 1200)
        let sent = drain(&p, from: 0)
        #expect(sent.map(\.1) == (1...16).map(UInt16.init))
    }

    @Test func aLongQueueDrainsInAboutItsMaximumTime() {
        var p = Pacer(capacity: 2048)
        p.setTarget(kbps: 100, at: 0)  // 31.25 KB/s: 2048 packets of 1200 would take 79 s
        for s in 0..<2048 { p.enqueue(UInt16(s), bytes: 1200) }
        #expect(p.isFull)
        // The queue holds far more than its 300 ms at the pacing rate: it drains in about that.
        let sent = drain(&p, from: 0)
        #expect(sent.map(\.1) == (0..<2048).map(UInt16.init))
        #expect(sent.last!.0 <= 2_000_000, "drained in \(sent.last!.0) µs")
    }
}
