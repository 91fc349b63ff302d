// The video send bitrate, from what the receiver reports: the smallest of the delay-based
// estimate (`DelayBasedEstimator`, from transport-wide feedback, when the peer sends it), the
// loss-based half of Google Congestion Control (draft-ietf-rmcat-gcc-02 §6, from receiver
// reports: the last resort), REMB (when that is what the peer sends) and the configured maximum.
//
// Invariants:
// - The loss estimate moves only on a receiver report's fraction lost (the loss over the last
//   report interval): above 10 % it is multiplied by (1 − loss / 2); below 2 % by 1.05 (at
//   least +1 kbit/s, so a small estimate still climbs); in between it holds. A congested path
//   loses more than 10 %; a path losing 2–10 % is tolerated (NACK and keyframes repair it).
// - Reports closer together than `minimumReportIntervalMicroseconds` after the last one used are
//   ignored: two reports for one interval (a compound with several blocks, a duplicate) must
//   not cut twice.
// - The estimate stays within minimumKbps ... maximumKbps; the target is the smallest of the
//   loss estimate, the delay-based estimate, the last REMB and the maximum, and never below
//   minimumKbps unless the maximum is.
// - A path with no delay signal of the sender's own (no transport-wide feedback) is not
//   started at the maximum: `startBelowMaximum` sets the loss estimate lower and each clean
//   report multiplies it by `startGrowth` until the maximum, a report with loss, a round trip
//   showing a queue, or a REMB under the target ends the start. Flooding a thin path for the
//   second before a REMB can come loses a fifth to a half of it, and a receiver that waits
//   for every packet (aiortc) stands still for seconds behind the holes.
// - Times are passed in; nothing here reads a clock or allocates.

/// Sans-IO send-rate decision for one video stream.
public struct SendBitrateController: Sendable, Equatable {
    /// Loss above this fraction cuts the estimate.
    public static let congestedLoss = 0.10
    /// Loss below this fraction lets it grow.
    public static let cleanLoss = 0.02
    public static let growth = 1.05
    /// Where a path without transport-wide feedback starts, and how fast it grows from there.
    public static let untriedStartKbps = 1000
    public static let startGrowth = 1.5
    public static let minimumReportIntervalMicroseconds: Int64 = 200_000

    /// The configured (or host-set) ceiling.
    public private(set) var maximumKbps: Int
    /// The floor the loss estimate does not go under.
    public let minimumKbps: Int
    /// What the loss reports allow.
    public private(set) var lossEstimateKbps: Int
    /// The receiver's last REMB, if it sent any.
    public private(set) var rembKbps: Int?
    /// The newest delay-based estimate, if transport-wide feedback came.
    public private(set) var delayBasedKbps: Int?
    /// Reports that cut the estimate, and those that let it grow.
    public private(set) var decreases = 0
    public private(set) var increases = 0
    private var lastReportAt: Int64?
    /// Growing from `startBelowMaximum` until the path says where it stops.
    public private(set) var startingUp = false

    /// Starts at the maximum: a share begins at the rate it was asked for and backs off on loss.
    public init(maximumKbps: Int, minimumKbps: Int = 100) {
        let maximum = max(maximumKbps, 1)
        self.maximumKbps = maximum
        self.minimumKbps = min(max(minimumKbps, 1), maximum)
        lossEstimateKbps = maximum
    }

    /// The rate the encoder should run at now.
    public var targetKbps: Int {
        min(lossEstimateKbps, rembKbps.map { max($0, 1) } ?? Int.max,
            delayBasedKbps.map { max($0, minimumKbps) } ?? Int.max, maximumKbps)
    }

    /// Whether the path holds the target down: below the maximum, with the delay-based estimate
    /// the binding one, or a REMB while the receiver reports show the path filling (the round
    /// trip `queueingRoundTripMicroseconds` over its least, or loss at `cleanLoss` or more).
    /// A REMB alone is not enough: it may merely follow what an application-limited sender
    /// happened to send (aiortc's fell to ~50 kbit/s behind a still picture on a clean path).
    public var pathHoldsTarget: Bool {
        let target = targetKbps
        guard target < maximumKbps else { return false }
        if delayBasedKbps.map({ $0 <= target }) ?? false { return true }
        guard rembKbps.map({ $0 <= target }) ?? false else { return false }
        return queueBuilding || reportedLoss >= Self.cleanLoss
    }

