import RTCShareCore
import TestSupport
import Testing
@testable import RTCShareRTP

/// The NACK history: O(1) lookup by sequence number, eviction by bytes, wraparound.
@Suite struct PacketHistoryTests {
    private func packet(seq: UInt16, size: Int) -> [UInt8] {
        var p = [UInt8](repeating: UInt8(truncatingIfNeeded: seq), count: size)
        p[0] = 0x80; p[1] = 96
        p[2] = UInt8(seq >> 8); p[3] = UInt8(truncatingIfNeeded: seq)
        return p
    }

    private func lookup(_ h: borrowing PacketHistory, _ seq: UInt16) -> [UInt8]? {
        h.withPacket(seq) { Array($0) }
    }

    @Test func storesLooksUpAndEvictsByBytesAcrossTheWrap() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20, prefault: false)
        var h = try PacketHistory(budget: budget, capacityBytes: 4096, maxPackets: 64)
        #expect(lookup(h, 0) == nil)  // empty
        var rng = SeededRandom(seed: 9)
        var sizes: [UInt16: Int] = [:]
        var seq: UInt16 = 65_400
        for _ in 0..<400 {
            let size = Int.random(in: 12...300, using: &rng)
            let p = packet(seq: seq, size: size)
            try p.withUnsafeBytes { raw throws in try h.store(raw) }
            sizes[seq] = size
            #expect(h.heldBytes <= h.capacityBytes)
            #expect(lookup(h, seq) == p)  // the newest is always there
            seq &+= 1
        }
        // The newest packets whose records fit in 4096 bytes are held; older ones are not.
        var held = 0, bytes = 0
        var s = seq &- 1
        while let p = lookup(h, s) {
            #expect(p == packet(seq: s, size: sizes[s]!))
            held += 1
            bytes += 2 + p.count
            s &-= 1
        }
        #expect(held > 10 && held < 64)
        #expect(bytes <= 4096)
        for back in UInt16(held)..<400 { #expect(lookup(h, seq &- 1 &- back) == nil) }
        // Never stored: the next sequence numbers.
        #expect(lookup(h, seq) == nil && lookup(h, seq &+ 100) == nil)
        #expect(h.storedCount == 400)
    }

    @Test func wouldEvictSaysWhichPacketsTheNextStoreTakesAcrossTheWrap() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20, prefault: false)
        var h = try PacketHistory(budget: budget, capacityBytes: 4096, maxPackets: 64)
        let emptySaysEvicted = h.wouldEvict(0, storing: 100)
        #expect(!emptySaysEvicted)
        var rng = SeededRandom(seed: 11)
        var seq: UInt16 = 65_300
        var evictions = 0
        for _ in 0..<500 {
            let size = Int.random(in: 12...700, using: &rng)
            // Every packet held now, and what the next store is said to take of them.
            let held = (0..<64).map { seq &- 1 &- UInt16($0) }.filter { h.contains($0) }
            let said = held.filter { h.wouldEvict($0, storing: size) }
            try packet(seq: seq, size: size).withUnsafeBytes { raw throws in try h.store(raw) }
            #expect(said == held.filter { !h.contains($0) }, "storing \(size) bytes as \(seq)")
            evictions += said.count
            seq &+= 1
        }
        #expect(evictions > 300)
        let neverStored = h.wouldEvict(seq, storing: 12)
        #expect(!neverStored)
    }

    @Test func wrapFrom65535To0KeepsBothSides() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20, prefault: false)
        var h = try PacketHistory(budget: budget, capacityBytes: 64 * 1024)
        for seq: UInt16 in [65_534, 65_535, 0, 1] {
            try packet(seq: seq, size: 100).withUnsafeBytes { raw throws in try h.store(raw) }
        }
        for seq: UInt16 in [65_534, 65_535, 0, 1] { #expect(lookup(h, seq) == packet(seq: seq, size: 100)) }
        #expect(lookup(h, 65_533) == nil && lookup(h, 2) == nil)
    }

    @Test func theIndexEvictsByCountAndAWholeWrapLaterGivesNil() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20, prefault: false)
        var h = try PacketHistory(budget: budget, capacityBytes: 64 * 1024, maxPackets: 16)
        #expect(h.maxPackets == 16)
        for seq in UInt16(0)..<40 {
            try packet(seq: seq, size: 20).withUnsafeBytes { raw throws in try h.store(raw) }
        }
        #expect(lookup(h, 23) == nil && lookup(h, 24) != nil && lookup(h, 39) != nil)
        // Sparse stores: seq 5 again a whole wrap later; the old 5 (an older lap) must not
        // answer for the new number before it is stored, nor alias after.
        var seq: UInt16 = 40
        for _ in 0..<4 {
            seq &+= 16_000
            try packet(seq: seq, size: 20).withUnsafeBytes { raw throws in try h.store(raw) }
        }
        // seq is now 40 + 64000 = 64040; 39 lies 64001 back, outside the ±2^15 window: a
        // lookup for 39 means the future 39 (after the wrap), never stored.
        #expect(lookup(h, 39) == nil)
        #expect(lookup(h, 64_040) != nil)
    }

    @Test func refusesWhatCannotBeHeldAndBudgetsItsMemory() throws {
        #expect(PacketHistory.bytes(capacityBytes: 256 * 1024) == 256 * 1024 + 1024 * 16)
        let budget = try MemoryBudget(capBytes: 1 << 20, prefault: false)
        let before = budget.stats.inUseBytes
        do {
            var h = try PacketHistory(budget: budget, capacityBytes: 2000)
            #expect(budget.stats.inUseBytes - before >= PacketHistory.bytes(capacityBytes: 2000))
            #expect(throws: RTPError.self) {
                try [UInt8](repeating: 0x80, count: 11).withUnsafeBytes { raw throws in try h.store(raw) }
            }
            #expect(throws: RTPError.self) {
                try packet(seq: 1, size: 1999).withUnsafeBytes { raw throws in try h.store(raw) }
            }
        }
        #expect(budget.stats.inUseBytes == before)  // given back
        #expect(throws: CoreError.budgetExceeded) { _ = try PacketHistory(budget: budget, capacityBytes: 2 << 20) }
        #expect(throws: CoreError.invalidArgument) { _ = try PacketHistory(budget: budget, capacityBytes: 100) }
    }
}
