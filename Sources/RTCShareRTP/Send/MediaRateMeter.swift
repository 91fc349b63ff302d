// The rate media is being sent at, measured over the last second: what the retransmission
// budget is a share of. Ten 100 ms buckets in a fixed array; a bucket is cleared as time
// reaches it again, so an idle second reads as zero. Times are passed in; nothing grows.

/// Bytes sent per second over the last second, sans-IO.
public struct MediaRateMeter: Sendable, Equatable {
    private static let buckets = 10
    private static let bucketMicroseconds: Int64 = 100_000
    private var bytes = [UInt64](repeating: 0, count: buckets)
    /// The bucket (as a count of 100 ms periods) each slot last held.
    private var period = [Int64](repeating: Int64.min, count: buckets)

    public init() {}

    /// `count` bytes went out at `nowMicroseconds`.
    public mutating func add(bytes count: Int, nowMicroseconds: Int64) {
        let p = nowMicroseconds / Self.bucketMicroseconds
        let i = Int(((p % Int64(Self.buckets)) + Int64(Self.buckets)) % Int64(Self.buckets))
        if period[i] != p {
            period[i] = p
            bytes[i] = 0
        }
        bytes[i] &+= UInt64(max(0, count))
    }

    /// Bytes per second over the second before `nowMicroseconds`.
    public func bytesPerSecond(nowMicroseconds: Int64) -> Int {
        let p = nowMicroseconds / Self.bucketMicroseconds
        var total: UInt64 = 0
        for i in 0..<Self.buckets where period[i] > p - Int64(Self.buckets) && period[i] <= p {
            total &+= bytes[i]
        }
        return Int(min(total, UInt64(Int.max)))
    }
}
