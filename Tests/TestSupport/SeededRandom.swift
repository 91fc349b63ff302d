import RTCShareCore

/// The tests' one seeded generator (the core's SplitMix64): every simulation, fuzz loop and
/// random input in the suite draws from it, so a failure replays from its seed and a seed's
/// counters stay the same from run to run.
public typealias SeededRandom = SplitMix64

extension SplitMix64 {
    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}
