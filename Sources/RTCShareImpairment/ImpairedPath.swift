import RTCShareCore

// One direction of a network path with impairments, sans-IO: datagrams go in with the time
// they were sent; `release(until:)` hands out those that have arrived by then, in arrival order;
// `nextRelease` says when the next one will. No socket, clock or random source inside: times
// are the caller's `MediaTime`, draws come from the generator it gives, so a seed and the same
// input replay the same fates.
//
// A datagram's way, in order:
//   1. loss: the random draw (`lossPercent`), then the Gilbert-Elliott chain (stepped for every
//      datagram, so burst lengths do not depend on the random loss);
//   2. the bandwidth cap: a FIFO served at `rateBitsPerSecond`; a datagram that would take the
//      queue above `queueBytes` is dropped (tail drop); the wait until its serialisation starts
//      is its queueing delay;
//   3. delay ± jitter, never earlier than the datagram before it (jitter keeps the order);
//   4. reordering: a datagram picked is held `reorderDelay` longer, so later ones overtake it;
//   5. duplication: a copy arrives with it.
//
// Invariants: held datagrams are kept sorted by arrival time (ties in the order submitted);
// every datagram handed in is counted exactly once as lost, tail-dropped or forwarded (and
// its copy once more as forwarded and duplicated). Memory: what is in flight, bounded by the
// queue for a capped path and by delay × input rate otherwise.

/// One direction of an impaired path. `Payload` is what the caller carries (bytes, an index).
public struct ImpairedPath<Payload, Random: RandomNumberGenerator> {
    /// What the path does. It may change mid-run (a cap lifted or moved, loss that starts):
    /// what is queued or in flight keeps its fate, and a datagram handed in after a cap is
    /// lifted still arrives after those queued before it (the order is kept). The burst chain
    /// starts again in its good state only when its own figures change.
    public var profile: ImpairmentProfile {
        didSet {
            if profile.burstLossPercent != oldValue.burstLossPercent || profile.meanBurstLength != oldValue.meanBurstLength {
                bursts = GilbertElliottLoss(lossFraction: profile.burstLossPercent / 100,
                                            meanBurstLength: profile.meanBurstLength)
            }
        }
    }
    public private(set) var statistics = ImpairmentStatistics()
    /// The same counts for the datagrams handed in `settleAfter` or later after the first one
    /// (nil without `settleAfter`, or before then): a path's figures once a sender has had
    /// time to find its rate, apart from the start's.
    public private(set) var settledStatistics: ImpairmentStatistics?
    public let settleAfter: MediaDuration?
    private var firstSubmitted: MediaTime?
    private var random: Random
    private var bursts: GilbertElliottLoss
    /// When the bandwidth cap's link is free again, and the queue's (finish time, bytes).
    private var linkFreeAt = MediaTime(microseconds: Int64.min / 2)
    private var queue: [(finish: MediaTime, bytes: Int)] = []
    private var queueHead = 0
    private var queuedBytes = 0
    /// Arrival of the newest datagram that kept its place (jitter must not reorder).
    private var lastInOrder = MediaTime(microseconds: Int64.min / 2)
    private var held: [(at: MediaTime, payload: Payload)] = []

    /// What became of a datagram handed in.
    public enum Fate: Sendable, Equatable {
        case lost
        case tailDropped
        /// It will arrive at `at`; `duplicated`: a copy with it.
        case delivered(at: MediaTime, duplicated: Bool)
    }

    public init(profile: ImpairmentProfile, random: Random, settleAfter: MediaDuration? = nil) {
        self.profile = profile
        self.settleAfter = settleAfter
        self.random = random
        bursts = GilbertElliottLoss(lossFraction: profile.burstLossPercent / 100,
                                    meanBurstLength: profile.meanBurstLength)
    }

    private mutating func chance(_ percent: Double) -> Bool {
        percent > 0 && Double.random(in: 0..<100, using: &random) < percent
    }

