// When each packet of the transport-wide sequence was sent, and how big it was: what
// transport-cc feedback is matched against to turn arrival times into delay variation.
//
// Invariants: a fixed ring of `capacity` entries (a power of two) indexed by the sequence number;
// an entry is found only if it still holds that number (an older one overwritten by a newer
// lap is not found, so stale feedback cannot be matched to the wrong packet). No allocation
// after init.

/// Send time and size per transport-wide sequence number, the newest `capacity` of them.
public struct SentPacketLog: Sendable {
    public static let capacity = 2048

    public struct Entry: Equatable, Sendable {
        public var sequence: UInt16
        /// On the sender's monotonic clock.
        public var sentAt: Int64
        /// Bytes on the wire (after SRTP).
        public var bytes: Int32
        /// Whether this entry has been matched to feedback already.
        public var acknowledged: Bool
    }

    private var entries: [Entry?]

    public init() {
        entries = [Entry?](repeating: nil, count: Self.capacity)
    }

    public mutating func sent(_ sequence: UInt16, at now: Int64, bytes: Int) {
        entries[Int(sequence) & (Self.capacity - 1)] = Entry(sequence: sequence, sentAt: now,
                                                           bytes: Int32(clamping: bytes), acknowledged: false)
    }

    /// The entry of `sequence`, if still held.
    public func entry(_ sequence: UInt16) -> Entry? {
        guard let e = entries[Int(sequence) & (Self.capacity - 1)], e.sequence == sequence else { return nil }
        return e
    }

    /// Marks `sequence` as reported by feedback; returns its entry the first time only.
    public mutating func acknowledge(_ sequence: UInt16) -> Entry? {
        let i = Int(sequence) & (Self.capacity - 1)
        guard var e = entries[i], e.sequence == sequence, !e.acknowledged else { return nil }
        e.acknowledged = true
        entries[i] = e
        return e
    }
}
