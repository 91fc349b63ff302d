// The delay-based half of Google Congestion Control (draft-ietf-rmcat-gcc-02 §5, with the
// trendline filter libwebrtc uses in place of the draft's Kalman filter): from transport-wide
// feedback, whether a queue is building on the path, and the rate to send at.
//
// Per packet the receiver reports (in sequence order, matched to its send time):
// 1. Packets sent within 5 ms of a group's first form one group (a frame's burst); a packet that
//    arrived within 5 ms of the group's last and gained on it (a burst the network squeezed
//    together) joins it too. Each finished group gives, against the group before it, the
//    inter-arrival minus the inter-departure time of their last packets: the delay variation d.
// 2. Trendline: d is accumulated and smoothed (0.9); over the last 20 groups the slope of the
//    smoothed delay against arrival time is the trend, a queue growing (> 0) or draining (< 0).
//    The slope is taken from 8 groups on (not only once 20 are in): at a start far above the
//    path's rate every group of delay counts, and the scaling below keeps few groups weak.
// 3. Overuse detector: the trend, scaled by the number of deltas seen (at most 60) and by 4, is
//    compared with an adaptive threshold γ (start 12.5 ms, 6...600): above it for more than
//    10 ms and two groups, and not falling, is overuse; below −γ is underuse; else normal. γ
//    follows |trend| slowly up (0.0087) and faster down (0.039), so a path with a noisy
//    delay does not keep signalling overuse, and a competing TCP flow does not starve us.
// 4. `AIMDRateControl` turns the verdict into a rate with `AcknowledgedBitrate`. A cut also
//    drains the queue already built: the queueing delay is the one-way delay (arrival minus send
//    time, two clocks, so only its changes mean anything) above the least seen in the last
//    10 s, and a long queue deepens the cut (`AIMDRateControl`), since the gradient alone only
//    says the queue grows, not how much of it there is.
// 5. A standing queue is overuse too: a queue that filled slowly (a sender a little over the
//    path's rate, an encoder spending more than asked) and then stays full has a high, flat
//    delay — no gradient for the trendline. Every packet of the last
//    `standingQueueHoldMicroseconds` (of arrival time) queued more than
//    `AIMDRateControl.standingQueueMicroseconds`, and the queue did not fall by more than
//    `drainingMarginMicroseconds` meanwhile, while the detector says normal → overuse,
//    counted from the estimate itself (the acknowledged rate is the path's, and the sender is
//    already above it); the next such verdict only after another hold, so a cut has time to show.
//    A deep queue is the same verdict sooner: the newest packet queued more than
//    `deepQueueMicroseconds` at each feedback for `deepQueueHoldMicroseconds` (of arrival
//    time). A share starting at 2.5 Mbit/s into a 1 Mbit/s path with a 250 ms queue reads
//    45, 92, 69, 77, 83, 109 ms of queue at its first feedbacks; the trendline needs 8 groups
//    (~0.4 s of frames) and the 300 ms hold fired at 0.42–0.45 s, after the queue had overflowed
//    (8–54 packets lost, then a PLI and a 0.6–1.1 s freeze). Once per spell of deep queue: the
//    standing queue's hold judges what the cut leaves.
// 6. The same windows as the acknowledged rate, over the packets' send times, give the rate
//    they were sent at: well under the estimate, the sender is application-limited and a cut
//    does not follow the acknowledged rate down (`AIMDRateControl`).
//
// Invariants: fixed memory (a 20-entry window); no clock (times passed in: send times on our
// clock, arrival times on the receiver's, only differences used); nothing allocates.

/// Sans-IO delay-based bandwidth estimate for one transport.
public struct DelayBasedEstimator: Sendable {
    public static let groupSpanMicroseconds: Int64 = 5_000
    public static let windowSize = 20
    static let minimumWindow = 8
    static let smoothing = 0.9
    static let thresholdGain = 4.0

    public private(set) var rate: AIMDRateControl
    public private(set) var acknowledged = AcknowledgedBitrate()
    /// The rate the acknowledged packets were sent at (windows of send time).
    public private(set) var sent = AcknowledgedBitrate()
    /// What the detector said last.
    public private(set) var signal = AIMDRateControl.Signal.normal
    /// Overuse verdicts so far.
    public private(set) var overuses = 0
    /// The adaptive threshold (ms) and the last scaled trend compared with it.
    public private(set) var threshold = 12.5
    public private(set) var modifiedTrend = 0.0
    /// How long a standing queue must last to count as overuse.
    public static let standingQueueHoldMicroseconds: Int64 = 300_000
    /// A standing queue that fell by more than this since its hold began is draining.
    public static let drainingMarginMicroseconds: Int64 = 10_000
    /// Overuse verdicts that came from a standing queue.
    public private(set) var standingQueueOveruses = 0
    /// A queue this deep at every feedback for `deepQueueHoldMicroseconds` is overuse at once.
    public static let deepQueueMicroseconds: Int64 = 60_000
    public static let deepQueueHoldMicroseconds: Int64 = 100_000

