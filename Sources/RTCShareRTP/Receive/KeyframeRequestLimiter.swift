import RTCShareCore

// When a receiver may send a keyframe request (PLI, RFC 4585 §6.3.1).
//
// Invariants:
// - Requests are sent at most once per `minimumIntervalMicroseconds`: a keyframe takes at least
//   a round trip to arrive, and asking again before that only makes the sender send several.
// - A request made too soon is not lost: it stays pending and is due when the interval has
//   passed, unless `keyframeReceived` settles it first.
// - Times are passed in; nothing here reads a clock.

/// Rate-limits keyframe requests of one stream, sans-IO.
public struct KeyframeRequestLimiter: Sendable, Equatable {
    /// The spacing, the same rule the encoders apply to the requests they get.
    private var limit: KeyframeRateLimit
    public var minimumIntervalMicroseconds: Int64 {
        get { limit.minimumIntervalMicroseconds }
        set { limit.minimumIntervalMicroseconds = newValue }
    }
    private var pending = false
    /// Requests made (`request` calls while none was pending).
    public private(set) var requested: UInt64 = 0
    /// Requests sent (what `takeDue` returned true for).
    public private(set) var sent: UInt64 = 0

    public init(minimumIntervalMicroseconds: Int64 = 300_000) {
        limit = KeyframeRateLimit(minimumIntervalMicroseconds: minimumIntervalMicroseconds)
    }

    /// Whether a request waits to be sent.
    public var isPending: Bool { pending }

    /// Asks for a keyframe (the decoder cannot go on).
    public mutating func request() {
        if !pending { requested += 1 }
        pending = true
    }

    /// A keyframe arrived: a pending request is no longer needed.
    public mutating func keyframeReceived() { pending = false }

    /// True when a request should be sent now (and counts it as sent).
    public mutating func takeDue(now: Int64) -> Bool {
        guard pending, limit.accept(at: now) else { return false }
        pending = false
        sent += 1
        return true
    }

    /// When a pending request becomes due (nil: none pending).
    public var nextDeadline: Int64? {
        guard pending else { return nil }
        return limit.nextAccepted ?? Int64.min
    }
}
