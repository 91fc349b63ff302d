// The send pacer: video packets leave at a steady rate instead of a frame's (a keyframe's)
// whole burst at once, which would overflow a shallow bottleneck queue and read as congestion.
//
// A token bucket filled at `pacingFactor` (2.5) × the target rate, at most `burstMicroseconds`
// of it banked, so a frame normally goes out within its frame interval but spread over a few
// milliseconds per packet instead of back to back.
//
// While the delay-based estimate holds the target below the share's maximum (`constrained`),
// the target is the path's rate, and 2.5 × it is faster than the path: a frame then builds a
// queue at the bottleneck for as long as it is sent, which the estimator reads as overuse. Busy
// 720p through a 1 Mbit/s path makes 15–37 KB frames (0.1–0.3 s of the path); at 2.5 × a
// 600 kbit/s target each built a 40–130 ms queue, the trendline cut the target every few seconds
// and it averaged 430–540 kbit/s (`bench/run-network.sh bottleneck1m`). There the bucket fills
// at `constrainedPacingFactor` (1.25) × the target: the frame waits here instead, and the
// target held 720–760 kbit/s with a queue p99 of 31–39 ms.
//
// Priorities and policy:
// - Audio is never queued: it goes out at once (small, and late audio is worse than late video);
//   so do retransmissions, which are already rate-limited by their own budget. Both are charged
//   to the bucket, so queued video waits for them: audio first, retransmissions next, video after.
// - Only video packets are queued, by RTP sequence number: their bytes stay in the packet
//   history, so the queue holds numbers, not packets. A packet the history no longer holds when
//   its turn comes is counted and skipped (the receiver's NACK, then a keyframe, repair it).
// - The queue is bounded in time: never more than `maxQueueMicroseconds` of sending at the
//   pacing rate — beyond that the rate rises so the queue drains in that time (a queue that grew
//   because the target fell is sent faster rather than dropped).
// - The queue is bounded in room by its owner, not here: a packet may wait only while the
//   history still holds its bytes, so the sender takes the oldest off (`takeAnyway`) and sends
//   it ahead of its turn before storing a packet that would evict it. The ring is made as long
//   as the history's index (`capacity`), so it is never fuller than the history; `enqueue` on
//   a full ring is a broken invariant, not a policy.
// - Until a target is set the pacer holds nothing (every packet goes at once, as before pacing).
//
// Sans-IO: times passed in (µs); `nextSendTime` is when the next queued packet may go, for the
// edge's timer. Fixed memory from init (a ring of `capacity` sequence numbers and sizes, 6 bytes
// a packet); no allocation after.

/// Token-bucket pacing of the video packets of one sender.
public struct Pacer: Sendable {
    /// Packets the ring holds (a power of two).
    public let capacity: Int
    public static let pacingFactor = 2.5
    public static let constrainedPacingFactor = 1.25
    public static let burstMicroseconds: Int64 = 5_000
    public static let maxQueueMicroseconds: Int64 = 300_000
    public static let minimumWaitMicroseconds: Int64 = 1_000

    /// Bytes per second packets are paced at; nil: not paced.
    public private(set) var bytesPerSecond: Double?
    /// Bytes and packets waiting.
    public private(set) var queuedBytes = 0
    public var queuedPackets: Int { tail - head }
    /// Whether the ring holds `capacity` packets: one must go before the next is queued.
    public var isFull: Bool { queuedPackets == capacity }
    /// Whether packets are held for pacing (a target was set).
    public var isPacing: Bool { bytesPerSecond != nil }

    private var sequences: [UInt16]
    private var sizes: [Int32]
    private var head = 0
    private var tail = 0
    /// Tokens in bytes; may go below zero by the packet that took the last of them.
    private var tokens = 0.0
    private var updatedAt: Int64?

    /// A ring of `capacity` packets, rounded up to a power of two (at least 16).
    public init(capacity: Int) {
        var n = 16
        while n < capacity { n <<= 1 }
        self.capacity = n
        sequences = [UInt16](repeating: 0, count: n)
        sizes = [Int32](repeating: 0, count: n)
    }