    private struct Group {
        var firstSent: Int64
        var lastSent: Int64
        var lastArrival: Int64
    }
    private var current: Group?
    private var previous: Group?
    // Trendline state.
    private var deltas = 0
    private var accumulated = 0.0
    private var smoothed = 0.0
    private var firstArrival: Int64?
    private var windowX = [Double](repeating: 0, count: DelayBasedEstimator.windowSize)
    private var windowY = [Double](repeating: 0, count: DelayBasedEstimator.windowSize)
    private var windowCount = 0
    private var windowNext = 0
    private var previousTrend = 0.0
    // Detector state.
    private var overusingFor: Double = -1
    private var overuseCount = 0
    private var lastThresholdUpdate: Int64?
    // One-way delay floor: the least of this 5 s period and of the one before.
    private var floorNow: Int64?
    private var floorBefore: Int64?
    private var floorPeriodStart: Int64?
    private var lastOneWay: Int64?
    // Standing queue: since when (arrival time) every packet queued above the threshold.
    private var standingSince: Int64?
    private var standingLevel: Int64 = 0
    // Deep queue: since when (arrival time) every feedback's newest packet queued deeply.
    private var deepSince: Int64?
    private var deepCounted = false
    private var newestArrival: Int64?

    public init(startKbps: Int, minimumKbps: Int = 100, maximumKbps: Int) {
        rate = AIMDRateControl(startBitsPerSecond: Double(startKbps) * 1000,
                               minimumBitsPerSecond: Double(minimumKbps) * 1000,
                               maximumBitsPerSecond: Double(maximumKbps) * 1000)
    }

    /// The estimate in kbit/s.
    public var estimateKbps: Int { Int(rate.bitsPerSecond / 1000) }

    /// The configured ceiling changed (the host's bitrate): the estimate stays within it.
    public mutating func setMaximum(kbps: Int) {
        rate.maximumBitsPerSecond = max(Double(kbps) * 1000, rate.minimumBitsPerSecond)
    }

    /// One packet the receiver reports as received, in sequence order: sent at `sentAt` (our
    /// clock), arrived at `arrivedAt` (its clock), `bytes` on the wire.
    public mutating func packetReceived(sentAt: Int64, arrivedAt: Int64, bytes: Int) {
        acknowledged.received(bytes: bytes, at: arrivedAt)
        sent.received(bytes: bytes, at: sentAt)
        noteOneWay(arrivedAt - sentAt, at: sentAt)
        noteStandingQueue(at: arrivedAt)
        guard var group = current else {
            current = Group(firstSent: sentAt, lastSent: sentAt, lastArrival: arrivedAt)
            return
        }
        if sentAt < group.firstSent { return }  // reordered: its group is gone
        let inGroup = sentAt - group.firstSent <= Self.groupSpanMicroseconds
        let inBurst = arrivedAt - group.lastArrival <= Self.groupSpanMicroseconds
            && (arrivedAt - group.lastArrival) - (sentAt - group.lastSent) < 0
        if inGroup || inBurst {
            group.lastSent = max(group.lastSent, sentAt)
            group.lastArrival = max(group.lastArrival, arrivedAt)
            current = group
            return
        }
        if let before = previous {
            let sendDelta = group.lastSent - before.lastSent
            let arrivalDelta = group.lastArrival - before.lastArrival
            if arrivalDelta >= 0 { groupDelta(arrival: arrivalDelta, send: sendDelta, at: group.lastArrival) }
        }
        previous = group
        current = Group(firstSent: sentAt, lastSent: sentAt, lastArrival: arrivedAt)
    }

    /// A feedback has been read at `now` (our clock): the rate follows the detector's verdict.
    /// Returns the estimate in kbit/s.
    @discardableResult
    public mutating func feedbackProcessed(now: Int64, roundTrip: Int64?) -> Int {
        var verdict = signal
        if queueingMicroseconds > Self.deepQueueMicroseconds, let newest = newestArrival {
            if deepSince == nil, !deepCounted { deepSince = newest }
        } else {
            deepSince = nil
            deepCounted = false
        }
        let deep = deepSince.flatMap { since in newestArrival.map { $0 - since >= Self.deepQueueHoldMicroseconds } } ?? false
        if signal == .normal, let newest = newestArrival,
           deep || standingSince.map({ newest - $0 >= Self.standingQueueHoldMicroseconds }) == true {
            verdict = .overusing
            standingSince = newest
            if deep {
                // Once per deep spell: the cut needs time to show, and the standing queue's hold
                // (which starts again here) judges what is left.
                deepSince = nil
                deepCounted = true
            }
            standingLevel = queueingMicroseconds
            overuses += 1
            standingQueueOveruses += 1
        }
        rate.update(verdict, acknowledged: acknowledged.bitsPerSecond, roundTrip: roundTrip,
                    queueing: queueingMicroseconds, standing: verdict != signal, sent: sent.bitsPerSecond, now: now)
        return estimateKbps
    }

