import Glibc

// The rate half of the delay-based estimator (draft-ietf-rmcat-gcc-02 §5.5): additive increase,
// multiplicative decrease, driven by what the overuse detector says of the queue.
//
// Invariants:
// - Overuse → decrease to 0.85 × the acknowledged rate (never above the estimate), at most once
//   per round trip (10...200 ms): the queue needs that long to show the cut. Then hold. When the
//   queue is already long (queueing delay above 50 ms), the cut is deeper, down to half the
//   acknowledged rate for a half-second queue, so it drains within a couple of seconds.
//   That deeper part is for draining only: once the queue is gone (the next increase, which
//   waits for a queue under `standingQueueMicroseconds`) the estimate returns at once to where
//   the plain cut would have put it (0.85 × the base). Without that it crawled back additively
//   from a third of the path's rate: a share starting at 2.5 Mbit/s into a 1 Mbit/s path with
//   a 250 ms queue sat at 316 kbit/s, took 8 s to reach 570, and its encoder, asked for
//   ~200 kbit/s of 720p, dropped most frames.
//   A standing queue (`DelayBasedEstimator`: high and flat, the sender above the path's rate
//   for long) is cut from the estimate itself when that is below the acknowledged rate: the
//   acknowledged rate is then the path's capacity, which is what keeps the queue full.
//   An application-limited sender (it sent under `applicationLimitedFraction` of the estimate:
//   the encoder made little, a low frame rate, a still screen) with no standing queue is cut
//   from max(acknowledged, 0.85 × estimate): the acknowledged rate is then what was offered,
//   not what the path carries, and an overuse verdict from a few big frames must not take the
//   estimate down to it (libwebrtc does not decrease on such periods either).
// - Underuse (the queue drains) → hold: sending more now would refill it.
// - Normal with a queue above `standingQueueMicroseconds` → hold: growing would only fill it.
// - Normal → increase: multiplicatively (8 % a second) while far from the rate the path last
//   congested at, additively (about one packet per response time, round trip + 100 ms) near it.
//   "Near" is within three deviations of the average acknowledged rate at past decreases
//   (`LinkCapacity`); above that the average is forgotten and growth is multiplicative again.
// - An increase never takes the estimate above 1.5 × the acknowledged rate + 10 kbit/s (an
//   encoder sending less than allowed teaches nothing about the path), and that cap never
//   lowers it.
// - The estimate stays within minimum...maximum. Times are passed in; no allocation.

/// Additive-increase, multiplicative-decrease rate control of the delay-based estimate.
public struct AIMDRateControl: Sendable, Equatable {
    public enum Signal: Sendable, Equatable { case normal, overusing, underusing }
    public enum State: Sendable, Equatable { case hold, increase, decrease }

    public static let decreaseFactor = 0.85
    public static let multiplicativeGrowthPerSecond = 1.08
    /// A queue longer than this (µs) is not grown into.
    public static let standingQueueMicroseconds: Int64 = 40_000
    /// A sender sending under this fraction of the estimate is application-limited.
    public static let applicationLimitedFraction = 0.75

    public private(set) var bitsPerSecond: Double
    public private(set) var state = State.increase
    public var minimumBitsPerSecond: Double
    public var maximumBitsPerSecond: Double
    /// Decreases made (for tests and stats).
    public private(set) var decreases = 0
    private var capacity = LinkCapacity()
    private var lastChange: Int64?
    /// Where the estimate returns once a drain cut has emptied the queue (bit/s).
    public private(set) var afterDrainBitsPerSecond: Double?

    public init(startBitsPerSecond: Double, minimumBitsPerSecond: Double, maximumBitsPerSecond: Double) {
        self.minimumBitsPerSecond = minimumBitsPerSecond
        self.maximumBitsPerSecond = max(maximumBitsPerSecond, minimumBitsPerSecond)
        bitsPerSecond = min(max(startBitsPerSecond, minimumBitsPerSecond), self.maximumBitsPerSecond)
    }

    /// Whether the estimate is near the rate the path last congested at (additive growth).
    public var isNearCapacity: Bool { capacity.average != nil }

