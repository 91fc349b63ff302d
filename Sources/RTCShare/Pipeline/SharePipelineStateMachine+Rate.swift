import RTCShareCore
import RTCShareMedia
import RTCShareRTP

// The rate side of the pipeline's policy: the one target the network output's transport makes
// of every estimate (`Transport`, `SendBitrateController`) goes, less what the transport adds
// (`EncoderBitrate`), to the encoder — reconfigured only when the ask moved by 2 % or more, since
// the delay-based estimate moves a little with every feedback. Once a second the frame rate
// gives way first when the target is short and the encoder spends it (`ScreenFrameRate`), and
// the memory governor looks at the resident size.

/// The rate the share runs at, as the pipeline knows it: the maximum it set, and the target its
/// network output's transport reports under it (the maximum itself without one).
struct ShareRate: Sendable, Equatable {
    private(set) var maximumKbps: Int
    private(set) var targetKbps: Int
    /// The path holds the target down (`SendBitrateController.pathHoldsTarget`).
    private(set) var pathHoldsTarget = false
    /// A transport reports the target: from then on it is the transport's to say.
    private var fromTransport = false

    init(maximumKbps: Int) {
        self.maximumKbps = max(maximumKbps, 1)
        targetKbps = self.maximumKbps
    }

    mutating func setMaximum(kbps: Int) {
        maximumKbps = max(kbps, 1)
        // Until a transport reports the target it makes under the new maximum.
        targetKbps = fromTransport ? min(targetKbps, maximumKbps) : maximumKbps
    }

    mutating func reported(by requests: TransportRequests) {
        guard let target = requests.targetKbps else { return }
        fromTransport = true
        targetKbps = target
        maximumKbps = requests.maximumKbps ?? maximumKbps
        pathHoldsTarget = requests.pathHoldsTarget
    }

    var belowMaximum: Bool { targetKbps < maximumKbps }
}

/// What the once-a-second rules remember between seconds.
struct SecondBookkeeping: Sendable {
    var nextAt: MediaTime
    /// What the encoder made in the last second and the one before (kbit/s).
    var encodedKbps = 0
    var encodedBeforeKbps = 0
    /// Seconds in a row the encoder dropped a fifth or more of its frames.
    var encoderDroppingSeconds = 0
    var encoderCounts = (encoded: 0, dropped: 0)
    var encodedBytes: UInt64 = 0
    var sentBytes: UInt64?
    var targetKbps: Int
    /// The target at the encoder's last change: a change the target did not cause (the
    /// overhead measured) is not counted as one.
    var targetAtLastChange: Int
    /// Seconds the frame rate in force has held (a lowered one rises only after a few).
    var frameRateHeldSeconds = 0

    init(firstAt: MediaTime, targetKbps: Int) {
        nextAt = firstAt
        self.targetKbps = targetKbps
        targetAtLastChange = targetKbps
    }

}

/// The figures of a second that only the edge can read.
public struct PipelineSecond: Sendable {
    /// Bytes the outputs put on the wire so far (nil without a network output).
    public var sentBytes: UInt64?
    public var transport: TransportStats?
    public var residentBytes: Int
    public var peakResidentBytes: Int

    public init(sentBytes: UInt64?, transport: TransportStats?, residentBytes: Int, peakResidentBytes: Int) {
        self.sentBytes = sentBytes
        self.transport = transport
        self.residentBytes = residentBytes
        self.peakResidentBytes = peakResidentBytes
    }
}

extension SharePipelineStateMachine {
    /// What an output's transport asked for after reading its feedback; `roundTripMicroseconds`
    /// is its current round-trip estimate, if any.
    public mutating func transport(_ requests: TransportRequests, output: String, roundTripMicroseconds: Int64?,
                                   at now: MediaTime) {
        if requests.mediaStarted { mediaStarted(requests, at: now) }
        switch requests.feedback {
        case .silent(let ms)?: push(.event(.receiverSilent(output: output, milliseconds: ms)))
        case .resumed(let ms)?: push(.event(.receiverHeardAgain(output: output, afterMilliseconds: ms)))
        case nil: break
        }
        if requests.peerLeft { push(.event(.receiverLeft(output: output))) }
        if requests.keyframe {
            if isPaused { hostKeyframePending = true } else { keyframes.requested(fromReceiver: requests.keyframeAsked) }
        }
        rate.reported(by: requests)
        if let lost = requests.videoFractionLost { reportedLoss = Double(lost) / 256 }
        applyRate(at: now)
        keyframes.path(lossFraction: reportedLoss, roundTrip: roundTripMicroseconds, belowMaximum: rate.belowMaximum)
    }

    /// The audio loss the receiver reported is the audio path's business; the share counts what
    /// the encoder prepares for.
    public mutating func audioExpectedLoss(percent: Int) {
        stats.audioExpectedLossPercent = percent
    }

    /// An output's connection was lost and is being made again, or came back (its transport's
    /// `mediaStarted` then asks for the keyframe).
    public mutating func connection(_ change: ConnectionChange, output: String) {
        switch change {
        case .reconnecting(let attempt, let reason, let ms):
            stats.reconnecting = true
            // First: nothing the event's handling touches stands on the encoder's buffers.
            if configuration.releasesEncoderWhileReconnecting, !encoderReleased {
                encoderReleased = true
                push(.releaseEncoder)
            }
            push(.event(.reconnecting(output: output, attempt: attempt, reason: reason, retryInMilliseconds: ms)))
        case .reconnected(let ms):
            stats.reconnects += 1
            stats.reconnecting = false
            push(.event(.reconnected(output: output, afterMilliseconds: ms)))
        }
    }

