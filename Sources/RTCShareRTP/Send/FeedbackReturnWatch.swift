import RTCShareCore

// Whether feedback that just arrived ends an outage. A live receiver talks back all the time:
// transport-wide feedback every 50-100 ms and REMB several times a second while media flows,
// reports every 0.5-1.5 s (RFC 3550's randomised interval) even when it does not, consent
// answers every 4-6 s on WebRTC. Feedback of any kind after a silence longer than the peer's
// regular spacing means the path was down: what was sent meanwhile is lost, and the receiver's
// picture stands still until a keyframe reaches it.
//
// The limit follows the peer's own cadence so that a regular report is never taken for a
// return: twice the longest regular gap of the last 16 to 32 (two windows of 16 gaps), never
// under `shortestSilence` (1 s: below it NACKs repair a loss faster than a keyframe) nor over
// `longestLimit` (3 s: an aiortc sending reports only, at 0.5-1.5 s, reaches it; a path down
// longer than that is an outage whoever the peer is). Until a window of its own is seen the
// peer is taken to report at RFC 3550's slowest (1.5 s), so the limit starts at 3 s.
//
// Invariants: sans-IO, fixed size; a silence is reported once, by the feedback that ends it.

/// Tells feedback that ends a silence from feedback on time.
public struct FeedbackReturnWatch: Sendable, Equatable {
    public static let shortestSilence = MediaDuration.seconds(1)
    public static let longestLimit = MediaDuration.seconds(3)
    private static let windowGaps = 16

    private var lastHeard: MediaTime?
    private var windowLongest: Int64 = 0
    private var previousLongest: Int64 = 1_500_000
    private var gapsInWindow = 0
    /// Silences ended so far.
    public private(set) var returns = 0

    public init() {}

    /// How long a silence must last to count as an outage, from the gaps seen so far.
    public var limit: MediaDuration {
        let regular = 2 * max(windowLongest, previousLongest)
        return .microseconds(min(max(regular, Self.shortestSilence.microseconds), Self.longestLimit.microseconds))
    }

    /// Feedback arrived at `now` (authenticated RTCP, a consent answer). Returns the silence it
    /// ended when that was long enough to be an outage.
    public mutating func heard(at now: MediaTime) -> MediaDuration? {
        guard let last = lastHeard else {
            lastHeard = now
            return nil
        }
        guard now > last else { return nil }
        lastHeard = now
        let gap = now - last
        if gap >= limit {
            returns += 1
            return gap
        }
        windowLongest = max(windowLongest, gap.microseconds)
        gapsInWindow += 1
        if gapsInWindow == Self.windowGaps {
            previousLongest = windowLongest
            windowLongest = 0
            gapsInWindow = 0
        }
        return nil
    }
}
