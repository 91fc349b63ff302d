import RTCShareCore

// Whether the path to the receiver is down, and whether feedback that just arrived ends such an
// outage. A live receiver talks back all the time: transport-wide feedback every 50-100 ms and
// REMB several times a second while media flows, reports every 0.5-1.5 s (RFC 3550's randomised
// second; 2.5-7.5 s from receivers that keep its 5 s minimum), consent answers every 4-6 s on
// WebRTC. No feedback for longer than the peer's regular spacing means the path is down: what
// is sent into it is lost, and every packet lost is a hole the receiver must fill or skip
// after the return. Feedback of any kind after such a silence means the path is back.
//
// The limit follows the peer's own cadence, so that a regular report is not taken for a
// return: twice the longest gap of the last 16 to 32 (two windows of 16 gaps), never under
// `shortestSilence` (1 s: below it NACKs repair a loss faster than a keyframe) nor over
// `longestLimit` (15 s: twice the slowest regular report). Until a window of its own is seen the
// peer is taken to report at RFC 3550's randomised second (at most 1.5 s), so the limit starts
// at 3 s. A silence's own gap counts too: a peer whose reports are slower than the limit is
// taken for an outage once, and its cadence then raises the limit; after a real outage the
// limit stays long for 16 to 32 gaps (seconds while media flows).
//
// Invariants: sans-IO, fixed size; a silence is reported once, by the feedback that ends it.

/// Tells a silent path, and feedback that ends the silence, from feedback on time.
public struct FeedbackReturnWatch: Sendable, Equatable {
    public static let shortestSilence = MediaDuration.seconds(1)
    public static let longestLimit = MediaDuration.seconds(15)
    private static let windowGaps = 16

    /// The last feedback; nil until the first.
    public private(set) var lastHeard: MediaTime?
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

    /// Whether the peer, heard from before, has been silent past the limit at `now`.
    public func isSilent(at now: MediaTime) -> Bool {
        guard let last = lastHeard else { return false }
        return now - last >= limit
    }

    /// When the present silence becomes an outage; nil before the first feedback.
    public var silenceDeadline: MediaTime? { lastHeard.map { $0 + limit } }

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
        let ended = gap >= limit
        if ended { returns += 1 }
        windowLongest = max(windowLongest, gap.microseconds)
        gapsInWindow += 1
        if gapsInWindow == Self.windowGaps {
            previousLongest = windowLongest
            windowLongest = 0
            gapsInWindow = 0
        }
        return ended ? gap : nil
    }
}
