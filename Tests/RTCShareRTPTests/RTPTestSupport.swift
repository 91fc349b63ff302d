@testable import RTCShareRTP
import TestSupport

extension SeededRandom {
    /// 1...4 random edits: byte flips, edge values, truncation, extension (the RTP fuzz tests'
    /// mutations, tuned to the RTP/RTCP header fields).
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
