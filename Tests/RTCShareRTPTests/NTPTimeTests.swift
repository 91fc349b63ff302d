import TestSupport
import Testing
@testable import RTCShareRTP

/// NTP timestamps from wall-clock microseconds, LSR's middle 32 bits, and RTT (RFC 3550 §6.4.1).
@Suite struct NTPTimeTests {
    @Test func unixEpochAndHalfSeconds() {
        #expect(NTPTime(unixMicroseconds: 0) == NTPTime(seconds: 2_208_988_800, fraction: 0))
        #expect(NTPTime(unixMicroseconds: 1_500_000) == NTPTime(seconds: 2_208_988_801, fraction: 0x8000_0000))
        #expect(NTPTime(unixMicroseconds: -500_000) == NTPTime(seconds: 2_208_988_799, fraction: 0x8000_0000))
        #expect(NTPTime(seconds: 0x0001_B710, fraction: 0x8000_1234).middle32 == 0xB710_8000)
    }

    @Test func microsecondsRoundTripInBothEras() {
        var rng = SeededRandom(seed: 3)
        // 1970 … 2100: both sides of the 2036 era change.
        for _ in 0..<10_000 {
            let us = Int64.random(in: 0..<4_102_444_800_000_000, using: &rng)
            let back = NTPTime(unixMicroseconds: us).unixMicroseconds
            #expect(back == us || back == us - 1, "\(us) → \(back)")
        }
        let after2036: Int64 = (Int64(1) << 32 - NTPTime.unixEpochOffsetSeconds + 10) * 1_000_000
        #expect(NTPTime(unixMicroseconds: after2036).seconds == 10)
        #expect(NTPTime(unixMicroseconds: after2036).unixMicroseconds == after2036)
    }

    @Test func rttOfTheRFC3550Example() {
        // §6.4.1 figure: A = 0xb710:8000, LSR = 0xb705:2000, DLSR = 0x0005:4000 → 6.125 s.
        let now = NTPTime(rawValue: UInt64(0xB710_8000) << 16)
        #expect(NTPTime.roundTripMicroseconds(now: now, lastSenderReport: 0xB705_2000,
                                              delaySinceLastSenderReport: 0x0005_4000) == 6_125_000)
    }

    @Test func rttGuardsMissingReportsNegativeResultsAndWraps() {
        let now = NTPTime(rawValue: UInt64(0x0000_1000) << 16)
        #expect(NTPTime.roundTripMicroseconds(now: now, lastSenderReport: 0, delaySinceLastSenderReport: 0) == nil)
        #expect(NTPTime.roundTripMicroseconds(now: now, lastSenderReport: 0x0000_0800, delaySinceLastSenderReport: 0x1000) == nil)
        // The middle 32 bits wrapped between the SR and the RR: 0x2000 / 65536 s = 125 ms.
        #expect(NTPTime.roundTripMicroseconds(now: now, lastSenderReport: 0xFFFF_F000, delaySinceLastSenderReport: 0) == 125_000)
        let block = RTCPReportBlock(ssrc: 1, fractionLost: 0, cumulativeLost: 0, extendedHighestSequence: 0, jitter: 0,
                                    lastSenderReport: 0x0000_0800, delaySinceLastSenderReport: 0x0000_0400)
        #expect(block.roundTripMicroseconds(now: now) == 15_625)  // 0x400 / 65536 s
    }
}
