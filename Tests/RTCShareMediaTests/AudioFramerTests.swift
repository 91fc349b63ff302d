import RTCShareCore
import Testing
@testable import RTCShareMedia

@Suite struct AudioFramerTests {
    private func ramp(_ from: Int, _ count: Int, channels: Int) -> [Int16] {
        (0..<count).flatMap { i in [Int16](repeating: Int16(truncatingIfNeeded: from + i), count: channels) }
    }

    @Test func unevenPiecesComeOutAsExact960SampleFrames() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        var framer = try AudioFramer(budget: budget, channels: 2, capacityFrames: 4_800)
        var frame = [Int16](repeating: 0, count: 1_920)
        var next = 0, expected = 0
        for size in [1, 441, 882, 7, 960, 1_000, 2, 1_500] {
            ramp(next, size, channels: 2).withUnsafeBufferPointer { framer.append($0) }
            next += size
            while framer.hasFullFrame {
                let real = frame.withUnsafeMutableBufferPointer { framer.takeFrame(into: $0) }
                #expect(real == 960)
                #expect(frame == ramp(expected, 960, channels: 2))
                expected += 960
            }
        }
        #expect(framer.buffered == next - expected && framer.droppedFrames == 0)
    }

    @Test func aShortFrameIsPaddedWithSilence() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        var framer = try AudioFramer(budget: budget, channels: 1, capacityFrames: 1_000)
        ramp(1, 100, channels: 1).withUnsafeBufferPointer { framer.append($0) }
        var frame = [Int16](repeating: 7, count: 960)
        #expect(frame.withUnsafeMutableBufferPointer { framer.takeFrame(into: $0) } == 100)
        #expect(Array(frame[0..<100]) == ramp(1, 100, channels: 1))
        #expect(frame[100...].allSatisfy { $0 == 0 })
        #expect(framer.buffered == 0)
    }

    @Test func overflowDropsTheOldestAndCountsThem() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        var framer = try AudioFramer(budget: budget, channels: 1, capacityFrames: 1_000)
        ramp(0, 900, channels: 1).withUnsafeBufferPointer { framer.append($0) }
        ramp(900, 300, channels: 1).withUnsafeBufferPointer { framer.append($0) }  // wraps the ring
        #expect(framer.buffered == 1_000 && framer.droppedFrames == 200)
        var frame = [Int16](repeating: 0, count: 960)
        _ = frame.withUnsafeMutableBufferPointer { framer.takeFrame(into: $0) }
        #expect(frame == ramp(200, 960, channels: 1))
        ramp(0, 2_500, channels: 1).withUnsafeBufferPointer { framer.append($0) }  // larger than the ring
        #expect(framer.buffered == 1_000 && framer.droppedFrames == 200 + 40 + 1_500)
    }

    @Test func framesAreStampedOnThe48kHzCaptureClock() {
        let origin = MediaTime(microseconds: 5_000_123)
        var clock = AudioFrameClock(origin: origin)
        let ticks = origin.rtpTicks(clockRate: 48_000)
        #expect(ticks == 240_005)
        for k in 0..<100 {
            #expect(clock.nextMediaTimestamp == UInt32(ticks + Int64(k) * 960))
            #expect(clock.nextCaptureTime == origin + .milliseconds(20 * Int64(k)))
            #expect(clock.nextFrameEnd == origin + .milliseconds(20 * Int64(k + 1)))
            clock.advance()
        }
        clock.skip(frames: 3)
        #expect(clock.nextMediaTimestamp == UInt32(ticks + 103 * 960))
    }

    @Test func timestampsWrapModulo2To32() {
        // 2^32 ticks at 48 kHz is about 24.9 hours of monotonic clock.
        var clock = AudioFrameClock(origin: MediaTime(microseconds: (Int64(1) << 32) * 1_000_000 / 48_000 - 10_000))
        let first = clock.nextMediaTimestamp
        clock.advance()
        #expect(clock.nextMediaTimestamp == first &+ 960)
        #expect(clock.nextMediaTimestamp < first)
    }

    @Test func channelsAreMixedUpAndDown() {
        let stereo: [Int16] = [100, 300, -32_768, -32_768, 32_767, 32_767, 1, -2]
        var mono = [Int16](repeating: 0, count: 4)
        let n = stereo.withUnsafeBufferPointer { s in
            mono.withUnsafeMutableBufferPointer { ChannelMix.convert(s, channels: 2, into: $0, channels: 1) }
        }
        #expect(n == 4 && mono == [200, -32_768, 32_767, -1])
        var back = [Int16](repeating: 0, count: 8)
        _ = mono.withUnsafeBufferPointer { m in
            back.withUnsafeMutableBufferPointer { ChannelMix.convert(m, channels: 1, into: $0, channels: 2) }
        }
        #expect(back == [200, 200, -32_768, -32_768, 32_767, 32_767, -1, -1])
    }
}