    /// One feedback's verdict at `now` (µs); `acknowledged` is the receiver's rate (bit/s) if
    /// known, `roundTrip` the last measured (µs), `queueing` the queue's delay now (µs);
    /// `standing`: the overuse is a standing queue's; `sent`: the rate (bit/s) the acknowledged
    /// packets were sent at, if known. Returns the estimate.
    @discardableResult
    public mutating func update(_ signal: Signal, acknowledged: Double?, roundTrip: Int64?, queueing: Int64 = 0,
                                standing: Bool = false, sent: Double? = nil, now: Int64) -> Double {
        switch signal {
        case .overusing: state = .decrease
        case .underusing: state = .hold
        case .normal:
            if queueing > Self.standingQueueMicroseconds {
                state = .hold
            } else if state == .hold || state == .decrease {
                state = .increase
            }
        }
        let since = lastChange.map { now - $0 } ?? 0
        switch state {
        case .hold:
            break
        case .increase:
            if let acknowledged, let upper = capacity.upperBound, acknowledged > upper { capacity = LinkCapacity() }
            let dt = Double(min(max(since, 0), 1_000_000)) / 1_000_000
            var next: Double
            if isNearCapacity {
                let response = Double(min(max(roundTrip ?? 100_000, 10_000), 1_000_000) + 100_000) / 1_000_000
                let packetBits = Self.averagePacketBits(at: bitsPerSecond)
                next = bitsPerSecond + max(4_000, packetBits / response) * dt
            } else {
                next = bitsPerSecond + max(bitsPerSecond * (pow(Self.multiplicativeGrowthPerSecond, dt) - 1), 1_000 * dt)
            }
            if let acknowledged { next = max(bitsPerSecond, min(next, 1.5 * acknowledged + 10_000)) }
            if let afterDrain = afterDrainBitsPerSecond {
                next = max(next, afterDrain)
                afterDrainBitsPerSecond = nil
            }
            bitsPerSecond = next
            lastChange = now
        case .decrease:
            let interval = min(max(roundTrip ?? 200_000, 10_000), 200_000)
            guard lastChange == nil || since >= interval || decreases == 0 else { break }
            var base = standing ? min(acknowledged ?? bitsPerSecond, bitsPerSecond) : acknowledged ?? bitsPerSecond
            if !standing, let sent, sent < Self.applicationLimitedFraction * bitsPerSecond,
               queueing <= Self.standingQueueMicroseconds {
                base = max(base, Self.decreaseFactor * bitsPerSecond)
            }
            let drain = max(0.5, 1 - Double(max(queueing - 50_000, 0)) / 500_000)
            let plain = min(Self.decreaseFactor * base, bitsPerSecond)
            bitsPerSecond = min(Self.decreaseFactor * drain * base, bitsPerSecond)
            afterDrainBitsPerSecond = plain > bitsPerSecond ? min(plain, maximumBitsPerSecond) : nil
            if let acknowledged {
                if let lower = capacity.lowerBound, acknowledged < lower { capacity = LinkCapacity() }
                capacity.add(acknowledged)
            }
            decreases += 1
            lastChange = now
            state = .hold
        }
        bitsPerSecond = min(max(bitsPerSecond, minimumBitsPerSecond), maximumBitsPerSecond)
        if lastChange == nil { lastChange = now }
        return bitsPerSecond
    }

    /// Bits per packet of a video stream at this rate: a 30 fps frame split in 1200-byte packets.
    static func averagePacketBits(at rate: Double) -> Double {
        let frameBits = rate / 30
        let packets = (frameBits / (1200 * 8)).rounded(.up)
        return frameBits / max(packets, 1)
    }

    private func pow(_ x: Double, _ y: Double) -> Double { exp(y * log(x)) }
}

/// The acknowledged rates at past decreases: their average and spread, in kbit/s (the variance
/// normalised by the average, as rates vary in proportion to themselves); bounds in bit/s.
struct LinkCapacity: Sendable, Equatable {
    var average: Double?
    var variance = 0.4

    mutating func add(_ bitsPerSecond: Double) {
        let sample = bitsPerSecond / 1000
        guard let a = average else {
            average = sample
            return
        }
        let alpha = 0.05
        let next = (1 - alpha) * a + alpha * sample
        let error = a - sample
        variance = min(max((1 - alpha) * variance + alpha * error * error / max(a, 1), 0.4), 2.5)
        average = next
    }

    private var deviation: Double? { average.map { (variance * $0).squareRoot() } }
    var upperBound: Double? { average.map { ($0 + 3 * deviation!) * 1000 } }
    var lowerBound: Double? { average.map { max(0, $0 - 3 * deviation!) * 1000 } }
}
