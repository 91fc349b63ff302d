// Which sequence numbers a receiver asks to have resent (RFC 4585 generic NACK), and when.
//
// Invariants:
// - Sequence numbers are unwrapped to 64 bits against the highest seen (nearest value).
// - A number becomes missing when a higher one arrives first; it is tracked in a fixed ring of
//   `capacity` entries ordered by number (holes are only ever appended above the highest), so
//   nothing grows. A gap wider than the ring tracks only its newest numbers and asks for a
//   keyframe instead (the older ones could not all be asked for in time anyway).
// - A missing number is first asked for `reorderWait` after it went missing (a reordered
//   packet needs no NACK), then again after each answer time (the caller's, from the round
//   trip and jitter; or max(`minimumRetrySpacing`, RTT × `retryRTTPercent`)), at most
//   `maxTries` times; a number still missing after that, older than `maxAge`, or whose next
//   answer could no longer arrive within the playout wait, is given up and a keyframe is asked
//   for (the frame it belongs to cannot be completed).
// - A number leaves the ring when it arrives (a recovery if it had been asked for), when the
//   jitter buffer gives it up (`abandon`), or when it is given up here. Each leaves once.
// - A number more than `restartDistance` behind the highest, followed by the next one, is a
//   restarted sender (RFC 3550 A.1's rule): everything tracked is dropped and counting starts
//   over there.
// - Numbers above the highest can be *inferred* missing (`inferMissing`: the caller saw a gap in
//   the transport-wide numbers right after the newest packet, so the next ones were sent and
//   lost before any higher one could show it). At most `maxInferred` are held apart from the
//   ring: asked for like the others, never a keyframe when given up (they may not exist: a lost
//   resend or probe also leaves a gap), and counted as missing only once known to be — a higher
//   number arrived first (they join the ring with their requests, in order), or they arrived
//   after being asked for (an answer; its time is no round-trip sample). Arriving unasked, they
//   were not lost.
// - Times are passed in (microseconds of one monotonic clock); nothing here reads a clock.

/// The NACK decisions of one stream, sans-IO: packets and time in, numbers to NACK out.
public struct NackGenerator: Sendable {
    /// Timing and limits.
    public struct Configuration: Sendable, Equatable {
        /// Missing numbers tracked at most.
        public var capacity = 512
        /// Wait before the first NACK of a number (reordering is not loss).
        public var reorderWaitMicroseconds: Int64 = 5_000
        /// Least spacing between NACKs of the same number.
        public var minimumRetrySpacingMicroseconds: Int64 = 20_000
        /// Retry spacing as a multiple of the RTT (percent), when that is more.
        public var retryRTTPercent: Int64 = 150
        /// NACKs per number before it is given up.
        public var maxTries = 4
        /// A number missing longer than this is given up.
        public var maxAgeMicroseconds: Int64 = 1_000_000

        public init() {}
    }

    /// Counters since the start.
    public struct Counters: Equatable, Sendable {
        /// Numbers that went missing (a higher one arrived first).
        public var missing: UInt64 = 0
        /// Distinct numbers asked for at least once.
        public var nacked: UInt64 = 0
        /// NACK requests (a number asked for again counts again).
        public var requests: UInt64 = 0
        /// Asked-for numbers that then arrived.
        public var recovered: UInt64 = 0
        /// Missing numbers that arrived before being asked for (reordered).
        public var reordered: UInt64 = 0
        /// Numbers given up here (tries or age exhausted, or the gap too wide to track).
        public var givenUp: UInt64 = 0
        /// Numbers inferred missing above the highest (`inferMissing`), and what became of them:
        /// confirmed by a higher arrival (then counted as missing), answered (arrived after being
        /// asked for: missing, asked and recovered), arrived unasked (not lost), dropped unconfirmed
        /// after their tries (no keyframe).
        public var inferred: UInt64 = 0
        public var inferredConfirmed: UInt64 = 0
        public var inferredAnswered: UInt64 = 0
        public var inferredUnasked: UInt64 = 0
        public var inferredDropped: UInt64 = 0
        public init() {}
    }

