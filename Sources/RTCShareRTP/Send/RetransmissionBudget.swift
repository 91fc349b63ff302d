// A token bucket for retransmissions: NACKed packets are resent only while the bucket has
// bytes for them, so a NACK storm (a broken or hostile receiver asking for everything again
// and again) costs at most `bytesPerSecond` plus one burst, never a multiple of the media
// rate. Sans-IO: the caller passes the time.
//
// Invariants: tokens are kept in byte-microseconds (bytes x 10^6), integers only, so refill
// is exact; they never exceed `burstBytes`; a time that goes backwards refills nothing.

/// Decides whether a retransmission of some bytes may go out now.
public struct RetransmissionBudget: Sendable {
    /// Refill rate. May be changed at any time (e.g. to a share of the target bitrate).
    public var bytesPerSecond: Int
    public var burstBytes: Int {
        didSet { burstBytes = min(max(0, burstBytes), 1 << 40) }
    }
    /// Most bytes that can go out at once after a quiet period. May be changed at any time
    /// (what is saved beyond a lower value is dropped at the next refill).
    private var tokens: Int64
    private var lastMicroseconds: Int64?
    /// Bytes allowed and packets refused so far.
    public private(set) var allowedBytes: UInt64 = 0
    public private(set) var refusedPackets: UInt64 = 0

    /// Starts full. Both values are clamped to 0...2^40 (so byte-microseconds fit 64 bits).
    public init(bytesPerSecond: Int, burstBytes: Int) {
        self.bytesPerSecond = min(max(0, bytesPerSecond), 1 << 40)
        self.burstBytes = min(max(0, burstBytes), 1 << 40)
        tokens = Int64(self.burstBytes) * 1_000_000
    }

    private mutating func refill(_ now: Int64) {
        defer { lastMicroseconds = max(lastMicroseconds ?? now, now) }
        tokens = min(tokens, Int64(burstBytes) * 1_000_000)
        let rate = Int64(min(bytesPerSecond, 1 << 40))
        guard let last = lastMicroseconds, now > last, rate > 0 else { return }
        let cap = Int64(burstBytes) * 1_000_000
        // Long gaps are cut to the time a full refill takes, so the product cannot overflow.
        let full = cap / rate + 1
        let gap = now.subtractingReportingOverflow(last)
        let elapsed = gap.overflow ? full : min(gap.partialValue, full)
        tokens = min(cap, tokens + elapsed * rate)
    }

    /// Bytes that could go out at `nowMicroseconds`.
    public mutating func available(nowMicroseconds: Int64) -> Int {
        refill(nowMicroseconds)
        return Int(tokens / 1_000_000)
    }

    /// When `bytes` will be there if nothing else is taken (`nowMicroseconds` if they are now);
    /// nil: never (more than a burst, or no refill).
    public mutating func time(forBytes bytes: Int, nowMicroseconds: Int64) -> Int64? {
        refill(nowMicroseconds)
        let needed = Int64(max(0, bytes)) * 1_000_000
        guard needed > tokens else { return nowMicroseconds }
        guard bytes <= burstBytes, bytesPerSecond > 0 else { return nil }
        return nowMicroseconds + (needed - tokens + Int64(bytesPerSecond) - 1) / Int64(bytesPerSecond)
    }

    /// Whether a retransmission of `bytes` may go out at `nowMicroseconds`; if so, takes them.
    public mutating func allow(bytes: Int, nowMicroseconds: Int64) -> Bool {
        refill(nowMicroseconds)
        guard bytes <= burstBytes, Int64(max(0, bytes)) * 1_000_000 <= tokens else {
            refusedPackets &+= 1
            return false
        }
        tokens -= Int64(max(0, bytes)) * 1_000_000
        allowedBytes &+= UInt64(max(0, bytes))
        return true
    }
}