    private mutating func mediaStarted(_ requests: TransportRequests, at now: MediaTime) {
        keyframeNow = true
        pathTriedAt = now + Self.untriedPath
        if requests.startedBelowMaximum, let target = requests.targetKbps {
            push(.event(.notice("rate: no transport-wide feedback on this path: starting at "
                + "\(target) kbit/s, × \(SendBitrateController.startGrowth) a clean receiver report")))
        }
    }

    /// Hands the target to the encoder where it moved.
    mutating func applyRate(at now: MediaTime) {
        let kbps = rate.targetKbps
        stats.targetBitrateKbps = kbps
        // A keyframe's burst is capped harder while the path holds the rate down, and while the
        // path is untried.
        let constrained = kbps < rate.maximumKbps || now < pathTriedAt
        if constrained != keyframeCapConstrained {
            keyframeCapConstrained = constrained
            push(.setKeyframeCap(constrained: constrained))
        }
        let ask = encoderBitrate.askKbps(target: kbps)
        let current = stats.encoderBitrateKbps
        guard ask != current, abs(ask - current) * 50 >= current || kbps == rate.maximumKbps else { return }
        push(.setEncoderBitrate(kbps: ask))
        stats.encoderBitrateKbps = ask
        if kbps != seconds.targetAtLastChange { stats.bitrateChanges += 1 }
        seconds.targetAtLastChange = kbps
    }

    /// Whether a second has gone by since the last `second` (the driver then reads its figures).
    public func secondDue(at now: MediaTime) -> Bool { now >= seconds.nextAt }

    /// Once a second: the encoder's output and the transport's overhead, the frame rate, the
    /// memory governor, and the progress event.
    public mutating func second(at now: MediaTime, _ figures: PipelineSecond) {
        seconds.nextAt = seconds.nextAt + .seconds(1)
        // A second made at a target 15 % higher or more says nothing of this one.
        let targetFell = rate.targetKbps * 100 < seconds.targetKbps * 85
        seconds.targetKbps = rate.targetKbps
        seconds.encodedBeforeKbps = targetFell ? 0 : seconds.encodedKbps
        seconds.encodedKbps = Int((stats.encodedBytes - seconds.encodedBytes) * 8 / 1000)
        seconds.encodedBytes = stats.encodedBytes
        let encoded = stats.encodedFrames - seconds.encoderCounts.encoded
        let dropped = stats.droppedByEncoder - seconds.encoderCounts.dropped
        seconds.encoderCounts = (stats.encodedFrames, stats.droppedByEncoder)
        let dropping = dropped * 5 >= encoded + dropped && dropped > 0
        seconds.encoderDroppingSeconds = dropping ? (targetFell ? 1 : seconds.encoderDroppingSeconds + 1) : 0
        var sentKbps: Int? = nil
        // A new transport (a reconnect) counts from zero again: that second says nothing.
        if let sent = figures.sentBytes, let before = seconds.sentBytes, sent >= before {
            sentKbps = Int((sent - before) * 8 / 1000)
        }
        seconds.sentBytes = figures.sentBytes
        encoderBitrate.second(encodedKbps: seconds.encodedKbps, sentKbps: sentKbps)
        applyRate(at: now)
        updateFrameRate()
        if let step = governor?.sample(residentBytes: figures.residentBytes, at: now) {
            switch step {
            case .frameRate: updateFrameRate()
            case .outputSize(let size):
                outputSize = size
                push(.resize(size))
            case .exhausted: break
            }
            push(.event(.memoryPressure(residentBytes: figures.residentBytes, limitBytes: governor!.limitBytes,
                                        step: step)))
        }
        stats.elapsed = now - startedAt
        stats.sourceRestarts = watchdog.counters.restarts
        push(.event(.progress(ShareProgress(stats: stats, transport: figures.transport,
                                            residentBytes: figures.residentBytes,
                                            peakResidentBytes: figures.peakResidentBytes))))
    }

    private mutating func updateFrameRate() {
        let before = pacer.framesPerSecond
        pacer.setFramesPerSecond(min(ScreenFrameRate.next(
            current: pacer.framesPerSecond, encodedKbps: seconds.encodedKbps,
            encodedBeforeKbps: seconds.encodedBeforeKbps, targetKbps: rate.targetKbps,
            configuredKbps: rate.maximumKbps, width: outputSize.width, height: outputSize.height,
            configured: configuration.framesPerSecond, heldSeconds: seconds.frameRateHeldSeconds,
            encoderDropping: seconds.encoderDroppingSeconds >= 2),
            governor?.frameRateCap ?? Int.max))
        seconds.frameRateHeldSeconds = pacer.framesPerSecond == before ? seconds.frameRateHeldSeconds + 1 : 0
        stats.targetFramesPerSecond = pacer.framesPerSecond
    }

    /// The source-side counters the driver adds at the end (what only it sees).
    public mutating func finalCounts(elapsed: MediaDuration) {
        stats.sourceRestarts = watchdog.counters.restarts
        stats.elapsed = elapsed
    }
}