    private struct Missing: Sendable {
        var extendedSequence: Int64
        var since: Int64
        var nextRequest: Int64
        var tries: Int
        /// When it was first asked for (valid once `tries` > 0).
        var firstRequest: Int64
        var live: Bool

        /// Asked for at `now`: the next request `spacing` later.
        mutating func asked(at now: Int64, spacing: Int64) {
            if tries == 0 { firstRequest = now }
            tries += 1
            nextRequest = now + spacing
        }
    }

    /// Whether `m`, due at `now`, is past asking for: out of tries or age, or (a retry only) its
    /// answer could no longer arrive within `playoutWaitMicroseconds` of its going missing.
    private func exhausted(_ m: Missing, now: Int64, answerMicroseconds: Int64, playoutWaitMicroseconds: Int64?) -> Bool {
        let tooLate = m.tries > 0 && playoutWaitMicroseconds.map { now + answerMicroseconds > m.since + $0 } ?? false
        return m.tries >= configuration.maxTries || now - m.since > configuration.maxAgeMicroseconds || tooLate
    }

    public let configuration: Configuration
    private var ring: [Missing]
    /// Ring positions (free-running): entries `head ..< tail` are in use, some dead.
    private var head = 0
    private var tail = 0
    private var liveCount = 0
    private var highest: Int64?
    private var keyframeWanted = false
    private var restartCandidate: UInt16?
    /// How far behind the highest a number must be to be taken as a possible restart.
    public static let restartDistance: Int64 = 3000
    public private(set) var counters = Counters()
    /// NACKs the number `packetReceived` last counted as recovered had been asked with (1: its
    /// time since the NACK is a clean round trip; more: whose answer it was is unknown).
    public private(set) var lastRecoveryTries = 0
    /// Whether that number had been inferred missing: it may have been its first sending, so its
    /// time says nothing of the round trip.
    public private(set) var lastRecoveryInferred = false
    /// Numbers inferred missing above the highest, held at most at once.
    public static let maxInferred = 4
    /// Those numbers, in order (capacity `maxInferred`, reserved at start).
    private var inferred: [Missing] = []
    /// The highest number inferred so far above `highest` (nil: none, and `inferred` is empty).
    private var inferredUpTo: Int64?

    public init(configuration: Configuration = Configuration()) {
        var c = configuration
        c.capacity = max(1, c.capacity)
        c.maxTries = max(1, c.maxTries)
        self.configuration = c
        ring = Array(repeating: Missing(extendedSequence: 0, since: 0, nextRequest: 0, tries: 0, firstRequest: 0,
                                       live: false),
                     count: c.capacity)
        inferred.reserveCapacity(Self.maxInferred)
    }

    /// Numbers now waiting to arrive.
    public var missingCount: Int { liveCount }

    private func extend(_ seq: UInt16) -> Int64 {
        guard let h = highest else { return Int64(seq) + (1 << 16) }
        return seq.extended(around: h)
    }

    private func index(_ position: Int) -> Int { position % configuration.capacity }

