import Foundation
import CSpeexDSP
import Glibc
import RTCShareCore
import Testing
@testable import RTCShareMedia

@Suite struct ResamplerTests {
    private func sine(_ hz: Double, rate: Int, seconds: Double, channels: Int) -> [Int16] {
        let n = Int(Double(rate) * seconds)
        var out = [Int16](repeating: 0, count: n * channels)
        for i in 0..<n {
            let s = Int16(10_000 * sin(2 * .pi * hz * Double(i) / Double(rate)))
            for c in 0..<channels { out[i * channels + c] = s }
        }
        return out
    }

    /// Runs all of `input` through `resampler` in uneven pieces, as the pipeline does.
    private func run(_ resampler: inout Resampler, _ input: [Int16], channels: Int) -> [Int16] {
        var output: [Int16] = []
        var out = [Int16](repeating: 0, count: 777 * channels)
        var offset = 0
        input.withUnsafeBufferPointer { all in
            while offset < all.count {
                let piece = min(313 * channels, all.count - offset)
                var used = 0
                while used < piece {
                    let (c, p) = out.withUnsafeMutableBufferPointer { o in
                        resampler.process(UnsafeBufferPointer(rebasing: all[offset + used..<offset + piece]), into: o)
                    }
                    output += out[0..<p * channels]
                    used += c * channels
                    if c == 0 && p == 0 { break }
                }
                offset += piece
            }
        }
        return output
    }

    @Test(arguments: [(44_100, 1_000.0, 2), (16_000, 440.0, 1), (8_000, 997.0, 2), (22_050, 3_000.0, 1)])
    func aSineKeepsItsFrequencyAt48kHz(rate: Int, hz: Double, channels: Int) throws {
        var resampler = try Resampler(inputRate: rate, channels: channels)
        let passthrough = resampler.isPassthrough
        #expect(!passthrough)
        let output = run(&resampler, sine(hz, rate: rate, seconds: 1, channels: channels), channels: channels)
        // One second in is about one second out (less the filter's tail still inside it).
        #expect(abs(output.count / channels - 48_000) < 200, "\(output.count / channels) frames out")
        let left = stride(from: 0, to: output.count, by: channels).map { output[$0] }
        let measured = try #require(ToneMeter.frequency(left, sampleRate: 48_000))
        #expect(abs(measured - hz) / hz < 0.001, "measured \(measured) Hz for \(hz) Hz")
        if channels == 2 {
            #expect(stride(from: 0, to: output.count, by: 2).allSatisfy { output[$0] == output[$0 + 1] })
        }
    }

    @Test func fortyEightKilohertzIsCopiedUnchanged() throws {
        var resampler = try Resampler(inputRate: 48_000, channels: 2)
        let passthrough = resampler.isPassthrough
        #expect(passthrough)
        let input = sine(440, rate: 48_000, seconds: 0.1, channels: 2)
        #expect(run(&resampler, input, channels: 2) == input)
    }

    @Test func aRateChangeSwitchesTheFilter() throws {
        var resampler = try Resampler(inputRate: 48_000, channels: 1)
        try resampler.setInputRate(16_000)
        let (p1, rate1) = (resampler.isPassthrough, resampler.inputRate)
        #expect(!p1 && rate1 == 16_000)
        let output = run(&resampler, sine(500, rate: 16_000, seconds: 0.5, channels: 1), channels: 1)
        let measured = try #require(ToneMeter.frequency(output, sampleRate: 48_000))
        #expect(abs(measured - 500) / 500 < 0.002)
        try resampler.setInputRate(48_000)
        let p2 = resampler.isPassthrough
        #expect(p2)
        var failed = false
        do { try resampler.setInputRate(4_000) } catch { failed = true }
        #expect(failed)
    }

    @Test func badArgumentsAreErrors() {
        #expect(throws: MediaError.self) { _ = try Resampler(inputRate: 7_999, channels: 1) }
        #expect(throws: MediaError.self) { _ = try Resampler(inputRate: 44_100, channels: 3) }
        #expect(throws: MediaError.self) { _ = try Resampler(inputRate: 44_100, channels: 2, quality: 11) }
    }

    /// libspeexdsp mallocs its state; the plan reserves `plannedHeapBytes` for it. Measured
    /// here with glibc's allocator statistics, for every common rate and the extremes.
    @Test func libspeexdspStateFitsWhatThePlanReserves() throws {
        var largest = 0
        for rate in [8_000, 11_025, 16_000, 22_050, 24_000, 32_000, 44_100, 88_200, 96_000, 192_000] {
            // malloc's count is the whole process's, and other tests run beside this one: the
            // least of a few tries is the resampler's own (others' allocations only add).
            var used = Int.max
            for _ in 0..<5 {
                let before = mallinfo2().uordblks
                let resampler = try Resampler(inputRate: rate, channels: 2)
                used = min(used, Int(mallinfo2().uordblks) - Int(before))
                _ = consume resampler
            }
            largest = max(largest, used)
            #expect(used <= Resampler.plannedHeapBytes, "\(rate) Hz: \(used) bytes")
        }
        print("libspeexdsp resampler state, stereo, quality \(Resampler.defaultQuality): at most \(largest) bytes")
    }
}
