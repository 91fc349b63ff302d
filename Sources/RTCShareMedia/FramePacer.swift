import RTCShareCore

/// The pacer and filler between capture and encoder: it decides, for every source frame and every
/// wake-up, whether to encode the frame just handed in, to encode the kept frame again, or to let
/// the frame go — so the receiver sees a steady frame rate whatever the source does.
///
/// Sans-IO: times and events go in, actions come out; it reads no clock and holds no pixels. The
/// caller keeps exactly one frame, the latest the source delivered ("the kept frame"): every
/// `frameArrived` replaces it, whatever the decision. `.encode(source: .newFrame, …)` encodes that
/// frame now; `.encode(source: .repeatLast, …)` encodes the kept frame again;
/// `.dropSourceFrame` encodes nothing now. A frame dropped as too fast is therefore not lost: if
/// the source then goes quiet, the next repeat shows it. After every input the caller calls
/// `tick(at:)` once `nextWakeup` has come.
///
/// Rate control is a phase accumulator ("credit"), counted in frames and refilled by elapsed time
/// at the target rate:
/// - a source frame is encoded if at least half a frame of credit has built up, else dropped;
///   the credit carries the remainder over, so a 30 fps source at 20 fps keeps 2 of every 3
///   frames in a fixed pattern rather than in bursts;
/// - when one and a half frames of credit have built up with nothing sent (the source is late,
///   static or stopped) the kept frame is repeated. A repeat (for the rate, a keyframe request or
///   idle) only takes the credit beyond half a frame, so a source frame arriving just after it is
///   still taken, never dropped in its favour, and further repeats follow at exactly the target
///   interval.
///
/// A second accumulator counts the same credit on the capture clock: a source frame is also
/// taken when its capture time is far enough past the last one taken. Frames captured at the
/// target spacing but handed in together — the process or the source held up, as a CPU quota
/// holds a board's share up for tens of milliseconds — all go, where arrival-time credit alone
/// would drop all but two of them though none came faster than the target rate.
///
/// Invariants: both credits stay within [-0.5, 1.5] frames, so frames go out back to back only
/// as far as their capture times are spaced by the target interval (at most two otherwise), and
/// while ticks are on time no gap between outputs exceeds two target intervals (1.5 once the
/// source has stopped; idle mode aside); RTP timestamps strictly increase; at most one action
/// comes out per input.
public struct FramePacerStateMachine: Sendable {
    public struct Configuration: Equatable, Sendable {
        /// The output rate, 1...240.
        public var targetFramesPerSecond: Int
        /// The rate once the content has settled, below the target rate; nil keeps the target rate
        /// for as long as the session runs.
        public var idleFramesPerSecond: Int?
        /// How long after the last change the content keeps being sent at the target rate (the
        /// encoder refines the static picture meanwhile) before the idle rate applies.
        public var idleSettleTime: MediaDuration
        /// While idle, the longest time between forced keyframes, so a receiver whose keyframe
        /// request got lost still recovers.
        public var idleKeyframeInterval: MediaDuration
        /// Added to every RTP timestamp (RFC 3550 wants a random start).
        public var rtpTimestampOffset: UInt32

        public init(targetFramesPerSecond: Int = 20, idleFramesPerSecond: Int? = nil,
                    idleSettleTime: MediaDuration = .milliseconds(1500),
                    idleKeyframeInterval: MediaDuration = .seconds(3), rtpTimestampOffset: UInt32 = 0) {
            self.targetFramesPerSecond = targetFramesPerSecond
            self.idleFramesPerSecond = idleFramesPerSecond
            self.idleSettleTime = idleSettleTime
            self.idleKeyframeInterval = idleKeyframeInterval
            self.rtpTimestampOffset = rtpTimestampOffset
        }

        /// Whether the state machine accepts it; callers taking rates from users check this first.
        public var isValid: Bool {
            guard (1...240).contains(targetFramesPerSecond), idleSettleTime >= .zero,
                  idleKeyframeInterval > .zero else { return false }
            if let idle = idleFramesPerSecond, !(1..<targetFramesPerSecond).contains(idle) { return false }
            return true
        }
    }

    /// Which frame an encode takes.
    public enum Source: Equatable, Sendable {
        /// The frame handed in with this `frameArrived`.
        case newFrame
        /// The kept frame, again.
        case repeatLast
    }

