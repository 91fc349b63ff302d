/// What one direction of an impaired path did, since it started.
public struct ImpairmentStatistics: Sendable, Equatable {
    /// Datagrams handed to the path, and their bytes.
    public var received: UInt64 = 0
    public var bytesReceived: UInt64 = 0
    /// Datagrams delivered (duplicates included), and their bytes.
    public var forwarded: UInt64 = 0
    public var bytesForwarded: UInt64 = 0
    /// Lost by the loss models (random or bursty), and their bytes.
    public var lost: UInt64 = 0
    public var bytesLost: UInt64 = 0
    /// Dropped because the bandwidth queue was full, and their bytes.
    public var tailDropped: UInt64 = 0
    public var bytesTailDropped: UInt64 = 0
    public var duplicated: UInt64 = 0
    /// Held back so that later datagrams overtook them.
    public var reordered: UInt64 = 0
    /// Time each datagram waited in the bandwidth queue (0 without a cap).
    public var queueDelay = DelayHistogram()

    public init() {}

    /// One JSON object; `direction` names it. `settled`: the figures after the start
    /// (`ImpairedPath.settledStatistics`), nested under "settled" with `settledAfterSeconds`.
    public func json(direction: String, settled: ImpairmentStatistics? = nil, settledAfterSeconds: Double = 0) -> String {
        "{\"direction\":\"\(direction)\"," + fields
            + (settled.map { ",\"settled_after_s\":\(settledAfterSeconds),\"settled\":{" + $0.fields + "}" } ?? "") + "}"
    }

    /// The counters as JSON members, without braces.
    private var fields: String {
        func ms(_ us: Int64) -> String {
            let tenths = (us + 50) / 100
            return "\(tenths / 10).\(tenths % 10)"
        }
        return "\"received\":\(received),\"forwarded\":\(forwarded)"
            + ",\"lost\":\(lost),\"tail_dropped\":\(tailDropped),\"duplicated\":\(duplicated)"
            + ",\"reordered\":\(reordered),\"queue_delay_p50_ms\":\(ms(queueDelay.percentile(50)))"
            + ",\"queue_delay_p99_ms\":\(ms(queueDelay.percentile(99)))"
            + ",\"queue_delay_max_ms\":\(ms(queueDelay.maximumMicroseconds))"
            + ",\"bytes_received\":\(bytesReceived),\"bytes_forwarded\":\(bytesForwarded)"
            + ",\"bytes_lost\":\(bytesLost),\"bytes_tail_dropped\":\(bytesTailDropped)"
    }
}

/// Delays counted in 1 ms bins up to 10 s (longer ones in the last bin), plus the exact
/// maximum: percentiles to the millisecond in a fixed 80 KB, whatever the run's length.
public struct DelayHistogram: Sendable, Equatable {
    private static let bins = 10_000
    private var counts = [UInt64](repeating: 0, count: bins)
    public private(set) var count: UInt64 = 0
    public private(set) var maximumMicroseconds: Int64 = 0

    public init() {}

    public mutating func add(microseconds: Int64) {
        let us = max(0, microseconds)
        counts[min(Int(us / 1000), Self.bins - 1)] += 1
        count += 1
        maximumMicroseconds = max(maximumMicroseconds, us)
    }

    /// The upper edge of the bin holding the `p`-th percentile (0 when empty), at most the maximum.
    public func percentile(_ p: Int) -> Int64 {
        guard count > 0 else { return 0 }
        let rank = max(1, (count * UInt64(min(max(p, 0), 100)) + 99) / 100)
        var seen: UInt64 = 0
        for i in 0..<Self.bins {
            seen += counts[i]
            if seen >= rank { return min(Int64(i + 1) * 1000, maximumMicroseconds) }
        }
        return maximumMicroseconds
    }
}
