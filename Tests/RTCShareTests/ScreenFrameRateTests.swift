import RTCShare
import Testing

/// The frame rate gives way first when the bitrate is short and the content needs it, down to
/// its floor, and comes back.
@Suite struct ScreenFrameRateTests {
    func allowed(_ kbps: Int, configuredKbps: Int = 2500, _ w: Int = 1280, _ h: Int = 720, configured: Int = 20) -> Int {
        ScreenFrameRate.allowed(targetKbps: kbps, configuredKbps: configuredKbps, width: w, height: h, configured: configured)
    }

    func next(current: Int, encoded: Int, before: Int? = nil, target: Int) -> Int {
        ScreenFrameRate.next(current: current, encodedKbps: encoded, encodedBeforeKbps: before ?? encoded,
                             targetKbps: target, configuredKbps: 2500, width: 1280, height: 720, configured: 20)
    }

    @Test func everyFrameGoesWhileTheBitrateIsNearWhatThePictureNeeds() {
        // 1280x720 at 20 fps needs ~1475 kbit/s: at the configured 2500, or above 3/4 of the need,
        // every frame goes.
        #expect(allowed(2500) == 20 && allowed(1475) == 20 && allowed(1110) == 20)
        // 320x240 needs ~123 kbit/s at 20 fps: 300 is plenty.
        #expect(allowed(300, 320, 240) == 20)
    }

    @Test func aShortBitrateAllowsFewerFramesInProportionDownToTheFloor() {
        let half = allowed(553)  // half of 3/4 of the need
        #expect(half == 10)
        #expect(allowed(800) > half && allowed(800) < 20)
        #expect(allowed(150) == ScreenFrameRate.floorFramesPerSecond && allowed(0) == 5)
        #expect(allowed(10, configured: 3) == 3, "a configured rate under the floor is kept")
        // Configured for 1000 kbit/s at 720p: 1000 is the share's own rate, not a shortage.
        #expect(allowed(1000, configuredKbps: 1000) == 20 && allowed(375, configuredKbps: 1000) == 10)
    }

    @Test func framesAreGivenUpOnlyWhenTheEncoderSpendsTheTarget() {
        // Busy content at a 553 kbit/s target: the encoder spends it all, so 10 fps.
        #expect(next(current: 20, encoded: 560, target: 553) == 10)
        // One second of it (a keyframe, or a second made at a higher target) is not enough.
        #expect(next(current: 20, encoded: 900, before: 200, target: 553) == 20)
        // Simple content (a still screen) at the same target: every frame.
        #expect(next(current: 20, encoded: 150, target: 553) == 20)
        #expect(next(current: 10, encoded: 150, target: 553) == 20, "back at once")
        // In between, the rate in force holds.
        #expect(next(current: 10, encoded: 400, target: 553) == 10)
        #expect(next(current: 20, encoded: 400, target: 553) == 20)
        // The bitrate recovered and the encoder spends it: every frame again.
        #expect(next(current: 10, encoded: 1500, target: 1500) == 20)
    }

    @Test func anEncoderDroppingFramesToHoldItsRateSpendsTheTargetToo() {
        func step(encoded: Int, dropping: Bool) -> Int {
            ScreenFrameRate.next(current: 20, encodedKbps: encoded, encodedBeforeKbps: encoded, targetKbps: 717,
                                 configuredKbps: 2500, width: 1280, height: 720, configured: 20,
                                 encoderDropping: dropping)
        }
        // Busy 720p at a 717 kbit/s target: the encoder makes 60–76 % of it (the rest pays for
        // audio and headers) and drops frames to do so. Fewer, even frames instead.
        #expect(step(encoded: 500, dropping: true) == allowed(717))
        #expect(allowed(717) == 13)
        #expect(step(encoded: 500, dropping: false) == 20, "without drops: holds")
        // Dropping while it makes little (under half the target) still says it spends it all.
        #expect(step(encoded: 300, dropping: true) == 13)
    }

    @Test func aLoweredRateIsHeldAFewSecondsBeforeItRises() {
        func step(_ current: Int, encoded: Int, before: Int, target: Int, held: Int) -> Int {
            ScreenFrameRate.next(current: current, encodedKbps: encoded, encodedBeforeKbps: before, targetKbps: target,
                                 configuredKbps: 2500, width: 1280, height: 720, configured: 20, heldSeconds: held)
        }
        // A congested path, second by second: the encoder spends the target, then makes little
        // (frames dropped, a low rate), then spends it again. Lowering is at once; rising waits.
        var fps = 20, held = 0
        var rates: [Int] = []
        for (encoded, before) in [(300, 300), (100, 300), (300, 100), (90, 300), (320, 90), (80, 320), (85, 80)] {
            let next = step(fps, encoded: encoded, before: before, target: 300, held: held)
            held = next == fps ? held + 1 : 0
            fps = next
            rates.append(fps)
        }
        #expect(rates == [5, 5, 5, 5, 5, 20, 20], "\(rates)")
        // Without a hold the same seconds flip between 5 and 20.
        #expect(step(5, encoded: 100, before: 300, target: 300, held: 0) == 5)
        #expect(step(5, encoded: 100, before: 300, target: 300, held: ScreenFrameRate.raiseAfterSeconds) == 20)
    }

    @Test func theEncoderMayNotDropTheFrameThatWouldLeaveThePictureStillTooLong() {
        let limit = ScreenFrameRate.longestGapMicroseconds
        // No frame coded yet: libvpx decides.
        #expect(ScreenFrameRate.mayDrop(sinceLastCoded: nil, frameInterval: 50_000))
        // At 20 fps: drops are allowed until the next frame would come after the limit.
        #expect(ScreenFrameRate.mayDrop(sinceLastCoded: limit - 50_001, frameInterval: 50_000))
        #expect(!ScreenFrameRate.mayDrop(sinceLastCoded: limit - 50_000, frameInterval: 50_000))
        // At 5 fps the frame before the limit is already kept: the next one would be too late.
        #expect(!ScreenFrameRate.mayDrop(sinceLastCoded: 200_000, frameInterval: 200_000) || limit > 400_000)
        #expect(ScreenFrameRate.mayDrop(sinceLastCoded: 0, frameInterval: 200_000))
        // Whatever the frame rate, kept frames are never further apart than the limit: a 5 fps
        // source of which the encoder would drop every frame.
        for interval in [50_000, 66_667, 100_000, 200_000] as [Int64] {
            var last: Int64 = 0, longest: Int64 = 0
            var t: Int64 = interval
            while t < 10_000_000 {
                if !ScreenFrameRate.mayDrop(sinceLastCoded: t - last, frameInterval: interval) {
                    longest = max(longest, t - last)
                    last = t
                }
                t += interval
            }
            #expect(longest <= limit && longest > 0, "\(interval) µs: \(longest)")
        }
    }
}