    /// Notes a received packet. Returns, when it was one a NACK had asked for, the time since
    /// that first NACK (an upper bound of the round trip); nil otherwise.
    @discardableResult
    public mutating func packetReceived(sequenceNumber: UInt16, now: Int64) -> Int64? {
        let e = extend(sequenceNumber)
        guard let h = highest else {
            highest = e
            return nil
        }
        if e < h - Self.restartDistance {
            if sequenceNumber == restartCandidate {
                // The sender restarted: forget what was missing, count from here.
                while head < tail {
                    if ring[index(head)].live { ring[index(head)].live = false }
                    head += 1
                }
                liveCount = 0
                inferred.removeAll(keepingCapacity: true)
                inferredUpTo = nil
                highest = e
                restartCandidate = nil
            } else {
                restartCandidate = sequenceNumber &+ 1
            }
            return nil
        }
        restartCandidate = nil
        if e > h {
            var first = h + 1
            let gap = e - first
            if gap > Int64(configuration.capacity) {
                // Too wide to track: the oldest part is given up at once.
                let skipped = gap - Int64(configuration.capacity)
                counters.missing += UInt64(skipped)
                counters.givenUp += UInt64(skipped)
                keyframeWanted = true
                first = e - Int64(configuration.capacity)
            }
            while first < e {
                counters.missing += 1
                if let upTo = inferredUpTo, first <= upTo {
                    if let m = takeInferred(first) {
                        // Inferred, now known: an ordinary hole from here, its requests kept.
                        append(m)
                        counters.inferredConfirmed += 1
                        if m.tries > 0 { counters.nacked += 1 }
                    } else {
                        // Inferred and asked for until dropped: it existed, and is lost.
                        counters.givenUp += 1
                        keyframeWanted = true
                    }
                } else {
                    append(Missing(extendedSequence: first, since: now,
                                   nextRequest: now + configuration.reorderWaitMicroseconds, tries: 0,
                                   firstRequest: 0, live: true))
                }
                first += 1
            }
            highest = e
            // Nothing inferred (`inferredUpTo` nil: the list is empty): an in-order packet ends here.
            guard let upTo = inferredUpTo else { return nil }
            var sinceRequest: Int64? = nil
            if e <= upTo, let m = takeInferred(e) {
                if m.tries > 0 {
                    counters.missing += 1
                    counters.nacked += 1
                    counters.recovered += 1
                    counters.inferredAnswered += 1
                    lastRecoveryTries = m.tries
                    lastRecoveryInferred = true
                    sinceRequest = max(0, now - m.firstRequest)
                } else {
                    counters.inferredUnasked += 1
                }
            }
            // Inferred numbers the wide gap skipped were counted there.
            inferred.removeAll { $0.extendedSequence <= e }
            if upTo <= e { inferredUpTo = nil }
            return sinceRequest
        }
        guard let p = find(e) else { return nil }  // a duplicate, or already given up
        let m = ring[index(p)]
        remove(at: p)
        guard m.tries > 0 else {
            counters.reordered += 1
            return nil
        }
        counters.recovered += 1
        lastRecoveryTries = m.tries
        lastRecoveryInferred = false
        return max(0, now - m.firstRequest)
    }

    /// Evidence that the next `count` numbers above the highest were sent and lost (a gap in the
    /// transport-wide numbers after the newest packet, see the invariants): they are asked for
    /// after the reorder wait, before a higher number could show they are missing. At most
    /// `maxInferred` above the highest; numbers already inferred keep their state.
    public mutating func inferMissing(count: Int, now: Int64) {
        guard let h = highest, count > 0 else { return }
        let upTo = h + Int64(min(count, Self.maxInferred))
        var n = max(h, inferredUpTo ?? h) + 1
        while n <= upTo {
            inferred.append(Missing(extendedSequence: n, since: now,
                                    nextRequest: now + configuration.reorderWaitMicroseconds, tries: 0,
                                    firstRequest: 0, live: true))
            counters.inferred += 1
            n += 1
        }
        inferredUpTo = max(inferredUpTo ?? h, upTo)
    }

    /// Numbers asked for and not yet here (their answers are on the way, or lost), inferred ones
    /// included.
    public var askedAndWaiting: Int {
        var n = inferred.reduce(0) { $0 + ($1.tries > 0 ? 1 : 0) }
        var p = head
        while p < tail {
            let m = ring[index(p)]
            if m.live && m.tries > 0 { n += 1 }
            p += 1
        }
        return n
    }

    private mutating func takeInferred(_ e: Int64) -> Missing? {
        guard let k = inferred.firstIndex(where: { $0.extendedSequence == e }) else { return nil }
        return inferred.remove(at: k)
    }

    /// The jitter buffer gave `sequenceNumber` up: stop asking for it. Returns when it was
    /// first asked for, if it was (an answer arriving later still measures the round trip).
    @discardableResult
    public mutating func abandon(sequenceNumber: UInt16) -> Int64? {
        guard highest != nil, let p = find(extend(sequenceNumber)) else { return nil }
        let m = ring[index(p)]
        remove(at: p)
        return m.tries > 0 ? m.firstRequest : nil
    }