    private mutating func noteStandingQueue(at arrivedAt: Int64) {
        newestArrival = max(newestArrival ?? arrivedAt, arrivedAt)
        let queueing = queueingMicroseconds
        if queueing <= AIMDRateControl.standingQueueMicroseconds {
            standingSince = nil
        } else if standingSince == nil || queueing + Self.drainingMarginMicroseconds < standingLevel {
            // A queue that drains (after a cut, or as a burst leaves) is not standing: the hold
            // starts again from where it is now.
            standingSince = arrivedAt
            standingLevel = queueing
        }
    }

    /// The newest packet's one-way delay above the floor: the queue on the path (µs).
    public var queueingMicroseconds: Int64 {
        guard let last = lastOneWay else { return 0 }
        let floor = min(floorNow ?? last, floorBefore ?? last)
        return max(last - floor, 0)
    }

    private mutating func noteOneWay(_ oneWay: Int64, at sentAt: Int64) {
        lastOneWay = oneWay
        if let start = floorPeriodStart, sentAt - start >= 5_000_000 {
            floorBefore = floorNow
            floorNow = nil
            floorPeriodStart = sentAt
        }
        if floorPeriodStart == nil { floorPeriodStart = sentAt }
        floorNow = min(floorNow ?? oneWay, oneWay)
    }

    // MARK: trendline and detector

    private mutating func groupDelta(arrival: Int64, send: Int64, at arrivalTime: Int64) {
        let d = Double(arrival - send) / 1000  // ms
        // A jump of seconds is a clock or path change, not a queue: start the filter again.
        if abs(d) > 3_000 {
            deltas = 0
            accumulated = 0
            smoothed = 0
            windowCount = 0
            firstArrival = nil
            return
        }
        deltas = min(deltas + 1, 1000)
        accumulated += d
        smoothed = Self.smoothing * smoothed + (1 - Self.smoothing) * accumulated
        let origin = firstArrival ?? arrivalTime
        firstArrival = origin
        windowX[windowNext] = Double(arrivalTime - origin) / 1000
        windowY[windowNext] = smoothed
        windowNext = (windowNext + 1) % Self.windowSize
        windowCount = min(windowCount + 1, Self.windowSize)
        var trend = previousTrend
        if windowCount >= Self.minimumWindow, let slope = slope() { trend = slope }
        detect(trend: trend, sendDelta: Double(send) / 1000, now: arrivalTime)
    }

    /// Least-squares slope of the window (nil when all x are equal).
    private func slope() -> Double? {
        let n = Double(windowCount)
        var sx = 0.0, sy = 0.0
        for i in 0..<windowCount { sx += windowX[i]; sy += windowY[i] }
        let mx = sx / n, my = sy / n
        var num = 0.0, den = 0.0
        for i in 0..<windowCount {
            num += (windowX[i] - mx) * (windowY[i] - my)
            den += (windowX[i] - mx) * (windowX[i] - mx)
        }
        return den == 0 ? nil : num / den
    }

    private mutating func detect(trend: Double, sendDelta: Double, now: Int64) {
        guard deltas >= 2 else { return }
        let m = Double(min(deltas, 60)) * trend * Self.thresholdGain
        modifiedTrend = m
        if m > threshold {
            overusingFor = overusingFor < 0 ? sendDelta / 2 : overusingFor + sendDelta
            overuseCount += 1
            if overusingFor > 10, overuseCount > 1, trend >= previousTrend {
                overusingFor = 0
                overuseCount = 0
                if signal != .overusing { overuses += 1 }
                signal = .overusing
            }
        } else if m < -threshold {
            overusingFor = -1
            overuseCount = 0
            signal = .underusing
        } else {
            overusingFor = -1
            overuseCount = 0
            signal = .normal
        }
        previousTrend = trend
        updateThreshold(m, now: now)
    }

    private mutating func updateThreshold(_ m: Double, now: Int64) {
        let last = lastThresholdUpdate ?? now
        lastThresholdUpdate = now
        // A spike far above the threshold (a delay jump) does not drag it up.
        if abs(m) > threshold + 15 { return }
        let k = abs(m) < threshold ? 0.039 : 0.0087
        let dt = Double(min(max(now - last, 0), 100_000)) / 1000
        threshold = min(max(threshold + k * (abs(m) - threshold) * dt, 6), 600)
    }
}
