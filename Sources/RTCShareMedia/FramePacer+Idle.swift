import RTCShareCore

/// Idle mode: once the content has not changed for the settle time, the kept frame is repeated
/// at the idle rate only, and a keyframe goes out at least every idle keyframe interval so a
/// receiver that lost one recovers without its request getting through. The first idle output is
/// such a keyframe unless one went out recently: it carries the settled, fully refined picture.
/// New content or a turn leaves idle at once.
extension FramePacerStateMachine {
    /// When the content counts as settled; nil if idle mode is off.
    func settlesAt(_ pacing: Pacing) -> MediaTime? {
        guard configuration.idleFramesPerSecond != nil else { return nil }
        return pacing.lastChangeAt + configuration.idleSettleTime
    }

    func hasSettled(_ pacing: Pacing, at now: MediaTime) -> Bool {
        guard let settled = settlesAt(pacing) else { return false }
        return now >= settled
    }

    var idleInterval: MediaDuration {
        .frameInterval(framesPerSecond: min(configuration.idleFramesPerSecond ?? framesPerSecond, framesPerSecond))
    }

    /// When the next idle output is due: the idle interval after the last output, or sooner if the
    /// keyframe interval runs out first — but never sooner than one target interval.
    func idleDue(_ pacing: Pacing) -> MediaTime {
        if pacing.keyframePending { return keyframeRetryAt(pacing) }
        let refresh = min(pacing.lastOutputAt + idleInterval,
                          pacing.lastKeyframeAt + configuration.idleKeyframeInterval)
        return max(refresh, pacing.lastOutputAt + frameInterval)
    }

    mutating func enterIdle(_ pacing: Pacing) {
        counters.idlePeriods += 1
        state = .idle(pacing)
    }

    /// Settled while an unchanged frame arrives: idle from now, and that frame is not sent.
    mutating func enterIdleDroppingFrame(_ pacing: Pacing) -> Action {
        enterIdle(pacing)
        counters.droppedUnchanged += 1
        return .dropSourceFrame(reason: .unchanged)
    }

    mutating func idleTick(_ pacing: inout Pacing, at now: MediaTime) -> Action? {
        guard now >= idleDue(pacing) else {
            state = .idle(pacing)
            return nil
        }
        let pending = pacing.keyframePending
        // Decided now rather than at the deadline so keyframes fall on the idle cadence: this
        // output is a keyframe if waiting for the next one would overrun the interval.
        let overrun = now + idleInterval > pacing.lastKeyframeAt + configuration.idleKeyframeInterval
        let action = emit(&pacing, .repeatLast, at: now, timestampAt: now,
                          reason: pending ? .keyframeRequest : .idleRefresh, keyframe: pending || overrun,
                          immediate: false)
        state = .idle(pacing)
        return action
    }

    mutating func idleFrameArrived(_ pacing: inout Pacing, at now: MediaTime, captureTime: MediaTime,
                                   orientation: Int, contentChanged: Bool) -> Action {
        let action: Action
        if orientation != pacing.orientation {
            pacing.orientation = orientation
            pacing.lastChangeAt = now
            action = emit(&pacing, .newFrame, at: now, timestampAt: captureTime, reason: .orientationChange,
                          keyframe: true, immediate: true)
        } else if contentChanged {
            pacing.lastChangeAt = now
            action = emit(&pacing, .newFrame, at: now, timestampAt: captureTime, reason: .leaveIdle,
                          keyframe: false, immediate: true)
        } else {
            counters.droppedUnchanged += 1
            state = .idle(pacing)
            return .dropSourceFrame(reason: .unchanged)
        }
        state = .fullRate(pacing)
        return action
    }
}
