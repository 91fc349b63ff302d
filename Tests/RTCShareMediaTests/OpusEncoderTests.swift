import COpus
import Foundation
import RTCShareCore
import Testing
@testable import RTCShareMedia

@Suite struct OpusEncoderTests {
    /// One second of a 440 Hz stereo tone, as interleaved samples.
    private func tone(frequency: Double = 440, seconds: Double = 1) -> [Int16] {
        let n = Int(Double(OpusEncoder.sampleRate) * seconds)
        var out = [Int16](repeating: 0, count: n * 2)
        for i in 0..<n {
            let s = Int16(12_000 * sin(2 * .pi * frequency * Double(i) / Double(OpusEncoder.sampleRate)))
            out[2 * i] = s
            out[2 * i + 1] = s
        }
        return out
    }

    /// Encodes interleaved stereo with the encoder and decodes it with libopus's decoder.
    private func roundTrip(_ pcm: [Int16]) throws -> [Int16] {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let encoder = try OpusEncoder(budget: budget, channels: 2)
        var error: Int32 = 0
        let decoder = try #require(opus_decoder_create(48_000, 2, &error))
        defer { opus_decoder_destroy(decoder) }
        var packet = [UInt8](repeating: 0, count: OpusEncoder.maximumPacketBytes)
        var decoded: [Int16] = []
        var frame = [Int16](repeating: 0, count: OpusEncoder.frameSamples * 2)
        let step = OpusEncoder.frameSamples * 2
        for start in stride(from: 0, through: pcm.count - step, by: step) {
            let n = try pcm[start..<start + step].withUnsafeBufferPointer { input in
                try packet.withUnsafeMutableBytes { try encoder.encode(input, into: $0) }
            }
            #expect(n > 0 && n <= OpusEncoder.maximumPacketBytes)
            let got = frame.withUnsafeMutableBufferPointer { out in
                opus_decode(decoder, packet, Int32(n), out.baseAddress!, Int32(OpusEncoder.frameSamples), 0)
            }
            #expect(got == Int32(OpusEncoder.frameSamples))
            decoded += frame
        }
        return decoded
    }

    /// Frequency of the left channel from its rising zero crossings, skipping the start-up.
    private func frequency(_ pcm: [Int16]) -> Double {
        let left = stride(from: 0, to: pcm.count, by: 2).map { pcm[$0] }
        let body = Array(left.dropFirst(4800))
        var crossings: [Int] = []
        for i in 1..<body.count where body[i - 1] < 0 && body[i] >= 0 { crossings.append(i) }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 2 else { return 0 }
        return Double(crossings.count - 1) * 48_000 / Double(last - first)
    }

    @Test func toneSurvivesEncodeAndDecode() throws {
        let decoded = try roundTrip(tone())
        let f = frequency(decoded)
        #expect(abs(f - 440) / 440 < 0.01, "decoded frequency \(f)")
    }

    @Test func bigEndianInputDecodesToTheSameToneAsLittleEndian() throws {
        let native = tone()
        // The same samples as an app would hand them big-endian, fixed up by PCM.bigEndianToNative.
        var bigEndianBytes = [UInt8]()
        bigEndianBytes.reserveCapacity(native.count * 2)
        for s in native { bigEndianBytes += [UInt8(truncatingIfNeeded: UInt16(bitPattern: s) >> 8), UInt8(truncatingIfNeeded: s)] }
        var fixed = [Int16](repeating: 0, count: native.count)
        bigEndianBytes.withUnsafeBytes { raw in
            fixed.withUnsafeMutableBufferPointer { _ = PCM.bigEndianToNative(raw, into: $0) }
        }
        #expect(fixed == native)
        let fromBig = frequency(try roundTrip(fixed))
        let fromLittle = frequency(try roundTrip(native))
        #expect(abs(fromBig - fromLittle) / fromLittle < 0.01)
        #expect(abs(fromBig - 440) / 440 < 0.01)
    }

    @Test func encoderStateComesFromTheBudget() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let before = budget.stats.inUseBytes
        do {
            let encoder = try OpusEncoder(budget: budget, channels: 2)
            #expect(budget.stats.inUseBytes > before)
            #expect(encoder.lookahead > 0)
        }
        #expect(budget.stats.inUseBytes == before)
    }

    @Test func tooSmallBudgetIsAClearError() throws {
        let budget = try MemoryBudget(capBytes: 4096)
        #expect(throws: MediaError.self) { _ = try OpusEncoder(budget: budget, channels: 2) }
    }

    @Test func wrongFrameLengthIsRefused() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let encoder = try OpusEncoder(budget: budget, channels: 1)
        let short = [Int16](repeating: 0, count: 100)
        var packet = [UInt8](repeating: 0, count: 1500)
        #expect(throws: MediaError.self) {
            _ = try short.withUnsafeBufferPointer { input in
                try packet.withUnsafeMutableBytes { try encoder.encode(input, into: $0) }
            }
        }
    }
}
