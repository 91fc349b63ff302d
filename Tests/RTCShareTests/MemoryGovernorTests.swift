import RTCShare
import RTCShareCore
import Testing
import TestSupport

@Suite struct MemoryGovernorTests {
    static let line = 40 << 20

    @Test func belowTheLineNothingHappens() {
        var g = MemoryGovernor(limitBytes: Self.line, framesPerSecond: 20,
                               outputSize: PictureSize(width: 1280, height: 720), canResize: true)
        var clock = FakeClock()
        for _ in 0..<30 {
            #expect(g.sample(residentBytes: Self.line - 1, at: clock.now) == nil)
            clock.advance(by: .seconds(1))
        }
        #expect(g.steps == 0 && g.frameRateCap == 20)
    }

    @Test func frameRateFirstThenSizeOneStepPerSettleThenExhaustedOnce() {
        var g = MemoryGovernor(limitBytes: Self.line, framesPerSecond: 20,
                               outputSize: PictureSize(width: 640, height: 360), canResize: true)
        var clock = FakeClock()
        var steps: [MemoryGovernorStep] = []
        for _ in 0..<40 {
            if let step = g.sample(residentBytes: Self.line, at: clock.now) { steps.append(step) }
            clock.advance(by: .milliseconds(500))
        }
        #expect(steps == [.frameRate(10), .frameRate(5), .outputSize(PictureSize(width: 480, height: 270)),
                          .outputSize(PictureSize(width: 360, height: 202)), .exhausted])
        #expect(g.steps == 5)
    }

    @Test func withoutAScaleStageOnlyTheFrameRateGivesWay() {
        var g = MemoryGovernor(limitBytes: Self.line, framesPerSecond: 30,
                               outputSize: PictureSize(width: 1280, height: 720), canResize: false)
        var clock = FakeClock()
        var steps: [MemoryGovernorStep] = []
        for _ in 0..<10 {
            if let step = g.sample(residentBytes: Self.line + 1, at: clock.now) { steps.append(step) }
            clock.advance(by: .seconds(2))
        }
        #expect(steps == [.frameRate(15), .frameRate(7), .frameRate(5), .exhausted])
        #expect(g.outputSize == PictureSize(width: 1280, height: 720))
    }

    @Test func stepsOnlyGoDown() {
        var g = MemoryGovernor(limitBytes: Self.line, framesPerSecond: 20,
                               outputSize: PictureSize(width: 1280, height: 720), canResize: true)
        var clock = FakeClock()
        #expect(g.sample(residentBytes: Self.line, at: clock.now) == .frameRate(10))
        clock.advance(by: .seconds(60))
        #expect(g.sample(residentBytes: 1 << 20, at: clock.now) == nil)
        #expect(g.frameRateCap == 10, "nothing given back when memory falls")
    }
}
