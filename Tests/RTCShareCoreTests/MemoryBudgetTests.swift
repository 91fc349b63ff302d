import Testing
@testable import RTCShareCore

@Suite struct MemoryBudgetTests {
    @Test func poolLargerThanTheCapIsRefusedAndCounted() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let before = budget.stats
        #expect(throws: CoreError.budgetExceeded) {
            _ = try FramePool(budget: budget, format: .i420, maxWidth: 1280, maxHeight: 720, count: 2)
        }
        let after = budget.stats
        #expect(after.failures == before.failures + 1)
        #expect(after.inUseBytes == before.inUseBytes)
        #expect(after.liveBlocks == before.liveBlocks)
    }

    @Test func everythingCarvedIsGivenBackWhenReleased() throws {
        let budget = try MemoryBudget(capBytes: 8 << 20)
        do {
            let pool = try FramePool(budget: budget, format: .i420, maxWidth: 640, maxHeight: 360, count: 4)
            let ring = try FrameRing(pool: pool, capacity: 4, policy: .dropOldest)
            let transformer = try FrameTransformer(budget: budget, maxSourceWidth: 640, maxSourceHeight: 360,
                                                   maxOutputWidth: 320, maxOutputHeight: 180)
            ring.push(try pool.acquire(format: .i420, width: 64, height: 64))
            #expect(budget.stats.liveBlocks >= 3)
            #expect(transformer.scratchSize > 0)
        }
        let stats = budget.stats
        #expect(stats.liveBlocks == 0)
        #expect(stats.inUseBytes == 0)
        #expect(stats.highWaterBytes > 0)
    }
}
