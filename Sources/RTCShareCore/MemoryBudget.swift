import CCore

/// The capped memory budget every long-lived buffer of a session comes from: one region mapped
/// (and, by default, touched) at start-up, so resident memory is fixed before the first frame
/// and an attempt to go past the cap fails with `CoreError.budgetExceeded` instead of growing.
///
/// Pools, rings and transform scratch carve their memory from here and keep the budget alive.
public final class MemoryBudget: @unchecked Sendable {
    // Sendable: the arena serialises its own allocations; the pointer never changes.
    let arena: OpaquePointer

    /// Maps a budget of `capBytes`. With `prefault` every page is touched now, so the whole
    /// budget is resident from the start and later use never raises the process's RSS.
    public init(capBytes: Int, prefault: Bool = true) throws(CoreError) {
        guard capBytes > 0 else { throw .invalidArgument }
        var arena: OpaquePointer?
        try CoreError.check(ccore_arena_create(capBytes, prefault ? 1 : 0, &arena))
        guard let arena else { throw .budgetExceeded }
        self.arena = arena
    }

    deinit {
        // Everything carved from the arena holds a strong reference to this budget, so nothing
        // is live here; a non-OK status would mean a CCore bookkeeping bug, not a caller error.
        _ = ccore_arena_destroy(arena)
    }

    /// Counters of the budget.
    public struct Stats: Equatable, Sendable {
        /// Bytes that can be handed out in all.
        public var capBytes: Int
        /// Bytes handed out now.
        public var inUseBytes: Int
        /// Largest `inUseBytes` seen.
        public var highWaterBytes: Int
        /// Allocations not yet given back.
        public var liveBlocks: Int
        /// Allocations refused because the cap would have been exceeded.
        public var failures: UInt64
    }

    public var stats: Stats {
        var raw = ccore_arena_stats()
        ccore_arena_get_stats(arena, &raw)
        return Stats(capBytes: raw.cap, inUseBytes: raw.in_use, highWaterBytes: raw.high_water,
                     liveBlocks: raw.live_blocks, failures: raw.failures)
    }
}
