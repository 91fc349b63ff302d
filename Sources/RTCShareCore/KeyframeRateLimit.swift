/// At most one keyframe per interval, whoever asks: a keyframe costs several times a delta
/// frame and takes at least a round trip to reach the receiver, so a request repeated before
/// then (PLIs from a receiver still waiting, a decoder asking again) would only send several.
/// The encoders refuse what comes too soon; the receive side keeps it pending until the
/// interval has passed. Times are any monotonic microsecond clock the caller keeps using;
/// nothing here reads a clock.
public struct KeyframeRateLimit: Sendable, Equatable {
    /// The shortest time between two accepted requests.
    public var minimumIntervalMicroseconds: Int64
    private var lastAccepted: Int64?

    public init(minimumIntervalMicroseconds: Int64) {
        self.minimumIntervalMicroseconds = minimumIntervalMicroseconds
    }

    /// Whether a request at `now` may go ahead; when it may, the interval starts again at `now`.
    public mutating func accept(at now: Int64) -> Bool {
        if let last = lastAccepted, now - last < minimumIntervalMicroseconds { return false }
        lastAccepted = now
        return true
    }

    /// A keyframe made whatever the limit says (media just started to flow): the next request
    /// is counted from `now`.
    public mutating func restart(at now: Int64) {
        lastAccepted = now
    }

    /// The earliest time a request is accepted; nil when one would be accepted at any time
    /// (none accepted yet).
    public var nextAccepted: Int64? {
        lastAccepted.map { $0 + minimumIntervalMicroseconds }
    }
}
