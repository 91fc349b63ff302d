import RTCShare
import Testing

/// The frame rate gives way first when the bitrate is short, down to its floor, and comes back.
@Suite struct ScreenFrameRateTests {
    func fps(_ kbps: Int, configuredKbps: Int = 2500, _ w: Int = 1280, _ h: Int = 720, configured: Int = 20) -> Int {
        ScreenFrameRate.framesPerSecond(targetKbps: kbps, configuredKbps: configuredKbps, width: w, height: h,
                                        configured: configured)
    }

    @Test func theConfiguredRateHoldsWhileTheBitrateIsNearWhatThePictureNeeds() {
        // 1280x720 at 20 fps needs ~1475 kbit/s: at the configured 2500, or above 3/4 of the need,
        // every frame goes.
        #expect(fps(2500) == 20 && fps(1475) == 20 && fps(1110) == 20)
        // 320x240 needs ~123 kbit/s at 20 fps: 300 is plenty.
        #expect(fps(300, 320, 240) == 20)
    }

    @Test func aShortBitrateLowersTheFrameRateInProportionToTheFloor() {
        let half = fps(553)  // half of 3/4 of the need
        #expect(half == 10)
        #expect(fps(800) > half && fps(800) < 20)
        #expect(fps(150) == ScreenFrameRate.floorFramesPerSecond && fps(0) == 5)
        // A configured rate under the floor is kept.
        #expect(fps(10, configured: 3) == 3)
    }

    @Test func aLowConfiguredBitrateIsTheReference() {
        // Configured for 1000 kbit/s at 720p: 1000 is the share's own rate, not a shortage.
        #expect(fps(1000, configuredKbps: 1000) == 20)
        #expect(fps(375, configuredKbps: 1000) == 10)
    }
}
