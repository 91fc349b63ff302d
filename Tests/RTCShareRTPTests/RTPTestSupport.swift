@testable import RTCShareRTP

/// A seeded generator for the RTP byte-layer tests, so a failure reproduces (SplitMix64).
struct RTPTestRNG: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }

    /// 1...4 random edits: byte flips, edge values, truncation, extension.
    mutating func mutate(_ input: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &self) {
            switch Int.random(in: 0..<5, using: &self) {
            case 0, 1:
                if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &self)] = UInt8.random(in: 0...255, using: &self) }
            case 2:
                if !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &self)] = [0, 1, 0x0F, 0x10, 0x7F, 0x80, 0xBE, 0xDE, 0xFF].randomElement(using: &self)!
                }
            case 3:
                bytes.removeLast(Int.random(in: 0...min(bytes.count, 8), using: &self))
            default:
                bytes += self.bytes(Int.random(in: 1...8, using: &self))
            }
        }
        return bytes
    }
}

/// Writes with a writer that takes a raw buffer, into a new array of `capacity` bytes, and
/// returns the bytes written.
func written(capacity: Int = 2048,
             _ body: (UnsafeMutableRawBufferPointer) throws -> Int) throws -> [UInt8] {
    var out = [UInt8](repeating: 0, count: capacity)
    let n = try out.withUnsafeMutableBytes { (raw) throws -> Int in try body(raw) }
    return Array(out[..<n])
}

func parseRTP(_ bytes: [UInt8]) throws -> RTPParsedPacket {
    try bytes.withUnsafeBytes { (raw) throws in try RTPHeader.parse(raw) }
}
