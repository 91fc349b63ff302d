import RTCShareCore
import Testing
@testable import RTCShareMedia

@Suite struct FrameMarkerTests {
    @Test func stampReadsBack() throws {
        let budget = try MemoryBudget(capBytes: 4 << 20)
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: 320, maxHeight: 180, count: 1)
        var frame = try pool.acquire(format: .i420, width: 320, height: 180)
        let pattern = TestPattern(width: 320, height: 180)
        frame.withMutablePixels { pattern.render(into: $0, counter: 0xDEAD_BEEF, captureMicros: 0x1_2345_6789, elapsedMicros: 123_456) }
        frame.withPixels { pixels in
            let y = pixels.plane(0)
            let read = FrameMarker.read(luma: y.row(0).baseAddress!, stride: y.stride, width: y.rowBytes, rows: y.rows)
            #expect(read?.counter == 0xDEAD_BEEF)
            #expect(read?.captureMicrosLow == 0x2345_6789)
        }
    }

    @Test func turnedPictureDoesNotReadAsAMarker() throws {
        let budget = try MemoryBudget(capBytes: 4 << 20)
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: 320, maxHeight: 320, count: 2)
        var upright = try pool.acquire(format: .i420, width: 320, height: 180)
        let pattern = TestPattern(width: 320, height: 180)
        upright.withMutablePixels { pattern.render(into: $0, counter: 7, captureMicros: 99, elapsedMicros: 0) }
        let transformer = try FrameTransformer(budget: budget, maxSourceWidth: 320, maxSourceHeight: 180,
                                               maxOutputWidth: 320, maxOutputHeight: 320)
        for orientation in Orientation.allCases where orientation != .up {
            let (w, h) = orientation.uprightSize(width: 320, height: 180)
            var turned = try pool.acquire(format: .i420, width: w, height: h)
            try transformer.apply(upright, into: &turned, orientation: orientation)
            turned.withPixels { pixels in
                let y = pixels.plane(0)
                let read = FrameMarker.read(luma: y.row(0).baseAddress!, stride: y.stride, width: y.rowBytes, rows: y.rows)
                #expect(read == nil, "orientation \(orientation) still reads as a marker")
            }
        }
    }
}
