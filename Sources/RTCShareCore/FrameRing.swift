import CCore

/// A bounded single-producer/single-consumer queue of frames between two stages (capture →
/// pipeline). Pushing never blocks and never allocates: when full, the ring's policy decides
/// which frame is let go, and that is counted. One thread pushes, one thread pops.
public final class FrameRing: @unchecked Sendable {
    // Sendable: the C ring is SPSC-safe; callers keep to one producer and one consumer.
    let ring: OpaquePointer
    /// The pool the queued frames belong to; kept alive while frames are queued.
    public let pool: FramePool

    /// What a full ring does with a push.
    public enum Policy: Sendable {
        /// Let go of the oldest queued frame and keep the new one (live video: newest wins).
        case dropOldest
        /// Refuse the new frame.
        case rejectNewest
    }

    /// What became of a pushed frame.
    public enum PushOutcome: Equatable, Sendable {
        case queued
        /// Queued; the oldest frame was let go to make room.
        case queuedDroppingOldest
        /// Not queued; the frame was let go.
        case rejected
    }

    /// A ring of `capacity` frames (a power of two) carved from the pool's budget.
    public init(pool: FramePool, capacity: Int, policy: Policy) throws(CoreError) {
        guard let n = UInt32(exactly: capacity) else { throw .invalidArgument }
        var ring: OpaquePointer?
        let raw = policy == .dropOldest ? CCORE_RING_DROP_OLDEST : CCORE_RING_REJECT_NEWEST
        try CoreError.check(ccore_ring_create(pool.budget.arena, n, raw, &ring))
        guard let ring else { throw .budgetExceeded }
        self.ring = ring
        self.pool = pool
    }

    deinit {
        while let frame = ccore_frame_ring_pop(ring) { ccore_frame_release(frame) }
        _ = ccore_ring_destroy(ring)
    }

    /// Producer side: hands the frame to the ring.
    @discardableResult
    public func push(_ slot: consuming FrameSlot) -> PushOutcome {
        precondition(slot.pool.takeUnretainedValue() === pool, "frame from another pool")
        switch ccore_frame_ring_push(ring, slot.intoRaw()) {
        case CCORE_OK: return .queued
        case CCORE_DROPPED_OLDEST: return .queuedDroppingOldest
        default: return .rejected
        }
    }

    /// Consumer side: the oldest frame, or nil when empty.
    public func pop() -> FrameSlot? {
        guard let frame = ccore_frame_ring_pop(ring) else { return nil }
        return FrameSlot(adopting: frame, pool: pool)
    }

    /// Counters of the ring.
    public struct Stats: Equatable, Sendable {
        public var capacity: Int
        public var count: Int
        public var pushed: UInt64
        public var popped: UInt64
        public var droppedOldest: UInt64
        public var rejectedNewest: UInt64
    }

    public var stats: Stats {
        var raw = ccore_ring_stats()
        ccore_ring_get_stats(ring, &raw)
        return Stats(capacity: Int(raw.capacity), count: Int(raw.count), pushed: raw.pushed,
                     popped: raw.popped, droppedOldest: raw.dropped_oldest,
                     rejectedNewest: raw.rejected_newest)
    }
}
