import Testing
@testable import RTCShareCore

@Suite struct FramePoolTests {
    @Test func exhaustedPoolThrowsInsteadOfGrowing() throws {
        let budget = try MemoryBudget(capBytes: 4 << 20)
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: 320, maxHeight: 240, count: 2)
        let a = try pool.acquire(format: .i420, width: 320, height: 240)
        let b = try pool.acquire(format: .i420, width: 320, height: 240)
        #expect(throws: CoreError.poolExhausted) { _ = try pool.acquire(format: .i420, width: 16, height: 16) }
        #expect(pool.stats.inUse == 2)
        #expect(pool.stats.failures == 1)
        _ = consume a
        _ = consume b
        #expect(pool.stats.inUse == 0)
        #expect(pool.stats.highWater == 2)
    }

    @Test func pictureBiggerThanASlotIsRefused() throws {
        let budget = try MemoryBudget(capBytes: 4 << 20)
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: 320, maxHeight: 240, count: 1)
        #expect(throws: CoreError.invalidArgument) { _ = try pool.acquire(format: .bgra, width: 320, height: 240) }
        #expect(throws: CoreError.invalidArgument) { _ = try pool.acquire(format: .i420, width: 0, height: 240) }
        // Same bytes in another shape fits.
        let slot = try pool.acquire(format: .i420, width: 240, height: 320)
        #expect(slot.width == 240 && slot.height == 320)
    }

    @Test func sharedFrameReturnsToPoolWithItsLastReference() throws {
        let budget = try MemoryBudget(capBytes: 4 << 20)
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: 64, maxHeight: 64, count: 1)
        var slot = try pool.acquire(format: .i420, width: 64, height: 64)
        slot.ptsMicroseconds = 1234
        slot.orientation = .right
        let kept = slot.share()
        #expect(kept.referenceCount == 2)
        #expect(kept.ptsMicroseconds == 1234)
        #expect(kept.orientation == .right)
        _ = consume slot
        #expect(pool.stats.inUse == 1)
        #expect(kept.referenceCount == 1)
        _ = consume kept
        #expect(pool.stats.inUse == 0)
    }

    @Test func planesDescribeTheLayout() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let pool = try FramePool(budget: budget, format: .nv12, maxWidth: 33, maxHeight: 17, count: 1)
        var slot = try pool.acquire(format: .nv12, width: 33, height: 17)
        slot.withMutablePixels { pixels in
            #expect(pixels.planeCount == 2)
            let y = pixels.plane(0), uv = pixels.plane(1)
            #expect(y.rowBytes == 33 && y.rows == 17 && y.stride % 64 == 0)
            #expect(uv.rowBytes == 34 && uv.rows == 9)
            y.fill(7)
            #expect(y.row(16).allSatisfy { $0 == 7 })
        }
    }
}