    public enum EncodeReason: Equatable, Sendable {
        /// The first frame of the session, sent at once.
        case firstFrame
        /// A source frame that fits the target rate.
        case sourceFrame
        /// The source is slower than the target rate, static or stopped: the rate is held.
        case fill
        /// A receiver asked for a keyframe.
        case keyframeRequest
        /// The source turned; the picture changes shape, so it goes at once as a keyframe.
        case orientationChange
        /// New content while idle: sent at once, back to the target rate.
        case leaveIdle
        /// The idle-rate repeat of settled content.
        case idleRefresh
    }

    public enum DropReason: Equatable, Sendable {
        /// The source is faster than the target rate.
        case tooFast
        /// Idle, and the frame is unchanged.
        case unchanged
    }

    public enum Action: Equatable, Sendable {
        /// Encode a frame. `captureTime` is the kept frame's; `rtpTimestamp` is on the 90 kHz
        /// clock, from the capture time for new frames and from the tick time for repeats.
        case encode(source: Source, captureTime: MediaTime, rtpTimestamp: UInt32, forceKeyframe: Bool,
                    reason: EncodeReason)
        /// Encode nothing for this frame (it still becomes the kept frame).
        case dropSourceFrame(reason: DropReason)
    }

    public struct Counters: Equatable, Sendable {
        public internal(set) var newFrames = 0
        public internal(set) var repeats = 0
        public internal(set) var forcedKeyframes = 0
        public internal(set) var droppedTooFast = 0
        public internal(set) var droppedUnchanged = 0
        /// How many times the content settled and the idle rate took over.
        public internal(set) var idlePeriods = 0
    }

    enum State: Equatable, Sendable {
        /// Nothing to send and nothing to repeat.
        case awaitingFirstFrame
        /// Sending at the target rate (including the settle time after the last change).
        case fullRate(Pacing)
        /// Content settled: repeats at the idle rate, keyframes at the idle keyframe interval.
        case idle(Pacing)
    }

    /// Everything known once a frame has arrived; times are on the media clock.
    struct Pacing: Equatable, Sendable {
        /// Rate credit in millionths of a frame, as of `creditAt`.
        var credit: Int64
        var creditAt: MediaTime
        var lastOutputAt: MediaTime
        var lastKeyframeAt: MediaTime
        var lastChangeAt: MediaTime
        var keptCaptureTime: MediaTime
        var orientation: Int
        /// Unwrapped 90 kHz ticks of the last timestamp sent.
        var lastRTPTicks: Int64
        /// A keyframe request came too soon after the last keyframe; the next output carries it.
        var keyframePending: Bool
        /// Rate credit on the capture clock, in millionths of a frame, as of the capture time
        /// of the last source frame handed in (`captureCreditAt`).
        var captureCredit: Int64
        var captureCreditAt: MediaTime

        /// Adds the credit earned since `creditAt`, capped: a late tick never turns into a burst.
        mutating func accrue(to now: MediaTime, framesPerSecond: Int64) {
            guard now > creditAt else { return }
            // Bounded so the product cannot overflow, however long the caller slept.
            let elapsed = min((now - creditAt).microseconds, 10_000_000)
            credit = min(credit + elapsed * framesPerSecond, Credit.repeatAt)
            creditAt = now
        }

        /// The same on the capture clock, for a source frame captured at `captured`; a capture
        /// time that goes back (a restarted source) earns nothing and restarts the count there.
        mutating func accrueCapture(to captured: MediaTime, framesPerSecond: Int64) {
            let elapsed = min(max((captured - captureCreditAt).microseconds, 0), 10_000_000)
            captureCredit = min(captureCredit + elapsed * framesPerSecond, Credit.repeatAt)
            captureCreditAt = captured
        }

        /// Whether a source frame may go: enough credit on either clock.
        var takesSourceFrame: Bool {
            credit >= Credit.sourceFrameAt || captureCredit >= Credit.sourceFrameAt
        }
    }

    /// Credit thresholds, in millionths of a frame.
    enum Credit {
        static let frame: Int64 = 1_000_000
        static let sourceFrameAt: Int64 = frame / 2
        static let repeatAt: Int64 = frame * 3 / 2
        static let floor: Int64 = -frame / 2
    }

    /// The RTP video clock rate (RFC 7741 §4.1).
    public static let rtpClockRate: Int64 = 90_000

