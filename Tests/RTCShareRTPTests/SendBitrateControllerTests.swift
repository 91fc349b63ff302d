import Testing
@testable import RTCShareRTP

@Suite struct SendBitrateControllerTests {
    /// 8-bit fraction lost for a percentage.
    static func lost(_ percent: Double) -> UInt8 { UInt8(min(255, (percent / 100 * 256).rounded())) }

    /// One receiver report; whether the target changed.
    static func report(_ c: inout SendBitrateController, lost: UInt8, at seconds: Double) -> Bool {
        c.receiverReport(fractionLost: lost, now: Int64(seconds * 1_000_000))
    }

    @Test func startsAtTheMaximumAndCleanReportsKeepItThere() {
        var c = SendBitrateController(maximumKbps: 1000)
        #expect(c.targetKbps == 1000)
        var changes = 0
        for i in 0..<10 where Self.report(&c, lost: 0, at: Double(i)) { changes += 1 }
        #expect(changes == 0)
        #expect(c.targetKbps == 1000 && c.increases == 0 && c.decreases == 0)
    }

    @Test func heavyLossCutsByHalfTheLossAndModerateLossHolds() {
        var c = SendBitrateController(maximumKbps: 1000)
        let cut = Self.report(&c, lost: 64, at: 0)  // 25 % lost: × 0.875
        #expect(cut && c.targetKbps == 875)
        let held = Self.report(&c, lost: Self.lost(5), at: 1)  // 2–10 %: hold
        #expect(!held && c.targetKbps == 875)
        let cutAgain = Self.report(&c, lost: 128, at: 2)  // 50 %: × 0.75
        #expect(cutAgain && c.targetKbps == 656)
        #expect(c.decreases == 2)
    }

    @Test func cleanReportsGrowFivePercentEachBackToTheMaximum() {
        var c = SendBitrateController(maximumKbps: 1000)
        _ = Self.report(&c, lost: 255, at: 0)
        var previous = c.targetKbps
        #expect(previous < 520)
        var reports = 0
        while c.targetKbps < 1000 && reports < 30 {
            reports += 1
            _ = Self.report(&c, lost: 0, at: Double(reports))
            #expect(c.targetKbps > previous && c.targetKbps <= max(Int(Double(previous) * 1.05), previous + 1))
            previous = c.targetKbps
        }
        #expect(c.targetKbps == 1000, "back at the maximum after \(reports) clean reports")
        #expect(reports >= 14, "5 % a report: about 14 reports from half")
    }

    @Test func theEstimateNeverGoesUnderTheFloor() {
        var c = SendBitrateController(maximumKbps: 2000, minimumKbps: 150)
        for i in 0..<100 { _ = Self.report(&c, lost: 255, at: Double(i)) }
        #expect(c.targetKbps == 150)
        var small = SendBitrateController(maximumKbps: 60, minimumKbps: 100)
        #expect(small.minimumKbps == 60, "a maximum under the floor is the floor")
        _ = Self.report(&small, lost: 255, at: 0)
        #expect(small.targetKbps == 60)
    }

    @Test func reportsCloserThanTheIntervalCountOnce() {
        var c = SendBitrateController(maximumKbps: 1000)
        let first = Self.report(&c, lost: 64, at: 0)
        let tooSoon = Self.report(&c, lost: 64, at: 0.1)
        #expect(first && !tooSoon)
        #expect(c.targetKbps == 875 && c.decreases == 1)
        let later = Self.report(&c, lost: 64, at: 0.3)
        #expect(later && c.decreases == 2)
    }

    @Test func rembAndTheHostsMaximumAreCeilings() {
        var c = SendBitrateController(maximumKbps: 1000)
        var changed = c.remb(kbps: 300)
        #expect(changed && c.targetKbps == 300)
        changed = Self.report(&c, lost: 0, at: 0)
        #expect(!changed, "the estimate is at the maximum already")
        changed = c.remb(kbps: 5000)
        #expect(changed && c.targetKbps == 1000, "REMB above the maximum does not raise it")
        _ = Self.report(&c, lost: 128, at: 1)
        #expect(c.targetKbps == 750)
        changed = c.setMaximum(kbps: 400)
        #expect(changed && c.targetKbps == 400 && c.lossEstimateKbps == 400)
        changed = c.setMaximum(kbps: 2000)
        #expect(changed && c.targetKbps == 2000, "the estimate starts again from the new maximum")
    }

