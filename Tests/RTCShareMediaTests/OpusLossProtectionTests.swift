import RTCShareCore
import RTCShareMedia
import Testing

/// The Opus encoder's expected loss from receiver reports: levels, smoothing, hysteresis, and
/// that the libopus encoder takes the level.
@Suite struct OpusLossProtectionTests {
    /// A fraction lost (lost / 256) for `percent`.
    func fraction(_ percent: Double) -> UInt8 { UInt8((percent * 256 / 100).rounded()) }

    @Test func aCleanPathTakesTheFECAwayAndALossyOneBringsItBack() {
        var p = OpusLossProtection()
        #expect(p.percent == 5)
        #expect(p.receiverReport(fractionLost: 0) == 0)  // smoothed 0 %: no FEC
        #expect(p.receiverReport(fractionLost: 0) == nil)
        // 12 % reported: smoothed 6 % → 5, then 9 % → still 5, then 10.5 % → 10.
        #expect(p.receiverReport(fractionLost: fraction(12)) == 5)
        #expect(p.receiverReport(fractionLost: fraction(12)) == nil)
        #expect(p.receiverReport(fractionLost: fraction(12)) == 10)
        // Heavy loss reaches the top level and stays there while it lasts.
        for _ in 0..<4 { _ = p.receiverReport(fractionLost: fraction(30)) }
        #expect(p.percent == 20)
    }

    @Test func oneQuietReportDoesNotDropTheLevel() {
        var p = OpusLossProtection()
        for _ in 0..<6 { _ = p.receiverReport(fractionLost: fraction(10)) }
        #expect(p.percent == 10)
        // One report at 6 %: smoothed ~8 % — at least 80 % of 10: held.
        #expect(p.receiverReport(fractionLost: fraction(6)) == nil)
        #expect(p.percent == 10)
        // It keeps falling: under 8 % smoothed, the level follows down.
        #expect(p.receiverReport(fractionLost: fraction(2)) == 1)
    }

    @Test func theEncoderTakesTheLevel() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20, prefault: false)
        var encoder = try OpusEncoder(budget: budget, channels: 2)
        #expect(encoder.expectedLossPercent == OpusLossProtection.initialPercent)
        try encoder.setExpectedLoss(percent: 20)
        #expect(encoder.expectedLossPercent == 20)
        try encoder.setExpectedLoss(percent: 0)
        #expect(encoder.expectedLossPercent == 0)
        #expect(throws: MediaError.self) { try encoder.setExpectedLoss(percent: 101) }
    }
}
