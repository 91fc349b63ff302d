@testable import RTCShareRTP
import Testing

@Suite struct DeferredResendsTests {
    @Test func numbersAreOwedOnceAndComeOutOldestFirst() {
        var d = DeferredResends()
        #expect(d.isEmpty && d.first == nil)
        for (i, n) in [UInt16(65_535), 0, 7, 65_535].enumerated() { d.owe(n, nowMicroseconds: Int64(i)) }
        #expect(d.count == 3, "a number asked for again is owed once")
        #expect(d.first?.sequence == 65_535 && d.first?.owedAtMicroseconds == 0, "the first time counts")
        d.removeFirst()
        #expect(!d.contains(65_535) && d.contains(0) && d.contains(7))
        #expect(d.first?.sequence == 0)
        d.removeFirst()
        d.removeFirst()
        #expect(d.isEmpty && !d.contains(7))
        d.removeFirst()  // nothing owed: no effect
        #expect(d.isEmpty)
        // Taken off, a number can be owed again.
        let again = d.owe(7, nowMicroseconds: 9)
        #expect(again && d.first?.owedAtMicroseconds == 9)
    }

    @Test func aFullRingRefusesNewNumbersAndKeepsTheOldest() {
        var d = DeferredResends()
        for n in 0..<DeferredResends.capacity { d.owe(UInt16(n), nowMicroseconds: 0) }
        #expect(d.count == DeferredResends.capacity)
        let overflow = d.owe(60_000, nowMicroseconds: 1)
        #expect(!overflow)
        #expect(d.refused == 1 && !d.contains(60_000))
        let owedAlready = d.owe(3, nowMicroseconds: 1)
        #expect(owedAlready, "one already owed is not refused")
        #expect(d.first?.sequence == 0 && d.count == DeferredResends.capacity)
        // The ring wraps: after taking some off, new numbers fit and come out in order.
        for _ in 0..<10 { d.removeFirst() }
        let fits = d.owe(60_000, nowMicroseconds: 2)
        #expect(fits)
        var order: [UInt16] = []
        while let f = d.first { order.append(f.sequence); d.removeFirst() }
        #expect(order == (10..<DeferredResends.capacity).map { UInt16($0) } + [60_000])
    }
}