    @Test func thePathHoldsTheTargetOnlyWithEvidenceOfTheRateBeingTheLimit() {
        var c = SendBitrateController(maximumKbps: 2500)
        #expect(!c.pathHoldsTarget, "at the maximum nothing holds it")
        // A delay-based estimate that binds: the path's own measure.
        c.delayBased(kbps: 800)
        #expect(c.pathHoldsTarget)
        c.delayBased(kbps: 2500)
        #expect(!c.pathHoldsTarget)
        // A REMB that binds on a clean path may follow an application-limited sender: not held.
        c.remb(kbps: 60)
        c.roundTrip(microseconds: 40_000)
        c.receiverReport(fractionLost: 0, now: 1_000_000)
        #expect(c.targetKbps == 60 && !c.pathHoldsTarget)
        // The same REMB while the round trip stands 50 ms over its least: a queue, so held.
        c.roundTrip(microseconds: 89_000)
        #expect(!c.pathHoldsTarget)
        c.roundTrip(microseconds: 90_000)
        #expect(c.pathHoldsTarget)
        c.roundTrip(microseconds: 45_000)
        #expect(!c.pathHoldsTarget && c.leastRoundTripMicroseconds == 40_000)
        // Or while the reports show loss (2 % or more).
        c.receiverReport(fractionLost: 6, now: 2_000_000)  // 2.3 %
        #expect(c.pathHoldsTarget)
        c.receiverReport(fractionLost: 4, now: 3_000_000)  // 1.6 %
        #expect(!c.pathHoldsTarget)
        // A REMB above the target (the loss estimate binds) is not the REMB holding it.
        var d = SendBitrateController(maximumKbps: 1000)
        d.remb(kbps: 900)
        d.receiverReport(fractionLost: 64, now: 1_000_000)  // 25 %: cut to 875
        d.roundTrip(microseconds: 10_000)
        d.roundTrip(microseconds: 300_000)
        #expect(d.targetKbps == 875 && !d.pathHoldsTarget)
    }

    @Test func anUntriedPathWithoutADelaySignalStartsLowAndGrowsFastUntilThePathSpeaks() {
        var c = SendBitrateController(maximumKbps: 2500)
        c.roundTrip(microseconds: 40_000)  // measured before media (ICE)
        #expect(c.startBelowMaximum(kbps: 1000) && c.targetKbps == 1000 && c.startingUp)
        c.roundTrip(microseconds: 60_000)
        c.receiverReport(fractionLost: 0, now: 1_000_000)
        #expect(c.targetKbps == 1500 && c.startingUp)
        c.roundTrip(microseconds: 45_000)
        c.receiverReport(fractionLost: 0, now: 2_000_000)
        #expect(c.targetKbps == 2250 && c.startingUp)
        c.receiverReport(fractionLost: 0, now: 3_000_000)
        #expect(c.targetKbps == 2500 && !c.startingUp, "the maximum ends the start")
        // A queue in the round trip ends it where it is, and the usual rules go on from there.
        var q = SendBitrateController(maximumKbps: 2500)
        q.roundTrip(microseconds: 40_000)
        q.startBelowMaximum(kbps: 1000)
        q.roundTrip(microseconds: 410_000)
        q.receiverReport(fractionLost: 0, now: 1_000_000)
        #expect(!q.startingUp && q.targetKbps == 1050)
        // So do loss (here 5 %: held) and a REMB under the target.
        var l = SendBitrateController(maximumKbps: 2500)
        l.startBelowMaximum(kbps: 1000)
        l.receiverReport(fractionLost: 13, now: 1_000_000)
        #expect(!l.startingUp && l.targetKbps == 1000)
        var r = SendBitrateController(maximumKbps: 2500)
        r.startBelowMaximum(kbps: 1000)
        r.remb(kbps: 2000)
        #expect(r.startingUp, "a REMB over the target says nothing of the ceiling")
        r.remb(kbps: 800)
        #expect(!r.startingUp && r.targetKbps == 800)
        // A maximum under the start: nothing to grow to.
        var small = SendBitrateController(maximumKbps: 600)
        #expect(!small.startBelowMaximum(kbps: 1000) && !small.startingUp && small.targetKbps == 600)
    }
}
