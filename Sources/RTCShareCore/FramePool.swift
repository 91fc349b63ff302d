import CCore

/// A fixed number of frame slots carved from a `MemoryBudget` at creation, each big enough for
/// the largest picture the pool is made for. Acquiring is O(1), lock-free and never allocates;
/// an exhausted pool says so (`CoreError.poolExhausted`) and counts it, it never grows.
public final class FramePool: @unchecked Sendable {
    // Sendable: the C pool is lock-free and safe from any thread.
    let pool: OpaquePointer
    /// Keeps the arena the slots live in mapped for as long as the pool (and so any frame) lives.
    public let budget: MemoryBudget
    /// Pixel bytes each slot holds.
    public let slotBytes: Int

    /// Carves `count` slots sized for `format` at `maxWidth` x `maxHeight`.
    public init(budget: MemoryBudget, format: PixelFormat, maxWidth: Int, maxHeight: Int,
                count: Int) throws(CoreError) {
        guard let w = Int32(exactly: maxWidth), let h = Int32(exactly: maxHeight),
              let n = UInt32(exactly: count), n > 0 else { throw .invalidArgument }
        var pool: OpaquePointer?
        try CoreError.check(ccore_frame_pool_create(budget.arena, format.raw, w, h, n, &pool))
        guard let pool else { throw .budgetExceeded }
        self.pool = pool
        self.budget = budget
        self.slotBytes = ccore_frame_pool_slot_bytes(pool)
    }

    deinit {
        // Every outstanding FrameSlot and every FrameRing of this pool holds a strong reference,
        // so all slots are back by now.
        _ = ccore_frame_pool_destroy(pool)
    }

    /// A frame laid out for `format` at `width` x `height`, refcount 1, pts 0, orientation up.
    /// Throws `.invalidArgument` if that picture does not fit a slot, `.poolExhausted` when every
    /// slot is in use.
    public func acquire(format: PixelFormat, width: Int, height: Int) throws(CoreError) -> FrameSlot {
        guard let bytes = format.bytes(width: width, height: height), bytes <= slotBytes else {
            throw .invalidArgument
        }
        guard let frame = ccore_frame_acquire(pool, format.raw, Int32(width), Int32(height)) else {
            throw .poolExhausted
        }
        return FrameSlot(adopting: frame, pool: self)
    }

    /// Counters of a slot pool.
    public struct Stats: Equatable, Sendable {
        /// Slots in all.
        public var capacity: Int
        /// Slots out now.
        public var inUse: Int
        /// Largest `inUse` seen.
        public var highWater: Int
        /// Successful acquires.
        public var acquired: UInt64
        /// Acquires refused because every slot was out.
        public var failures: UInt64
    }

    public var stats: Stats {
        var raw = ccore_pool_stats()
        ccore_frame_pool_get_stats(pool, &raw)
        return Stats(capacity: Int(raw.capacity), inUse: Int(raw.in_use),
                     highWater: Int(raw.high_water), acquired: raw.acquired,
                     failures: raw.failures)
    }
}