    /// Paces at `pacingFactor` × `targetKbps` from now on — `constrainedPacingFactor` × when
    /// the network holds the target below the share's maximum (`constrained`).
    public mutating func setTarget(kbps: Int, constrained: Bool = false, at now: Int64) {
        refill(now)
        bytesPerSecond = Double(max(kbps, 1)) * 1000 / 8 * (constrained ? Self.constrainedPacingFactor : Self.pacingFactor)
    }

    /// The rate the queue drains at now: the pacing rate, raised when the queue holds more than
    /// `maxQueueMicroseconds` of it.
    private var drainRate: Double? {
        guard let r = bytesPerSecond else { return nil }
        return max(r, Double(queuedBytes) * 1_000_000 / Double(Self.maxQueueMicroseconds))
    }

    private mutating func refill(_ now: Int64) {
        // Time never runs back for the bucket (a caller's times may repeat).
        defer { updatedAt = max(updatedAt ?? now, now) }
        guard let rate = drainRate, let last = updatedAt, now > last else { return }
        let cap = rate * Double(Self.burstMicroseconds) / 1_000_000
        tokens = min(tokens + rate * Double(now - last) / 1_000_000, max(cap, 1500))
    }

    /// Queues video packet `sequence` of `bytes`. The ring must not be full (`isFull`): the
    /// owner makes room first, by the one rule that also keeps the history's bytes.
    public mutating func enqueue(_ sequence: UInt16, bytes: Int) {
        precondition(!isFull, "pacer ring full: the oldest packet must be sent before queuing")
        sequences[tail & (capacity - 1)] = sequence
        sizes[tail & (capacity - 1)] = Int32(clamping: bytes)
        tail += 1
        queuedBytes += bytes
    }

    private mutating func pop() -> UInt16 {
        let i = head & (capacity - 1)
        head += 1
        queuedBytes -= Int(sizes[i])
        return sequences[i]
    }

    /// The next packet that may go at `now`, taken off the queue; nil when the queue is empty or
    /// the bucket is (then `nextSendTime` says when).
    public mutating func next(at now: Int64) -> UInt16? {
        guard queuedPackets > 0 else { return nil }
        guard drainRate != nil else { return pop() }
        refill(now)
        guard tokens > 0 else { return nil }
        tokens -= Double(sizes[head & (capacity - 1)])
        return pop()
    }

    /// The oldest queued packet, left in the queue; nil when nothing waits.
    public var oldestQueued: UInt16? {
        queuedPackets > 0 ? sequences[head & (capacity - 1)] : nil
    }

    /// The oldest queued packet whatever the bucket says (the share is ending: what waits goes
    /// now); nil when nothing waits.
    public mutating func takeAnyway() -> UInt16? {
        queuedPackets > 0 ? pop() : nil
    }

    /// Bytes sent outside the queue (audio, retransmissions, RTCP): queued video waits for them.
    public mutating func charge(bytes: Int, at now: Int64) {
        guard bytesPerSecond != nil else { return }
        refill(now)
        tokens -= Double(bytes)
        // Never owe more than the burst: audio and resends alone must not stall video for long.
        if let rate = drainRate { tokens = max(tokens, -rate * Double(Self.burstMicroseconds) / 1_000_000 - 1500) }
    }

    /// When the next queued packet may go (on the clock of the times passed in); nil when
    /// nothing waits.
    public var nextSendTime: Int64? {
        guard queuedPackets > 0 else { return nil }
        let last = updatedAt ?? 0
        guard let rate = drainRate, tokens <= 0 else { return last }
        // At least a millisecond: the bucket banks 5 ms, so waking for less only costs wake-ups.
        return last + max(Int64(((1 - tokens) / rate * 1_000_000).rounded(.up)), Self.minimumWaitMicroseconds)
    }
}
