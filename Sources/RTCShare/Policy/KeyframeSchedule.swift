/// When the sender makes a keyframe besides the first: on a receiver's request (PLI, FIR, a
/// NACK for a packet no longer held) and, for receivers that never ask, periodically.
///
/// Under congestion a keyframe is what refills the bottleneck's queue (three times a frame's
/// bytes at once), and the loss it causes makes the receiver ask for another. So:
/// - Periodic keyframes are for receivers that join late and send no PLI. A receiver that has
///   asked once (a PLI or FIR) asks again when it needs to: from then on none is made. None is
///   made either while the estimates hold the rate below its maximum (the path is the limit):
///   there a keyframe is the one frame the path cannot carry in time — busy 720p at libvpx's
///   coarsest quantizer makes 50–92 KB keyframes, 0.4–0.75 s of a 1 Mbit/s path, and through
///   `bench/run-network.sh bottleneck1m` (a receiver that lost nothing at the start, so never
///   asked) one every 3 s was a 0.5–0.9 s freeze each and the queue's p99 went to 207 ms. The
///   period counts on from the last keyframe, so one is due as soon as the rate is back.
/// - Requests are served at once while the path is clean. While it is congested (the receiver
///   reports `congestedLossFraction` or more loss and the rate is held below its maximum) they
///   are served at most once per max(3 round trips, `congestedHoldMicroseconds`): a request made
///   sooner waits (it is not lost), and a keyframe made meanwhile settles it.
///
/// Sans-IO: times passed in (µs); no allocation.
public struct KeyframeSchedule: Sendable, Equatable {
    public static let congestedHoldMicroseconds: Int64 = 1_000_000
    public static let congestedLossFraction = 0.02

    /// The periodic interval (µs) for receivers that never ask; nil: none.
    public let periodicMicroseconds: Int64?
    /// Whether the receiver has asked for a keyframe (periodic ones then stop).
    public private(set) var receiverAsks = false
    /// Requests that had to wait for the congested hold.
    public private(set) var requestsHeld = 0
    /// The last keyframe made or asked of the encoder: the hold counts from it.
    private var lastKeyframe: Int64?
    private var pending = false
    private var heldCounted = false
    private var holdMicroseconds: Int64 = 0
    private var belowMaximum = false

    public init(periodicMicroseconds: Int64?) {
        self.periodicMicroseconds = periodicMicroseconds
    }

    /// What the path is like now: the receiver's reported loss (0...1), the round trip (µs), and
    /// whether the send rate is held below its maximum by the estimates.
    public mutating func path(lossFraction: Double?, roundTrip: Int64?, belowMaximum: Bool) {
        self.belowMaximum = belowMaximum
        let congested = belowMaximum && (lossFraction ?? 0) >= Self.congestedLossFraction
        holdMicroseconds = congested ? max(3 * (roundTrip ?? 0), Self.congestedHoldMicroseconds) : 0
    }

    /// The receiver lost the picture. `fromReceiver`: a PLI or FIR (not a NACK the history
    /// could not answer), which shows it asks.
    public mutating func requested(fromReceiver: Bool) {
        if fromReceiver { receiverAsks = true }
        pending = true
    }

    /// A keyframe went out at `now`, whatever its cause.
    public mutating func keyframeSent(at now: Int64) {
        lastKeyframe = now
        pending = false
        heldCounted = false
    }

    /// True when a requested keyframe should be made now (and counts it as served).
    public mutating func takeRequest(at now: Int64) -> Bool {
        guard pending else { return false }
        if holdMicroseconds > 0, let last = lastKeyframe, now - last < holdMicroseconds {
            if !heldCounted { requestsHeld += 1 }
            heldCounted = true
            return false
        }
        pending = false
        heldCounted = false
        lastKeyframe = now
        return true
    }

    /// Whether a frame encoded at `now` should be a periodic keyframe.
    public func periodicDue(at now: Int64) -> Bool {
        guard let interval = periodicMicroseconds, !receiverAsks, !belowMaximum, let last = lastKeyframe else {
            return false
        }
        return now - last >= interval
    }

    /// When a waiting request becomes due; nil: none waits.
    public var nextDeadline: Int64? {
        guard pending else { return nil }
        guard holdMicroseconds > 0, let last = lastKeyframe else { return Int64.min }
        return last + holdMicroseconds
    }
}
