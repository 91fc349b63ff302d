import RTCShareCore

// Whether the receiver is still talking back. A receiver sends RTCP (reports, NACK, PLI) about
// once a second; when nothing authenticated has come for `silenceLimit` since media started to
// flow, the share is probably going nowhere: a wrong address or port, a receiver that is not
// running, a wrong SRTP key, a firewall. The watch says so once, and says again when RTCP
// comes back, so the user hears about it instead of finding "0 packets" at the other end.
//
// Invariants:
// - Sans-IO: times are passed in; nothing here reads a clock.
// - `check` reports a silence once per silence; `heard` reports its end once, with how long it
//   lasted. Before `mediaStarted` the watch is idle (a share still connecting is not silent).

/// A change in whether RTCP arrives from the receiver.
public enum FeedbackChange: Sendable, Equatable {
    /// Nothing authenticated came from the receiver for this long since media or the last RTCP.
    case silent(forMilliseconds: Int64)
    /// RTCP came again after a silence of this long.
    case resumed(afterMilliseconds: Int64)
}

/// Watches the time since the receiver's last RTCP.
public struct FeedbackWatch: Sendable, Equatable {
    /// Five report intervals: one lost or late report is not a silence.
    public static let defaultSilenceLimit = MediaDuration.seconds(5)

    public let silenceLimit: MediaDuration
    /// The last RTCP from the receiver, or when media started if none came yet.
    private var lastHeard: MediaTime?
    private var silentSince: MediaTime?
    private var stopped = false
    /// Silences reported so far.
    public private(set) var silences = 0

    public init(silenceLimit: MediaDuration = FeedbackWatch.defaultSilenceLimit) {
        self.silenceLimit = silenceLimit
    }

    /// Media started to flow: silence is counted from now. Later calls change nothing.
    public mutating func mediaStarted(at now: MediaTime) {
        if lastHeard == nil, !stopped { lastHeard = now }
    }

    /// Authenticated RTCP arrived. Returns the end of a silence, if one was reported.
    public mutating func heard(at now: MediaTime) -> FeedbackChange? {
        defer { if !stopped { lastHeard = max(lastHeard ?? now, now) } }
        guard let since = silentSince else { return nil }
        silentSince = nil
        let last = lastHeard ?? since
        return .resumed(afterMilliseconds: max(0, (now - last).microseconds / 1_000))
    }

    /// Returns a silence that has just reached the limit (once per silence).
    public mutating func check(at now: MediaTime) -> FeedbackChange? {
        guard silentSince == nil, let last = lastHeard, now >= last + silenceLimit else { return nil }
        silentSince = now
        silences += 1
        return .silent(forMilliseconds: (now - last).microseconds / 1_000)
    }

    /// The share is over: nothing more to watch, and `mediaStarted` no longer restarts it.
    public mutating func stop() {
        stopped = true
        lastHeard = nil
        silentSince = nil
    }

    /// When `check` may next report a silence; nil: idle, or a silence is already reported.
    public var deadline: MediaTime? {
        guard silentSince == nil, let last = lastHeard else { return nil }
        return last + silenceLimit
    }
}
