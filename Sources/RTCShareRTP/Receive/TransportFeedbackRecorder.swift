// The receive side of transport-wide congestion control: when each packet of the transport-wide
// sequence arrived, reported back every `interval` as transport-cc feedback
// (`RTCPTransportFeedback`), so the sender's delay-based estimator can see queues build up.
//
// Invariants:
// - Memory: one fixed ring of arrival times (`capacity` entries, a power of two) indexed by the
//   unwrapped sequence number; nothing grows per packet.
// - Each sequence number is reported once: the report window runs from the oldest packet not yet
//   reported to the newest arrived. A packet arriving after its number was reported (reordered
//   past a feedback) is not reported again; a jump of more than `capacity` moves the window up,
//   the skipped numbers unreported.
// - One feedback holds at most `maxStatuses` statuses and deltas that fit 16 bits; the rest waits
//   for the next (which is due at once).
// - Times are passed in (microseconds, the caller's monotonic clock); no clock inside.

/// Arrival times of transport-wide sequence numbers, and the feedback that reports them.
public struct TransportFeedbackRecorder: Sendable {
    public static let capacity = 1024
    /// Most statuses in one feedback (its deltas stay under ~1 KB, within one datagram).
    public static let maxStatuses = 500

    /// How often feedback goes back while packets arrive.
    public let intervalMicroseconds: Int64
    /// Feedback packets made so far.
    public private(set) var feedbackSent = 0

    private var arrivals: [Int64]
    private var highest: Int64?
    private var nextToReport: Int64 = 0
    private var feedbackCount: UInt8 = 0
    private var dueAt: Int64?

    public init(intervalMicroseconds: Int64 = 50_000) {
        self.intervalMicroseconds = max(intervalMicroseconds, 1_000)
        arrivals = [Int64](repeating: -1, count: Self.capacity)
    }

    /// When a feedback is due; nil: nothing to report.
    public var nextDeadline: Int64? { dueAt }

    /// The sequence number `seq` nearest to the newest seen (RFC 3550 A.1's unwrapping).
    private func unwrap(_ seq: UInt16) -> Int64 {
        guard let h = highest else { return Int64(seq) + (1 << 16) }
        return seq.extended(around: h)
    }

    /// A packet carrying transport-wide sequence number `seq` arrived at `now`.
    public mutating func packetArrived(_ seq: UInt16, at now: Int64) {
        let n = unwrap(seq)
        if highest == nil {
            highest = n
            nextToReport = n
        }
        guard n >= nextToReport else { return }  // already reported
        if n > highest! {
            // Numbers that fall out of the ring are skipped; the slots between are cleared.
            if n - nextToReport >= Int64(Self.capacity) { nextToReport = n - Int64(Self.capacity) + 1 }
            var k = max(highest! + 1, nextToReport)
            while k < n {
                arrivals[Int(k & Int64(Self.capacity - 1))] = -1
                k += 1
            }
            highest = n
        }
        arrivals[Int(n & Int64(Self.capacity - 1))] = max(now, 0)
        if dueAt == nil { dueAt = now + intervalMicroseconds }
    }

    /// The feedback due at `now`, if one is (then the next is scheduled).
    public mutating func takeFeedback(sender: UInt32, media: UInt32, now: Int64) -> RTCPTransportFeedback? {
        guard let due = dueAt, now >= due, let highest else { return nil }
        // Skip leading numbers that never arrived: the first status must be a received one so the
        // reference time can be its arrival.
        var first = nextToReport
        while first <= highest, arrivals[Int(first & Int64(Self.capacity - 1))] < 0 { first += 1 }
        guard first <= highest else {
            dueAt = nil
            return nil
        }
        let firstArrival = arrivals[Int(first & Int64(Self.capacity - 1))]
        let reference = firstArrival / RTCPTransportFeedback.referenceMicroseconds
        var ticks = reference * (RTCPTransportFeedback.referenceMicroseconds / RTCPTransportFeedback.tickMicroseconds)
        var statuses: [TransportPacketStatus] = []
        statuses.reserveCapacity(min(Int(highest - first + 1), Self.maxStatuses))
        var seq = first
        while seq <= highest, statuses.count < Self.maxStatuses {
            let t = arrivals[Int(seq & Int64(Self.capacity - 1))]
            if t < 0 {
                statuses.append(.notReceived)
            } else {
                let at = t / RTCPTransportFeedback.tickMicroseconds
                let delta = at - ticks
                guard delta >= Int64(Int16.min), delta <= Int64(Int16.max) else { break }
                statuses.append(.received(deltaTicks: Int32(delta)))
                ticks = at
            }
            seq += 1
        }
        // Trailing losses wait: a later arrival may still fill them before the next feedback.
        while case .notReceived = statuses.last { statuses.removeLast(); seq -= 1 }
        nextToReport = seq
        let feedback = RTCPTransportFeedback(
            sender: sender, media: media, baseSequence: UInt16(truncatingIfNeeded: first),
            referenceTime: Int32(truncatingIfNeeded: (reference << 40) >> 40), feedbackCount: feedbackCount,
            statuses: statuses)
        feedbackCount &+= 1
        feedbackSent += 1
        // More left (a full feedback, a delta past 16 bits): the next is due at once.
        dueAt = seq <= highest ? now : nil
        return feedback
    }
}