    public let configuration: Configuration
    public internal(set) var counters = Counters()
    var state: State = .awaitingFirstFrame
    /// The frame rate in force: the configured target, or lower while the bitrate is short of
    /// what the picture needs (`setFramesPerSecond`).
    public private(set) var framesPerSecond: Int
    private(set) var frameInterval: MediaDuration

    public init(configuration: Configuration = Configuration()) {
        precondition(configuration.isValid, "invalid frame pacer configuration")
        self.configuration = configuration
        self.framesPerSecond = configuration.targetFramesPerSecond
        self.frameInterval = .frameInterval(framesPerSecond: configuration.targetFramesPerSecond)
    }

    /// Whether the content has settled and the idle rate applies.
    public var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    /// When `tick(at:)` is next due; nil while there is nothing to repeat.
    public var nextWakeup: MediaTime? {
        switch state {
        case .awaitingFirstFrame:
            return nil
        case .fullRate(let pacing):
            return fullRateWakeup(pacing)
        case .idle(let pacing):
            return idleDue(pacing)
        }
    }

    // MARK: inputs

    /// A source frame arrived at `now`, captured at `captureTime` (same clock), with EXIF
    /// `orientation` (1...8; compared only), `contentChanged` if it differs from the previous one.
    public mutating func frameArrived(at now: MediaTime, captureTime: MediaTime, orientation: Int,
                                      contentChanged: Bool) -> Action {
        switch state {
        case .awaitingFirstFrame:
            var pacing = Pacing(credit: Credit.frame, creditAt: now, lastOutputAt: now, lastKeyframeAt: now,
                                lastChangeAt: now, keptCaptureTime: captureTime, orientation: orientation,
                                lastRTPTicks: .min, keyframePending: false, captureCredit: Credit.frame,
                                captureCreditAt: captureTime)
            let action = emit(&pacing, .newFrame, at: now, timestampAt: captureTime, reason: .firstFrame,
                              keyframe: true, immediate: true)
            state = .fullRate(pacing)
            return action

        case .fullRate(var pacing):
            pacing.accrue(to: now, framesPerSecond: fps)
            pacing.accrueCapture(to: captureTime, framesPerSecond: fps)
            pacing.keptCaptureTime = captureTime
            let action: Action
            if orientation != pacing.orientation {
                pacing.orientation = orientation
                pacing.lastChangeAt = now
                action = emit(&pacing, .newFrame, at: now, timestampAt: captureTime, reason: .orientationChange,
                              keyframe: true, immediate: true)
            } else {
                if contentChanged { pacing.lastChangeAt = now }
                if hasSettled(pacing, at: now) {
                    return enterIdleDroppingFrame(pacing)
                }
                if pacing.takesSourceFrame {
                    action = emit(&pacing, .newFrame, at: now, timestampAt: captureTime, reason: .sourceFrame,
                                  keyframe: false, immediate: false)
                } else {
                    counters.droppedTooFast += 1
                    action = .dropSourceFrame(reason: .tooFast)
                }
            }
            state = .fullRate(pacing)
            return action

        case .idle(var pacing):
            pacing.accrue(to: now, framesPerSecond: fps)
            pacing.accrueCapture(to: captureTime, framesPerSecond: fps)
            pacing.keptCaptureTime = captureTime
            return idleFrameArrived(&pacing, at: now, captureTime: captureTime, orientation: orientation,
                                    contentChanged: contentChanged)
        }
    }

    /// Time passed; due once `nextWakeup` has come (earlier calls do nothing).
    public mutating func tick(at now: MediaTime) -> Action? {
        switch state {
        case .awaitingFirstFrame:
            return nil
        case .fullRate(var pacing):
            pacing.accrue(to: now, framesPerSecond: fps)
            if hasSettled(pacing, at: now) {
                enterIdle(pacing)
                return idleTick(&pacing, at: now)
            }
            var action: Action? = nil
            if pacing.keyframePending, now >= keyframeRetryAt(pacing) {
                action = emit(&pacing, .repeatLast, at: now, timestampAt: now, reason: .keyframeRequest,
                              keyframe: true, immediate: false)
            } else if pacing.credit >= Credit.repeatAt {
                action = emit(&pacing, .repeatLast, at: now, timestampAt: now, reason: .fill, keyframe: false,
                              immediate: false)
            }
            state = .fullRate(pacing)
            return action
        case .idle(var pacing):
            pacing.accrue(to: now, framesPerSecond: fps)
            return idleTick(&pacing, at: now)
        }
    }