    /// Hands in a datagram of `bytes` bytes sent at `now`.
    @discardableResult
    public mutating func submit(_ payload: Payload, bytes: Int, at now: MediaTime) -> Fate {
        if firstSubmitted == nil { firstSubmitted = now }
        if let settleAfter, settledStatistics == nil, let first = firstSubmitted, now - first >= settleAfter {
            settledStatistics = ImpairmentStatistics()
        }
        record { $0.received += 1; $0.bytesReceived += UInt64(bytes) }
        let randomLoss = chance(profile.lossPercent)
        let burstLoss = profile.burstLossPercent > 0 && bursts.step(draw: Double.random(in: 0..<1, using: &random))
        if randomLoss || burstLoss {
            record { $0.lost += 1; $0.bytesLost += UInt64(bytes) }
            return .lost
        }
        var departure = now
        if let rate = profile.rateBitsPerSecond {
            while queueHead < queue.count && queue[queueHead].finish <= now {
                queuedBytes -= queue[queueHead].bytes
                queueHead += 1
            }
            if queueHead > 256 && queueHead * 2 > queue.count {
                queue.removeFirst(queueHead)
                queueHead = 0
            }
            guard queuedBytes + bytes <= profile.queueBytes else {
                record { $0.tailDropped += 1; $0.bytesTailDropped += UInt64(bytes) }
                return .tailDropped
            }
            let start = max(now, linkFreeAt)
            record { $0.queueDelay.add(microseconds: (start - now).microseconds) }
            let serialisation = (Int64(bytes) * 8 * 1_000_000 + Int64(rate) - 1) / Int64(rate)
            departure = start + .microseconds(serialisation)
            linkFreeAt = departure
            queue.append((departure, bytes))
            queuedBytes += bytes
        } else {
            record { $0.queueDelay.add(microseconds: 0) }
        }
        var delay = profile.delay.microseconds
        if profile.jitter.microseconds > 0 {
            delay = max(0, delay + Int64.random(in: -profile.jitter.microseconds...profile.jitter.microseconds,
                                                using: &random))
        }
        var arrival = departure + .microseconds(delay)
        if chance(profile.reorderPercent) {
            arrival = max(arrival, lastInOrder) + profile.reorderDelay
            record { $0.reordered += 1 }
        } else {
            arrival = max(arrival, lastInOrder)
            lastInOrder = arrival
        }
        let duplicated = chance(profile.duplicatePercent)
        hold(payload, at: arrival)
        record { $0.forwarded += 1; $0.bytesForwarded += UInt64(bytes) }
        if duplicated {
            hold(payload, at: arrival)
            record { $0.duplicated += 1; $0.forwarded += 1; $0.bytesForwarded += UInt64(bytes) }
        }
        return .delivered(at: arrival, duplicated: duplicated)
    }

    /// Counts into the whole run's figures and, once settled, the settled ones.
    private mutating func record(_ update: (inout ImpairmentStatistics) -> Void) {
        update(&statistics)
        if settledStatistics != nil { update(&settledStatistics!) }
    }

    /// Keeps `held` sorted by arrival, a tie after what is there (so equal times keep the order).
    private mutating func hold(_ payload: Payload, at time: MediaTime) {
        var i = held.count
        while i > 0 && held[i - 1].at > time { i -= 1 }
        held.insert((time, payload), at: i)
    }

    /// When the next datagram arrives (nil: none in flight).
    public var nextRelease: MediaTime? { held.first?.at }

    /// Datagrams in flight.
    public var inFlight: Int { held.count }

    /// Hands out, in arrival order, every datagram that has arrived by `now`.
    public mutating func release(until now: MediaTime, _ deliver: (Payload) -> Void) {
        var n = 0
        while n < held.count && held[n].at <= now {
            deliver(held[n].payload)
            n += 1
        }
        if n > 0 { held.removeFirst(n) }
    }
}
