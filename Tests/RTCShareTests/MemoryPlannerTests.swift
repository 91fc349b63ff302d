import RTCShareCore
import RTCShareMedia
import Testing
@testable import RTCShare

@Suite struct MemoryPlannerTests {
    @Test func autoSizePicksTheLargestThatFitsFiftyMiB() throws {
        var config = ShareConfiguration()
        config.memoryCapBytes = 50 << 20
        let plan720 = try MemoryPlanner.resolve(config, for: TestSource(width: 1280, height: 720))
        #expect(plan720.outputSize == PictureSize(width: 1280, height: 720))
        #expect(plan720.fits && !plan720.needsTransform)
        // A 1080p source costs two full-size capture frames: 720p output no longer fits.
        let plan1080 = try MemoryPlanner.resolve(config, for: TestSource(width: 1920, height: 1080))
        #expect(plan1080.outputSize == PictureSize(width: 960, height: 540))
        #expect(plan1080.fits && plan1080.needsTransform)
        // A larger cap lets it through.
        config.memoryCapBytes = 64 << 20
        #expect(try MemoryPlanner.resolve(config, for: TestSource(width: 1920, height: 1080)).outputSize
                == PictureSize(width: 1280, height: 720))
    }

    @Test func askedSizeOverTheCapIsRefusedNamingOneThatFits() {
        let source = TestSource(width: 1920, height: 1080)
        var config = ShareConfiguration()
        config.outputSize = PictureSize(width: 1920, height: 1080)
        #expect {
            try MemoryPlanner.resolve(config, for: source)
        } throws: { error in
            guard case ShareError.doesNotFit(let message) = error else { return false }
            return message.contains("1920x1080") && message.contains("960x540")
        }
    }

    @Test func uprightSourceAtTheOutputSizeNeedsNoTransform() throws {
        let source = TestSource(width: 640, height: 360)
        var config = ShareConfiguration()
        config.outputSize = PictureSize(width: 640, height: 360)
        let plan = try MemoryPlanner.resolve(config, for: source)
        #expect(!plan.needsTransform)
        #expect(!plan.items.contains { $0.name.contains("encoder input") })
    }

    @Test func turnedSourceNeedsTransformAndItsWorkingMemory() throws {
        let source = TestSource(width: 640, height: 360, orientation: .right)
        var config = ShareConfiguration()
        config.outputSize = PictureSize(width: 640, height: 360)
        let plan = try MemoryPlanner.resolve(config, for: source)
        #expect(plan.needsTransform)
        #expect(plan.items.contains { $0.name.contains("testsrc working memory") })
        #expect(plan.budgetBytes >= source.budgetBytes)
    }

    @Test(arguments: [(OutputOrientation.landscape, 640, 360), (.portrait, 360, 640), (.source, 360, 640)])
    func outputOrientationDecidesTheShape(orientation: OutputOrientation, width: Int, height: Int) throws {
        let portraitSource = TestSource(width: 360, height: 640)
        var config = ShareConfiguration()
        config.outputSize = PictureSize(width: 640, height: 360)
        config.outputOrientation = orientation
        let plan = try MemoryPlanner.resolve(config, for: portraitSource)
        #expect(plan.outputSize == PictureSize(width: width, height: height))
    }

    @Test func encoderFiguresFollowTheMeasurements() {
        let mib = 1 << 20
        #expect(abs(MemoryPlanner.vp8EncoderBytes(PictureSize(width: 1280, height: 720)) - 33 * mib - mib / 2) < mib / 8)
        #expect(abs(MemoryPlanner.vp8EncoderBytes(PictureSize(width: 1920, height: 1080)) - 72 * mib) < mib / 8)
    }
}