    /// A receiver asked for a keyframe (PLI/FIR). The kept frame goes again at once as a keyframe;
    /// within one frame interval of the last keyframe the request is carried by the next output
    /// instead, so a burst of requests for one loss costs one keyframe, not many. Before the first
    /// frame there is nothing to send, and the first frame is a keyframe anyway.
    public mutating func keyframeRequested(at now: MediaTime) -> Action? {
        switch state {
        case .awaitingFirstFrame:
            return nil
        case .fullRate(var pacing):
            let action = requestKeyframe(&pacing, at: now)
            state = .fullRate(pacing)
            return action
        case .idle(var pacing):
            let action = requestKeyframe(&pacing, at: now)
            state = .idle(pacing)
            return action
        }
    }

    // MARK: internals

    var fps: Int64 { Int64(framesPerSecond) }

    /// Runs at `n` frames per second from now on (1 ... the configured target): fewer frames
    /// when the bitrate is short, so each keeps its quality. The credit carries over.
    public mutating func setFramesPerSecond(_ n: Int) {
        let v = min(max(n, 1), configuration.targetFramesPerSecond)
        guard v != framesPerSecond else { return }
        framesPerSecond = v
        frameInterval = .frameInterval(framesPerSecond: v)
    }

    private mutating func requestKeyframe(_ pacing: inout Pacing, at now: MediaTime) -> Action? {
        pacing.accrue(to: now, framesPerSecond: fps)
        if now - pacing.lastKeyframeAt < frameInterval {
            pacing.keyframePending = true
            return nil
        }
        return emit(&pacing, .repeatLast, at: now, timestampAt: now, reason: .keyframeRequest, keyframe: true,
                    immediate: false)
    }

    /// When a deferred keyframe request goes out by itself if no source frame carries it first.
    func keyframeRetryAt(_ pacing: Pacing) -> MediaTime {
        max(pacing.lastKeyframeAt, pacing.lastOutputAt) + frameInterval
    }

    private func fullRateWakeup(_ pacing: Pacing) -> MediaTime {
        let missing = Credit.repeatAt - pacing.credit
        var wake = pacing.creditAt + .microseconds(missing <= 0 ? 0 : (missing + fps - 1) / fps)
        if pacing.keyframePending { wake = min(wake, keyframeRetryAt(pacing)) }
        if let settled = settlesAt(pacing) { wake = min(wake, settled) }
        return wake
    }

    /// Books one output: credit, keyframe and timestamp bookkeeping, counters. An `immediate` new
    /// frame goes regardless of credit and leaves none beyond its own slot, so the next source
    /// frame waits a full interval rather than following at once.
    mutating func emit(_ pacing: inout Pacing, _ source: Source, at now: MediaTime, timestampAt: MediaTime,
                       reason: EncodeReason, keyframe: Bool, immediate: Bool) -> Action {
        switch source {
        case .newFrame:
            if immediate {
                pacing.credit = min(pacing.credit, Credit.frame)
                pacing.captureCredit = min(pacing.captureCredit, Credit.frame)
            }
            pacing.credit = max(pacing.credit - Credit.frame, Credit.floor)
            pacing.captureCredit = max(pacing.captureCredit - Credit.frame, Credit.floor)
            counters.newFrames += 1
        case .repeatLast:
            pacing.credit = min(pacing.credit, Credit.sourceFrameAt)
            counters.repeats += 1
        }
        let forceKeyframe = keyframe || pacing.keyframePending
        if forceKeyframe {
            pacing.lastKeyframeAt = now
            pacing.keyframePending = false
            counters.forcedKeyframes += 1
        }
        pacing.lastOutputAt = now
        // A capture time from the future would drag later repeats behind it; one from before the
        // last output (a frame delivered late) is moved just past it to keep timestamps rising.
        let ticks = max(min(timestampAt, now).rtpTicks(clockRate: Self.rtpClockRate), pacing.lastRTPTicks + 1)
        pacing.lastRTPTicks = ticks
        return .encode(source: source, captureTime: pacing.keptCaptureTime,
                       rtpTimestamp: configuration.rtpTimestampOffset &+ UInt32(truncatingIfNeeded: ticks),
                       forceKeyframe: forceKeyframe, reason: reason)
    }
}
