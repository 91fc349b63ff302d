/// Latencies in a fixed-size histogram: 0.1 ms buckets up to 1 s, one overflow bucket above.
/// Allocated once; `record` is O(1) and allocates nothing; a percentile is one scan.
///
/// Invariant: `count` is the sum of the buckets; a percentile is the upper edge of the bucket
/// holding that rank (so it is exact to 0.1 ms below 1 s, and "≥ 1 s" above).
public struct LatencyHistogram: Sendable {
    public static let bucketMicroseconds: Int64 = 100
    public static let bucketCount = 10_000
    private var buckets: [UInt32]
    private var overflow: UInt64 = 0
    public private(set) var count: UInt64 = 0
    public private(set) var maximumMicroseconds: Int64 = 0

    public init() {
        buckets = Array(repeating: 0, count: Self.bucketCount)
    }

    /// Adds one latency (negative values count as 0).
    public mutating func record(microseconds: Int64) {
        let v = max(0, microseconds)
        let i = v / Self.bucketMicroseconds
        if i < Int64(Self.bucketCount) { buckets[Int(i)] &+= 1 } else { overflow += 1 }
        count += 1
        maximumMicroseconds = max(maximumMicroseconds, v)
    }

    /// The latency at `percent` (0...100) in microseconds; nil when nothing was recorded.
    public func percentile(_ percent: Double) -> Int64? {
        guard count > 0 else { return nil }
        let p = min(max(percent, 0), 100)
        // The rank (1-based) of the value asked for: ceil(p% of count), at least 1.
        var rank = UInt64((p / 100 * Double(count)).rounded(.up))
        rank = max(1, min(rank, count))
        var seen: UInt64 = 0
        for i in 0..<Self.bucketCount {
            seen += UInt64(buckets[i])
            if seen >= rank { return Int64(i + 1) * Self.bucketMicroseconds }
        }
        return maximumMicroseconds
    }
}