    /// A round trip this much over the least seen says a queue is building on the path.
    public static let queueingRoundTripMicroseconds: Int64 = 50_000
    /// The newest round trip from a receiver report, and the least seen.
    public private(set) var roundTripMicroseconds: Int64?
    public private(set) var leastRoundTripMicroseconds: Int64?
    /// The newest report's fraction lost.
    public private(set) var reportedLoss = 0.0

    /// The round trip measured from the newest receiver report.
    public mutating func roundTrip(microseconds: Int64) {
        roundTripMicroseconds = microseconds
        leastRoundTripMicroseconds = min(leastRoundTripMicroseconds ?? microseconds, microseconds)
    }

    /// A path with no delay signal of the sender's own: starts at `kbps` (when under the
    /// maximum) and grows by `startGrowth` a clean report. Returns whether the target changed.
    @discardableResult
    public mutating func startBelowMaximum(kbps: Int) -> Bool {
        let before = targetKbps
        lossEstimateKbps = min(max(kbps, minimumKbps), maximumKbps)
        startingUp = lossEstimateKbps < maximumKbps
        return targetKbps != before
    }

    /// Whether the newest round trip stands `queueingRoundTripMicroseconds` over the least.
    private var queueBuilding: Bool {
        (roundTripMicroseconds ?? 0) - (leastRoundTripMicroseconds ?? 0) >= Self.queueingRoundTripMicroseconds
    }

    /// A receiver report block for the video stream: `fractionLost` is its 8-bit fraction
    /// (lost / 256); give its round trip (`roundTrip`) first. Returns whether the target changed.
    @discardableResult
    public mutating func receiverReport(fractionLost: UInt8, now: Int64) -> Bool {
        if let last = lastReportAt, now - last < Self.minimumReportIntervalMicroseconds { return false }
        lastReportAt = now
        let before = targetKbps
        let loss = Double(fractionLost) / 256
        reportedLoss = loss
        let estimate = Double(lossEstimateKbps)
        var next = lossEstimateKbps
        // The start grows on a clean report; any other ends it, and the usual rule applies.
        let growingFromStart = startingUp && loss < Self.cleanLoss && !queueBuilding
        if growingFromStart {
            next = max(Int(estimate * Self.startGrowth), lossEstimateKbps + 1)
            increases += 1
        } else if loss > Self.congestedLoss {
            next = Int(estimate * (1 - loss / 2))
            decreases += 1
        } else if loss < Self.cleanLoss {
            next = max(Int(estimate * Self.growth), lossEstimateKbps + 1)
            if lossEstimateKbps < maximumKbps { increases += 1 }
        }
        lossEstimateKbps = min(max(next, minimumKbps), maximumKbps)
        startingUp = growingFromStart && lossEstimateKbps < maximumKbps
        return targetKbps != before
    }

    /// A REMB from the receiver (RFC draft-alvestrand-rmcat-remb): a ceiling of its own.
    @discardableResult
    public mutating func remb(kbps: Int) -> Bool {
        let before = targetKbps
        if kbps < before { startingUp = false }
        rembKbps = max(kbps, 1)
        return targetKbps != before
    }

    /// A delay-based estimate (kbit/s) from transport-wide feedback: a ceiling of its own.
    @discardableResult
    public mutating func delayBased(kbps: Int) -> Bool {
        let before = targetKbps
        delayBasedKbps = max(kbps, 1)
        return targetKbps != before
    }

    /// The host changed the bitrate: the new maximum; the estimate starts again from it.
    @discardableResult
    public mutating func setMaximum(kbps: Int) -> Bool {
        let before = targetKbps
        maximumKbps = max(kbps, 1)
        lossEstimateKbps = maximumKbps
        startingUp = false
        return targetKbps != before
    }
}