    /// Writes the numbers to NACK at `now` into `output` (oldest first; at most its count) and
    /// returns how many. Gives up numbers past their tries or age (then `takeKeyframeRequest`
    /// says so). `roundTripMicroseconds`: the current RTT estimate, if any.
    public mutating func collectDue(now: Int64, roundTripMicroseconds: Int64?,
                                    into output: UnsafeMutableBufferPointer<UInt16>) -> Int {
        let spacing = max(configuration.minimumRetrySpacingMicroseconds,
                          (roundTripMicroseconds ?? 0) * configuration.retryRTTPercent / 100)
        return collectDue(now: now, answerMicroseconds: spacing, playoutWaitMicroseconds: nil, into: output)
    }

    /// As above, with the receiver's timing: a number is asked again `answerMicroseconds` after
    /// its last NACK (at least `minimumRetrySpacing`), and given up as soon as no answer could
    /// arrive within `playoutWaitMicroseconds` of its going missing (nil: no such deadline) —
    /// recovery has become impossible, so the keyframe is asked for without waiting longer.
    public mutating func collectDue(now: Int64, answerMicroseconds: Int64, playoutWaitMicroseconds: Int64?,
                                    into output: UnsafeMutableBufferPointer<UInt16>) -> Int {
        var written = 0
        let spacing = max(configuration.minimumRetrySpacingMicroseconds, answerMicroseconds)
        var p = head
        while p < tail, written < output.count {
            let i = index(p)
            let m = ring[i]
            if m.live && m.nextRequest <= now {
                // The first NACK always goes out; a retry only if its answer can still be used.
                if exhausted(m, now: now, answerMicroseconds: answerMicroseconds, playoutWaitMicroseconds: playoutWaitMicroseconds) {
                    remove(at: p)
                    counters.givenUp += 1
                    keyframeWanted = true
                } else {
                    output[written] = UInt16(truncatingIfNeeded: m.extendedSequence)
                    written += 1
                    if m.tries == 0 { counters.nacked += 1 }
                    counters.requests += 1
                    ring[i].asked(at: now, spacing: spacing)
                }
            }
            p += 1
        }
        trimHead()
        var k = 0
        while k < inferred.count, written < output.count {
            let m = inferred[k]
            if m.nextRequest <= now {
                if exhausted(m, now: now, answerMicroseconds: answerMicroseconds, playoutWaitMicroseconds: playoutWaitMicroseconds) {
                    // Never shown to exist: dropped without a keyframe (a higher arrival that
                    // shows it lost asks for one then).
                    inferred.remove(at: k)
                    counters.inferredDropped += 1
                    continue
                }
                output[written] = UInt16(truncatingIfNeeded: m.extendedSequence)
                written += 1
                counters.requests += 1
                inferred[k].asked(at: now, spacing: spacing)
            }
            k += 1
        }
        return written
    }

    /// When `collectDue` next has something to do (nil: nothing is missing).
    public var nextDeadline: Int64? {
        var earliest: Int64? = nil
        var p = head
        while p < tail {
            let m = ring[index(p)]
            if m.live { earliest = min(earliest ?? m.nextRequest, m.nextRequest) }
            p += 1
        }
        for m in inferred { earliest = min(earliest ?? m.nextRequest, m.nextRequest) }
        return earliest
    }

    /// True once after numbers were given up: the receiver should ask for a keyframe.
    public mutating func takeKeyframeRequest() -> Bool {
        defer { keyframeWanted = false }
        return keyframeWanted
    }

    private mutating func append(_ m: Missing) {
        if tail - head == configuration.capacity {
            // Full: the oldest entry makes room (given up if it was still live).
            if ring[index(head)].live {
                liveCount -= 1
                counters.givenUp += 1
                keyframeWanted = true
            }
            head += 1
            trimHead()
        }
        ring[index(tail)] = m
        tail += 1
        liveCount += 1
    }

    private func find(_ e: Int64) -> Int? {
        var p = head
        while p < tail {
            let m = ring[index(p)]
            if m.extendedSequence == e { return m.live ? p : nil }
            if m.extendedSequence > e { return nil }
            p += 1
        }
        return nil
    }

    private mutating func remove(at p: Int) {
        guard ring[index(p)].live else { return }
        ring[index(p)].live = false
        liveCount -= 1
        trimHead()
    }

    private mutating func trimHead() {
        while head < tail && !ring[index(head)].live { head += 1 }
    }
}
