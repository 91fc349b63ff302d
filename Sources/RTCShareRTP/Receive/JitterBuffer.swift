import RTCShareCore

// The receive side's reorder buffer: RTP packets go in as they arrive, in any order, and come
// out in sequence-number order, with a gap held for a short wait (for a reordered or
// retransmitted packet) before it is declared lost.
//
// Layout, one block carved from the receiver's `MemoryBudget` at start-up:
//
//     [ slot table: capacity × 24 bytes ][ packet bytes: capacity × slotBytes, 16-aligned ]
//
// Invariants:
// - Sequence numbers are unwrapped to 64 bits against `next`, the extended number of the
//   packet to hand out next (nearest value, within ±2^15), so 65535 → 0 continues the count.
// - Exactly the extended numbers in `next ..< next + capacity` can be held; number `e` lives in
//   slot `e mod capacity` (capacity a power of two ≤ 2^14, well inside the unwrapping window).
// - A slot is `filled` iff it holds the packet `e` it is checked against; a slot in
//   `next ... highest` that is empty records when its hole was first seen (the arrival of the
//   first packet after it), which is what the wait is measured from.
// - A packet that would land at or beyond `next + capacity` first makes room: the oldest
//   extended numbers are handed out at once by `pop` (held packets as packets, holes as lost),
//   never silently overwritten (a packet whose slot still holds an unpopped one is refused as
//   overflow until the caller pops). Packets before `next` (already handed out or given up) are
//   refused as late; one already held is refused as a duplicate. Both are counted.
// - A packet more than `capacity` behind `next` is late too, unless the one before it was as
//   well and it follows that one (RFC 3550 A.1's rule for a restarted sender): then the buffer
//   starts over at it, dropping what it held (counted as a resync).
// - Insert and pop are O(1) amortised (a new hole costs one slot write per missing packet)
//   and allocate nothing; times are passed in, never read from a clock.

/// Reorders received RTP packets of one stream. Non-copyable: it owns its block of the budget.
public struct JitterBuffer: ~Copyable {
    private struct Slot {
        var extendedSequence: Int64
        /// When the hole at this number was first seen (valid while it is a hole).
        var missingSince: Int64
        var length: Int32
        var filled: Bool
    }

    /// What `insert` did with a packet.
    public enum InsertResult: Equatable, Sendable {
        /// Held until its turn.
        case stored
        /// The same sequence number is already held.
        case duplicate
        /// Its number was already handed out or given up.
        case late
        /// Longer than a slot (`slotBytes`), or shorter than an RTP header.
        case tooLarge
        /// So far ahead that its slot still holds an older packet not yet popped.
        case overflow
    }

    /// What `pop` hands out, in sequence-number order.
    public enum Output: Equatable, Sendable {
        /// The packet `sequenceNumber`, `length` bytes in slot `slot`: read it with
        /// `withPacket(_:)` before the next `insert`.
        case packet(sequenceNumber: UInt16, slot: Int, length: Int)
        /// `sequenceNumber` did not arrive within the wait (or had to make room): given up.
        case lost(sequenceNumber: UInt16)
    }

    /// Counters since the start.
    public struct Counters: Equatable, Sendable {
        public var stored: UInt64 = 0
        public var released: UInt64 = 0
        public var lost: UInt64 = 0
        public var duplicates: UInt64 = 0
        public var late: UInt64 = 0
        public var tooLarge: UInt64 = 0
        public var overflow: UInt64 = 0
        /// Numbers handed out early (packet or lost) because a packet far ahead needed room.
        public var forcedOut: UInt64 = 0
        /// Times the buffer started over at a far-away number (a restarted sender).
        public var resyncs: UInt64 = 0
        public init() {}
    }

    /// Packets held at most (a power of two).
    public let capacity: Int
    /// Largest packet a slot holds.
    public let slotBytes: Int
    /// How long a hole at the head is waited for before it is declared lost (microseconds).
    /// The receiver sets it from the round-trip time (a NACK and its answer must fit).
    public var waitMicroseconds: Int64

    private let block: BudgetBlock
    private let slots: UnsafeMutablePointer<Slot>
    private let data: UnsafeMutableRawPointer
    /// Extended number of the packet to hand out next; nil until the first packet.
    private var next: Int64?
    /// Highest extended number stored so far (≥ next − 1).
    private var highest: Int64 = 0
    /// Numbers below this are handed out without waiting (room was needed).
    private var forceBelow: Int64 = Int64.min
    /// The number that, arriving next, proves a far jump backwards real (A.1's `bad_seq`).
    private var resyncCandidate: UInt16?
    public private(set) var counters = Counters()

    private static let slotRecordBytes = MemoryLayout<Slot>.stride

    private static func roundedCapacity(_ n: Int) -> Int {
        var p = 16
        while p < min(max(n, 16), 1 << 14) { p <<= 1 }
        return p
    }

    /// Bytes of budget a buffer of `capacity` packets of up to `slotBytes` takes.
    public static func bytes(capacity: Int, slotBytes: Int) -> Int {
        let n = roundedCapacity(capacity)
        return n * slotRecordBytes + n * ((slotBytes + 15) & ~15)
    }

