import RTCShareCore

/// One direction of a simulated network path in fake time: each datagram sent is lost (the
/// link is down, its index is listed, or a seeded draw falls under `loss`) or arrives
/// `delay` later, in the order sent. Two endpoints in one process talk over a pair of these,
/// with no sockets and no sleeps, and the same seed loses the same datagrams.
///
/// With a `bottleneck`, datagrams sent with their size (`send(_:bytes:at:)`) also queue for a
/// link of that rate: each leaves the queue when the ones before it have been serialized, and one
/// that would take the queue past its bytes is dropped (tail drop) — queueing delay and loss
/// as a thin uplink gives them.
///
/// Invariants: one draw per datagram sent while the link is up and its index is not listed (no
/// draw otherwise), so a seed's sequence of decisions depends only on what was sent; the delay
/// is fixed and the queue first in, first out, so what is in flight is always in arrival order
/// (a datagram sent after the cap is lifted still waits for the queue ahead of it). Without a
/// bottleneck nothing queues: the behaviour, and every seeded test, is as before.
public struct LossyLink<Payload> {
    /// A rate cap with a bounded tail-drop queue.
    public struct Bottleneck: Sendable, Equatable {
        public var bitsPerSecond: Int
        public var queueBytes: Int

        public init(bitsPerSecond: Int, queueBytes: Int) {
            self.bitsPerSecond = bitsPerSecond
            self.queueBytes = queueBytes
        }
    }

    /// How a datagram's loss is drawn. Two forms, because seeded tests were written against
    /// each and a different draw would lose different datagrams: a whole percentage drawn as an
    /// integer in 0..<100 (the RTP simulations) or a probability drawn as a `Double` in 0..<1
    /// (the ICE simulation).
    public enum Loss: Sendable {
        case percent(Int)
        case probability(Double)
    }

    public var delay: MediaDuration
    public var loss: Loss
    /// Indices (counting every datagram sent, from 0) lost whatever the draw.
    public var loseIndices: Set<Int> = []
    /// Everything is lost, with no draw: a peer that went away.
    public var isDown = false
    /// Datagrams sent, and of those lost.
    public private(set) var sent = 0
    public private(set) var lost = 0
    public var bottleneck: Bottleneck?
    /// Datagrams offered to the bottleneck and those it dropped; the longest wait in its queue.
    /// `resetBottleneckFigures()` lets a test measure from a point on.
    public private(set) var bottleneckOffered = 0
    public private(set) var bottleneckDropped = 0
    public private(set) var maxQueueingDelay = MediaDuration.zero
    /// Datagrams that went through the bottleneck's queue, and their waits added up (their
    /// mean is how long the queue stood, where the longest wait is only its worst moment).
    public private(set) var queuedDatagrams = 0
    public private(set) var totalQueueingDelay = MediaDuration.zero

    /// Starts the bottleneck's figures again from now (the queue itself is left as it is).
    public mutating func resetBottleneckFigures() {
        (bottleneckOffered, bottleneckDropped, maxQueueingDelay) = (0, 0, .zero)
        (queuedDatagrams, totalQueueingDelay) = (0, .zero)
    }
    private var random: SeededRandom
    private var inFlight: [(at: MediaTime, payload: Payload)] = []
    /// When the queue has serialized what it holds, and what it holds (departure, bytes).
    private var queueFreeAt: MediaTime?
    private var queued: [(leaves: MediaTime, bytes: Int)] = []

    public init(delay: MediaDuration, loss: Loss = .percent(0), seed: UInt64) {
        self.delay = delay
        self.loss = loss
        random = SeededRandom(seed: seed)
    }

    /// Decides the fate of the next datagram sent, counting it: true if it is lost. For a
    /// caller that drops some datagrams itself after the link's decision (an address nobody
    /// answers on) and then `carry`s the rest.
    public mutating func losesNext() -> Bool {
        defer { sent += 1 }
        if isDown || loseIndices.contains(sent) || drawsLoss() {
            lost += 1
            return true
        }
        return false
    }

    private mutating func drawsLoss() -> Bool {
        switch loss {
        case .percent(let p): Int.random(in: 0..<100, using: &random) < p
        case .probability(let p): Double.random(in: 0..<1, using: &random) < p
        }
    }

    /// Puts `payload` in flight, arriving `delay` after `now` (no loss decided here).
    public mutating func carry(_ payload: Payload, from now: MediaTime) {
        inFlight.append((now + delay, payload))
    }

    /// Sends `payload` at `now`; returns whether it will arrive.
    @discardableResult
    public mutating func send(_ payload: Payload, at now: MediaTime) -> Bool {
        if losesNext() { return false }
        carry(payload, from: now)
        return true
    }

    /// Sends `payload` of `bytes` at `now` through the bottleneck (if one is set); returns
    /// whether it will arrive.
    @discardableResult
    public mutating func send(_ payload: Payload, bytes: Int, at now: MediaTime) -> Bool {
        if losesNext() { return false }
        queued.removeFirst(queued.prefix { $0.leaves <= now }.count)
        var start = now
        if let free = queueFreeAt, free > now { start = free }
        guard let cap = bottleneck else {
            inFlight.append((start + delay, payload))
            return true
        }
        bottleneckOffered += 1
        if queued.reduce(0, { $0 + $1.bytes }) + bytes > cap.queueBytes {
            bottleneckDropped += 1
            lost += 1
            return false
        }
        let leaves = start + .microseconds(Int64(bytes) * 8 * 1_000_000 / Int64(max(cap.bitsPerSecond, 1)))
        maxQueueingDelay = max(maxQueueingDelay, leaves - now)
        queuedDatagrams += 1
        totalQueueingDelay = totalQueueingDelay + (leaves - now)
        queueFreeAt = leaves
        queued.append((leaves, bytes))
        inFlight.append((leaves + delay, payload))
        return true
    }

    /// The mean wait in the bottleneck's queue since the counts were last reset.
    public var meanQueueingDelay: MediaDuration {
        .microseconds(totalQueueingDelay.microseconds / Int64(max(queuedDatagrams, 1)))
    }

    /// When the next datagram in flight arrives, if any is.
    public var nextArrival: MediaTime? { inFlight.first?.at }

    /// Takes the datagrams that have arrived by `now`, in the order sent.
    public mutating func arrivals(until now: MediaTime) -> [Payload] {
        let due = inFlight.prefix { $0.at <= now }.map(\.payload)
        inFlight.removeFirst(due.count)
        return due
    }
}
