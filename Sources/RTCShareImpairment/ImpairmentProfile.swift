import RTCShareCore

/// What one direction of a simulated network path does to the datagrams crossing it. All
/// percentages are 0...100; times are one-way.
public struct ImpairmentProfile: Sendable, Equatable {
    /// Independent random loss: each datagram is lost with this probability.
    public var lossPercent: Double = 0
    /// Bursty loss (Gilbert-Elliott): the long-run share of datagrams lost in bursts...
    public var burstLossPercent: Double = 0
    /// ...and the mean length of a burst, in datagrams (≥ 1).
    public var meanBurstLength: Double = 1
    /// Fixed propagation delay.
    public var delay: MediaDuration = .zero
    /// Each datagram's delay varies uniformly within `delay ± jitter` (never below zero);
    /// the order is kept (reordering is its own setting).
    public var jitter: MediaDuration = .zero
    /// Datagrams held back by `reorderDelay` so that the ones after them overtake them.
    public var reorderPercent: Double = 0
    public var reorderDelay: MediaDuration = .milliseconds(10)
    /// Datagrams delivered twice.
    public var duplicatePercent: Double = 0
    /// A bandwidth cap in bits per second (nil: none). Datagrams queue for it...
    public var rateBitsPerSecond: Int?
    /// ...in a queue of at most this many bytes; one that does not fit is dropped (tail drop).
    public var queueBytes = 64 << 10

    public init() {}

    /// The same profile, or one line saying which value is out of range.
    public func validated() throws(ImpairmentError) -> ImpairmentProfile {
        for (name, value) in [("loss", lossPercent), ("burst loss", burstLossPercent),
                              ("reorder", reorderPercent), ("duplicate", duplicatePercent)] {
            guard value >= 0 && value <= 100 else { throw ImpairmentError("\(name) must be 0...100 %, not \(value)") }
        }
        guard burstLossPercent < 100 else { throw ImpairmentError("burst loss must be below 100 %") }
        guard meanBurstLength >= 1 && meanBurstLength <= 1_000_000 else {
            throw ImpairmentError("the mean burst length must be 1...1000000 datagrams, not \(meanBurstLength)")
        }
        let hour: Int64 = 3_600_000_000
        for (name, value) in [("delay", delay), ("jitter", jitter), ("reorder delay", reorderDelay)] {
            guard value.microseconds >= 0 && value.microseconds <= hour else {
                throw ImpairmentError("\(name) must be 0 ms...1 h")
            }
        }
        if let rate = rateBitsPerSecond {
            guard rate >= 1_000 && rate <= 100_000_000_000 else {
                throw ImpairmentError("the rate must be 1 kbit/s...100 Gbit/s, not \(rate) bit/s")
            }
        }
        guard queueBytes >= 1_500 && queueBytes <= 1 << 30 else {
            throw ImpairmentError("the queue must hold 1500 bytes...1 GiB, not \(queueBytes)")
        }
        return self
    }
}

/// A setting out of range: one line.
public struct ImpairmentError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
