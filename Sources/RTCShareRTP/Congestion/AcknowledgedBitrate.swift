// The rate the receiver actually got, from transport-wide feedback: bytes of the packets it
// reports as received over windows of their arrival times. When a queue has built up, packets
// leave the bottleneck back to back, so this is the path's capacity — what the delay-based
// estimate drops to (times 0.85) when it sees overuse.
//
// Invariants: windows of `windowMicroseconds` of arrival time (the first one shorter, so an
// estimate exists soon after the start); each finished window gives a sample, averaged half
// and half with the previous estimate. Arrival times are the receiver's (only differences
// matter). No allocation.

/// Throughput acknowledged by the receiver, in bit/s.
public struct AcknowledgedBitrate: Sendable, Equatable {
    public static let windowMicroseconds: Int64 = 300_000
    public static let firstWindowMicroseconds: Int64 = 150_000

    /// nil until a window has finished.
    public private(set) var bitsPerSecond: Double?
    private var windowStart: Int64?
    private var windowBytes = 0

    public init() {}

    /// A packet of `bytes` the receiver got at `arrival` (its clock, microseconds).
    public mutating func received(bytes: Int, at arrival: Int64) {
        guard let start = windowStart, arrival >= start else {
            // The first packet, or a clock that went back (a reordered packet): start again.
            windowStart = arrival
            windowBytes = bytes
            return
        }
        let span = arrival - start
        let window = bitsPerSecond == nil ? Self.firstWindowMicroseconds : Self.windowMicroseconds
        if span >= window {
            let sample = Double(windowBytes) * 8 * 1_000_000 / Double(span)
            bitsPerSecond = bitsPerSecond.map { ($0 + sample) / 2 } ?? sample
            windowStart = arrival
            windowBytes = bytes
        } else {
            windowBytes += bytes
        }
    }
}
