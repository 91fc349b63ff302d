import RTCShareCore

/// Watches a frame source and asks for it to be restarted when it stops delivering.
///
/// Sans-IO: frame arrivals, restart outcomes and times go in; "restart the source", reports and
/// the next wake-up come out. Driving it: after every input, call `tick(at:)` while `nextWakeup`
/// has come — one tick may report a stall and the next one, at the same instant, restart.
///
/// Rules, and the invariants they give:
/// - a stall is no frame for `stallThreshold` (since the last frame, the start, or the end of the
///   last restart); a stall is counted once however many restarts it takes;
/// - restarts never overlap: while one is in flight (`restartSource` given, `restartFinished`
///   not yet received) nothing else is asked for;
/// - between the end of one restart and the start of the next lies at least the restart gap:
///   `minimumRestartGap` after a first attempt, multiplied by `backoffFactor` for each further
///   attempt that did not bring the source back, never more than `maximumRestartGap`;
/// - frames end the stall at once; the back-off is forgotten only after the source has delivered
///   for `backoffResetAfter` without a stall, so a flapping source stays backed off.
public struct StallWatchdogStateMachine: Sendable {
    public struct Configuration: Equatable, Sendable {
        public var stallThreshold: MediaDuration
        public var minimumRestartGap: MediaDuration
        public var backoffFactor: Int
        public var maximumRestartGap: MediaDuration
        public var backoffResetAfter: MediaDuration

        public init(stallThreshold: MediaDuration = .seconds(1), minimumRestartGap: MediaDuration = .seconds(2),
                    backoffFactor: Int = 2, maximumRestartGap: MediaDuration = .seconds(30),
                    backoffResetAfter: MediaDuration = .seconds(10)) {
            self.stallThreshold = stallThreshold
            self.minimumRestartGap = minimumRestartGap
            self.backoffFactor = backoffFactor
            self.maximumRestartGap = maximumRestartGap
            self.backoffResetAfter = backoffResetAfter
        }

        /// Whether the state machine accepts it; callers taking values from users check this first.
        public var isValid: Bool {
            stallThreshold > .zero && minimumRestartGap > .zero && backoffFactor >= 1
                && maximumRestartGap >= minimumRestartGap && backoffResetAfter >= .zero
        }
    }

    public enum Event: Equatable, Sendable {
        /// No frame since `lastFrameAt` (or since the start, if none ever came).
        case stalled(lastFrameAt: MediaTime?)
        /// Frames flow again after a stall of `duration`.
        case recovered(after: MediaDuration)
        /// The source delivered steadily long enough; the next stall restarts at the first gap.
        case backoffReset
    }

    public enum Action: Equatable, Sendable {
        /// Stop and start the source; report the outcome with `restartFinished(at:succeeded:)`.
        /// `attempt` counts from 1 within a run of restarts that did not bring the source back.
        case restartSource(attempt: Int)
        /// Something worth a log line.
        case report(Event)
    }

    public struct Counters: Equatable, Sendable {
        /// Stall episodes: each ends when frames flow again.
        public internal(set) var stalls = 0
        public internal(set) var restarts = 0
        public internal(set) var failedRestarts = 0
    }

    enum State: Equatable, Sendable {
        /// Frames arrive (or are still expected after the start or a restart).
        case flowing(quietSince: MediaTime)
        /// A stall was reported; waiting for the restart gap, or for a restart in flight.
        case stalled(since: MediaTime)
    }

    public let configuration: Configuration
    public private(set) var counters = Counters()
    var state: State
    /// The attempt number of the restart in flight.
    private(set) var restartInFlight: Int?
    /// Restarts since the source last delivered steadily; sets the back-off.
    private(set) var attempts = 0
    /// When the last restart ended and whether the source came up; the next one is measured
    /// from there.
    private var lastRestartEnd: (at: MediaTime, succeeded: Bool)?
    /// Start of the current run of frames without a stall.
    private var steadySince: MediaTime
    private var lastFrameAt: MediaTime?

    /// Watches a source started at `startedAt`: its first frame is due within the threshold too.
    public init(configuration: Configuration = Configuration(), startedAt: MediaTime) {
        precondition(configuration.isValid, "invalid stall watchdog configuration")
        self.configuration = configuration
        self.state = .flowing(quietSince: startedAt)
        self.steadySince = startedAt
    }

    public var isStalled: Bool {
        if case .stalled = state { return true }
        return false
    }

    public var isRestarting: Bool { restartInFlight != nil }

    /// When `tick(at:)` is next due; nil while a restart is in flight (its end is the next input).
    public var nextWakeup: MediaTime? {
        guard restartInFlight == nil else { return nil }
        switch state {
        case .flowing(let quietSince):
            return quietSince + configuration.stallThreshold
        case .stalled(let since):
            return restartDue(stalledSince: since)
        }
    }

    /// The gap owed after `attempts` restarts: the minimum, times the factor per further attempt.
    public var currentRestartGap: MediaDuration {
        var gap = configuration.minimumRestartGap
        var remaining = attempts - 1
        while remaining > 0, gap < configuration.maximumRestartGap {
            gap = gap * Int64(configuration.backoffFactor)
            remaining -= 1
        }
        return min(gap, configuration.maximumRestartGap)
    }

    // MARK: inputs

    public mutating func frameArrived(at now: MediaTime) -> Action? {
        defer { lastFrameAt = now }
        switch state {
        case .stalled(let since):
            state = .flowing(quietSince: now)
            steadySince = now
            return .report(.recovered(after: now - since))
        case .flowing(let quietSince):
            state = .flowing(quietSince: now)
            // A gap the ticks did not catch (a late run loop) still breaks the steady run.
            if now - quietSince >= configuration.stallThreshold { steadySince = now }
            if attempts > 0, now - steadySince >= configuration.backoffResetAfter {
                attempts = 0
                return .report(.backoffReset)
            }
            return nil
        }
    }

    /// The restart asked for has ended; `succeeded` says whether the source is running again
    /// (whether it delivers is for the frames to show). Ignored if no restart is in flight.
    public mutating func restartFinished(at now: MediaTime, succeeded: Bool) -> Action? {
        guard restartInFlight != nil else { return nil }
        restartInFlight = nil
        if !succeeded { counters.failedRestarts += 1 }
        lastRestartEnd = (now, succeeded)
        if succeeded, case .flowing = state { state = .flowing(quietSince: now) }
        return nil
    }

    /// Time passed; due once `nextWakeup` has come (earlier calls do nothing).
    public mutating func tick(at now: MediaTime) -> Action? {
        guard restartInFlight == nil else { return nil }
        switch state {
        case .flowing(let quietSince):
            guard now >= quietSince + configuration.stallThreshold else { return nil }
            state = .stalled(since: quietSince)
            counters.stalls += 1
            return .report(.stalled(lastFrameAt: lastFrameAt))
        case .stalled(let since):
            guard now >= restartDue(stalledSince: since) else { return nil }
            attempts += 1
            counters.restarts += 1
            restartInFlight = attempts
            return .restartSource(attempt: attempts)
        }
    }

    private func restartDue(stalledSince since: MediaTime) -> MediaTime {
        let detected = since + configuration.stallThreshold
        guard let end = lastRestartEnd else { return detected }
        // A source that came up gets at least the full threshold to deliver its first frame.
        let wait = end.succeeded ? max(currentRestartGap, configuration.stallThreshold) : currentRestartGap
        return max(detected, end.at + wait)
    }
}