    /// Reserves `bytes(capacity:slotBytes:)` from `budget`. `capacity` is rounded up to a
    /// power of two in 16...16384; `slotBytes` must be 12...65535. Throws `.budgetExceeded`
    /// when the budget cannot give it, `.invalidArgument` for bad sizes.
    public init(budget: MemoryBudget, capacity: Int, slotBytes: Int,
                waitMicroseconds: Int64 = 60_000) throws(CoreError) {
        guard (RTPHeader.fixedSize...Int(UInt16.max)).contains(slotBytes) else { throw .invalidArgument }
        let n = Self.roundedCapacity(capacity)
        let stride = (slotBytes + 15) & ~15
        let block = try BudgetBlock(budget: budget, byteCount: Self.bytes(capacity: n, slotBytes: slotBytes),
                                    alignment: 64)
        slots = block.base.bindMemory(to: Slot.self, capacity: n)
        slots.initialize(repeating: Slot(extendedSequence: Int64.min, missingSince: 0, length: 0, filled: false),
                         count: n)
        data = block.base + n * Self.slotRecordBytes
        self.block = block
        self.capacity = n
        self.slotBytes = stride
        self.waitMicroseconds = waitMicroseconds
    }

    /// Packets held now.
    public var heldCount: Int {
        guard let next else { return 0 }
        var n = 0
        var e = next
        while e <= highest {
            if isHeld(e) { n += 1 }
            e += 1
        }
        return n
    }

    private func slotIndex(_ e: Int64) -> Int { Int(truncatingIfNeeded: e) & (capacity - 1) }

    private func isHeld(_ e: Int64) -> Bool {
        let s = slots[slotIndex(e)]
        return s.filled && s.extendedSequence == e
    }

    /// Takes a copy of one RTP packet (already SRTP-unprotected) with sequence number
    /// `sequenceNumber`, arrived at `now` (microseconds of any monotonic clock).
    public mutating func insert(_ packet: UnsafeRawBufferPointer, sequenceNumber: UInt16,
                                now: Int64) -> InsertResult {
        guard packet.count >= RTPHeader.fixedSize, packet.count <= slotBytes else {
            counters.tooLarge += 1
            return .tooLarge
        }
        let e: Int64
        if let n = next, let candidate = resyncCandidate, sequenceNumber == candidate,
           sequenceNumber.extended(around: n) < n - Int64(capacity) {
            // Two in a row far behind: the sender restarted. Start over at this packet.
            for i in 0..<capacity { slots[i].filled = false }
            next = nil
            forceBelow = Int64.min
            counters.resyncs += 1
        }
        if let n = next {
            e = sequenceNumber.extended(around: n)
            if e < n {
                resyncCandidate = e < n - Int64(capacity) ? sequenceNumber &+ 1 : nil
                counters.late += 1
                return .late
            }
            resyncCandidate = nil
        } else {
            // The first packet opens the window (offset by one wrap so numbers stay positive).
            e = Int64(sequenceNumber) + (1 << 16)
            next = e
            highest = e - 1
        }
        if isHeld(e) {
            counters.duplicates += 1
            return .duplicate
        }
        let head = next!
        if e >= head + Int64(capacity) {
            // Room is needed: everything below e − capacity + 1 is handed out by `pop` at once.
            forceBelow = max(forceBelow, e - Int64(capacity) + 1)
            let s = slots[slotIndex(e)]
            if s.filled && s.extendedSequence < e {
                // Its slot still holds an older packet not yet handed out, which must not be
                // overwritten: this one is refused (a burst larger than the whole buffer).
                counters.overflow += 1
                return .overflow
            }
        }
        if e > highest {
            // Every number between the old highest and e is a new hole, seen now.
            var h = max(highest + 1, head)
            // A hole older than the window cannot be held anyway; skip straight to the window.
            if e - h > Int64(capacity) { h = e - Int64(capacity) }
            while h < e {
                let i = slotIndex(h)
                if !(slots[i].filled && slots[i].extendedSequence >= head) {
                    slots[i] = Slot(extendedSequence: h, missingSince: now, length: 0, filled: false)
                }
                h += 1
            }
            highest = e
        }
        let i = slotIndex(e)
        slots[i] = Slot(extendedSequence: e, missingSince: now, length: Int32(packet.count), filled: true)
        if let src = packet.baseAddress {
            (data + i * slotBytes).copyMemory(from: src, byteCount: packet.count)
        }
        counters.stored += 1
        return .stored
    }

    /// The next packet or loss in order, if one is due at `now`; nil when the head is a hole
    /// still within its wait, or nothing is held. Call until it returns nil.
    public mutating func pop(now: Int64) -> Output? {
        guard let head = next, head <= highest else { return nil }
        let i = slotIndex(head)
        let seq = UInt16(truncatingIfNeeded: head)
        let forced = head < forceBelow
        if slots[i].filled && slots[i].extendedSequence == head {
            slots[i].filled = false
            next = head + 1
            counters.released += 1
            if forced { counters.forcedOut += 1 }
            return .packet(sequenceNumber: seq, slot: i, length: Int(slots[i].length))
        }
        let since = slots[i].extendedSequence == head ? slots[i].missingSince : now
        guard forced || now - since >= waitMicroseconds else { return nil }
        next = head + 1
        counters.lost += 1
        if forced { counters.forcedOut += 1 }
        return .lost(sequenceNumber: seq)
    }

    /// When the hole at the head will be given up (nil: no hole is waiting). The run loop
    /// sleeps at most until then.
    public var nextDeadline: Int64? {
        guard let head = next, head <= highest, !isHeld(head) else { return nil }
        let s = slots[slotIndex(head)]
        guard s.extendedSequence == head else { return nil }
        return s.missingSince + waitMicroseconds
    }

    /// The bytes of a packet `pop` just handed out.
    public func withPacket<R, E: Error>(_ output: Output,
                                        _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R? {
        guard case .packet(_, let slot, let length) = output, slot >= 0, slot < capacity,
              length >= 0, length <= slotBytes else { return nil }
        return try body(UnsafeRawBufferPointer(start: data + slot * slotBytes, count: length))
    }
}
