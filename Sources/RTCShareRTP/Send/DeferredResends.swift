// NACKed packets the retransmission budget could not pay for yet, resent oldest first as the
// budget refills. A refused NACK is not a loss the receiver will get over by itself: some
// receivers ask once and never again (aiortc asks only when a new gap appears, and its jitter
// buffer holds every later packet behind the hole until 512 of them have piled up — six seconds
// of frozen picture at 700 kbit/s). Deferring keeps the budget's cap on the rate of resends and
// still fills every hole the history can.
//
// Invariants: a fixed ring of `capacity` sequence numbers and a 64 Kibit table saying which are
// in it (no number twice); nothing allocated after init; a number that no longer fits is
// refused and counted, never an older one dropped silently. Sans-IO.

/// The queue of resends owed, sans-IO.
public struct DeferredResends: Sendable {
    public static let capacity = 512
    private var ring: [UInt16]
    /// When each was owed (microseconds, the caller's clock).
    private var owedAt: [Int64]
    private var head = 0
    private var tail = 0
    /// One bit per sequence number: in the ring.
    private var owed: [UInt64]
    /// Numbers that did not fit.
    public private(set) var refused = 0

    public init() {
        ring = [UInt16](repeating: 0, count: Self.capacity)
        owedAt = [Int64](repeating: 0, count: Self.capacity)
        owed = [UInt64](repeating: 0, count: 65_536 / 64)
    }

    public var count: Int { tail - head }
    public var isEmpty: Bool { head == tail }

    /// Whether `sequence` is owed.
    public func contains(_ sequence: UInt16) -> Bool {
        owed[Int(sequence) >> 6] & (1 << UInt64(sequence & 63)) != 0
    }

    /// Owes a resend of `sequence` from `nowMicroseconds` on (once, however often it is asked
    /// for: the first time counts). False: the ring is full.
    @discardableResult
    public mutating func owe(_ sequence: UInt16, nowMicroseconds: Int64) -> Bool {
        guard !contains(sequence) else { return true }
        guard count < Self.capacity else {
            refused += 1
            return false
        }
        ring[tail & (Self.capacity - 1)] = sequence
        owedAt[tail & (Self.capacity - 1)] = nowMicroseconds
        tail += 1
        owed[Int(sequence) >> 6] |= 1 << UInt64(sequence & 63)
        return true
    }

    /// The oldest owed number, still owed, and since when.
    public var first: (sequence: UInt16, owedAtMicroseconds: Int64)? {
        let i = head & (Self.capacity - 1)
        return isEmpty ? nil : (ring[i], owedAt[i])
    }

    /// Takes the oldest owed number off (it was resent, or can no longer be).
    public mutating func removeFirst() {
        guard let sequence = first?.sequence else { return }
        head += 1
        owed[Int(sequence) >> 6] &= ~(1 << UInt64(sequence & 63))
    }
}
