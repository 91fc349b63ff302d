import Testing
@testable import RTCShareCore

@Suite struct PCMTests {
    @Test func bigEndianBytesBecomeNativeSamples() {
        let bytes: [UInt8] = [0x12, 0x34, 0xFF, 0xFE, 0x80, 0x00, 0x00, 0x01, 0x7F]  // odd tail ignored
        var out = [Int16](repeating: 0, count: 8)
        let n = bytes.withUnsafeBytes { raw in
            out.withUnsafeMutableBufferPointer { PCM.bigEndianToNative(raw, into: $0) }
        }
        #expect(n == 4)
        #expect(Array(out.prefix(4)) == [0x1234, -2, Int16.min, 1])
    }

    @Test func byteSwapTwiceIsIdentity() {
        let original: [Int16] = (0..<1001).map { Int16(truncatingIfNeeded: $0 &* 7919) }
        var samples = original
        samples.withUnsafeMutableBufferPointer { PCM.byteSwap($0) }
        #expect(samples[1] == Int16(bitPattern: UInt16(bitPattern: original[1]).byteSwapped))
        samples.withUnsafeMutableBufferPointer { PCM.byteSwap($0) }
        #expect(samples == original)
    }

    @Test func interleaveThenDeinterleaveRoundTrips() {
        let left: [Int16] = (0..<480).map { Int16($0) }
        let right: [Int16] = (0..<480).map { Int16(-$0) }
        var both = [Int16](repeating: 0, count: 960)
        left.withUnsafeBufferPointer { l in
            right.withUnsafeBufferPointer { r in
                both.withUnsafeMutableBufferPointer { PCM.interleave(left: l, right: r, into: $0) }
            }
        }
        #expect(Array(both.prefix(4)) == [0, 0, 1, -1])
        var l2 = [Int16](repeating: 0, count: 480), r2 = l2
        both.withUnsafeBufferPointer { b in
            l2.withUnsafeMutableBufferPointer { l in
                r2.withUnsafeMutableBufferPointer { r in PCM.deinterleave(b, left: l, right: r) }
            }
        }
        #expect(l2 == left && r2 == right)
    }
}
