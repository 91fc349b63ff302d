import RTCShare
import Testing

/// The encoder's spending against its ask, on a fake clock: frames it cannot afford are
/// skipped, the average stays at the ask whatever the frame size, keyframes do not cost the
/// frames after them.
@Suite struct FrameBudgetTests {
    let ms: Int64 = 1_000

    @Test func framesTooBigForTheAskAreSkippedSoTheOutputKeepsToIt() {
        // 500 kbit/s asked, frames offered at 20 fps, each 25 KB (200 kbit: 0.4 s of the ask).
        var b = FrameBudget()
        var coded = 0, bits = 0
        var t: Int64 = 0
        while t < 10_000 * ms {
            if b.allows(at: t, askKbps: 500) {
                b.coded(bytes: 25_000, at: t, askKbps: 500)
                coded += 1
                bits += 200_000
            }
            t += 50 * ms
        }
        // 10 s at 500 kbit/s is 5 Mbit: 25 frames, plus what the 200 ms lead lets through.
        #expect(coded >= 25 && coded <= 27, "\(coded) frames")
        #expect(Double(bits) <= 5_000_000 + 200_000 + 100_000)
    }

    @Test func anEncoderWithinItsAskIsNeverHeldBack() {
        var b = FrameBudget()
        var t: Int64 = 0
        while t < 5_000 * ms {
            let ok = b.allows(at: t, askKbps: 1000)
            #expect(ok)
            b.coded(bytes: 6_000, at: t, askKbps: 1000)  // 48 kbit a frame at 20 fps: 960 kbit/s
            t += 50 * ms
        }
    }

    @Test func aQuietSpellBanksNothing() {
        var b = FrameBudget()
        _ = b.allows(at: 0, askKbps: 500)
        // Ten idle seconds, then a burst: only the 200 ms lead goes before frames are skipped.
        var t: Int64 = 10_000 * ms
        var coded = 0
        while b.allows(at: t, askKbps: 500) && coded < 100 {
            b.coded(bytes: 25_000, at: t, askKbps: 500)
            coded += 1
            t += 1 * ms
        }
        #expect(coded == 1, "\(coded)")
    }

    @Test func aKeyframeIsChargedOnlyUpToTheLead() {
        var b = FrameBudget()
        b.coded(bytes: 140_000, isKeyframe: true, at: 0, askKbps: 1000)  // 1.1 s of the ask
        // The next frame 50 ms later still goes (the lead is 200 ms = 200 kbit).
        let next = b.allows(at: 50 * ms, askKbps: 1000)
        #expect(next)
        // The same bytes as an ordinary frame: the frames of the next ~0.9 s are skipped.
        var c = FrameBudget()
        c.coded(bytes: 140_000, at: 0, askKbps: 1000)
        let at50 = c.allows(at: 50 * ms, askKbps: 1000), at700 = c.allows(at: 700 * ms, askKbps: 1000)
        let at950 = c.allows(at: 950 * ms, askKbps: 1000)
        #expect(!at50 && !at700 && at950)
    }

    @Test func theDebtIsCappedAtASecondOfTheAsk() {
        var b = FrameBudget()
        for i in 0..<50 { b.coded(bytes: 100_000, at: Int64(i) * ms, askKbps: 400) }
        #expect(b.debtBits <= 400_000)
        let later = b.allows(at: 49 * ms + 800 * ms + 1, askKbps: 400)
        #expect(later)
    }
}
