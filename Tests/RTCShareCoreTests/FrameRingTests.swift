import Testing
@testable import RTCShareCore

@Suite struct FrameRingTests {
    private func frame(_ pool: FramePool, pts: Int64) throws -> FrameSlot {
        var slot = try pool.acquire(format: .i420, width: 16, height: 16)
        slot.ptsMicroseconds = pts
        return slot
    }

    @Test func dropOldestKeepsTheNewestAndGivesBackTheRest() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: 16, maxHeight: 16, count: 8)
        let ring = try FrameRing(pool: pool, capacity: 4, policy: .dropOldest)
        var outcomes: [FrameRing.PushOutcome] = []
        for pts in 0..<6 { outcomes.append(ring.push(try frame(pool, pts: Int64(pts)))) }
        #expect(outcomes == [.queued, .queued, .queued, .queued, .queuedDroppingOldest, .queuedDroppingOldest])
        #expect(pool.stats.inUse == 4)
        var seen: [Int64] = []
        while let slot = ring.pop() { seen.append(slot.ptsMicroseconds) }
        #expect(seen == [2, 3, 4, 5])
        #expect(pool.stats.inUse == 0)
        let stats = ring.stats
        #expect(stats.pushed == 6 && stats.popped == 4 && stats.droppedOldest == 2 && stats.rejectedNewest == 0)
    }

    @Test func rejectNewestKeepsTheQueuedFrames() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: 16, maxHeight: 16, count: 8)
        let ring = try FrameRing(pool: pool, capacity: 2, policy: .rejectNewest)
        #expect(ring.push(try frame(pool, pts: 1)) == .queued)
        #expect(ring.push(try frame(pool, pts: 2)) == .queued)
        #expect(ring.push(try frame(pool, pts: 3)) == .rejected)
        #expect(pool.stats.inUse == 2)
        #expect(ring.pop()?.ptsMicroseconds == 1)
        #expect(ring.pop()?.ptsMicroseconds == 2)
        #expect(ring.pop()?.ptsMicroseconds == nil)
        #expect(ring.stats.rejectedNewest == 1)
    }

    @Test func ringLetsGoOfQueuedFramesWhenItEnds() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: 16, maxHeight: 16, count: 4)
        do {
            let ring = try FrameRing(pool: pool, capacity: 4, policy: .dropOldest)
            ring.push(try frame(pool, pts: 1))
            ring.push(try frame(pool, pts: 2))
            #expect(pool.stats.inUse == 2)
        }
        #expect(pool.stats.inUse == 0)
    }

    @Test func capacityMustBeAPowerOfTwo() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: 16, maxHeight: 16, count: 4)
        #expect(throws: CoreError.invalidArgument) { _ = try FrameRing(pool: pool, capacity: 3, policy: .dropOldest) }
    }
}
