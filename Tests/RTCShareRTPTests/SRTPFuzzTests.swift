import TestSupport
import Testing
@testable import RTCShareRTP

/// Random and mutated input into SRTP/SRTCP unprotect: an error or a packet, never a trap.
@Suite struct SRTPFuzzTests {
    @Test(arguments: SRTPProfile.allCases)
    func unprotectNeverTraps(profile: SRTPProfile) throws {
        var rng = SeededRandom(seed: profile == .aeadAES128GCM ? 77 : 78)
        let key = SRTPMasterKey.generate(profile: profile, using: &rng)
        var sender = try SRTPContext(key: key, direction: .sender)
        var receiver = try SRTPContext(key: key, direction: .receiver)
        var accepted = 0
        for i in 0..<3_000 {
            let plain = plainRTPPacket(seq: UInt16(truncatingIfNeeded: i), payload: (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            var bytes = try srtpInPlace(plain) { b, n throws(RTPError) in try sender.protectRTP(b, length: n) }
            var rtcp = try srtpInPlace(RTCPReceiverReport(ssrc: 1).serialized()) { b, n throws(RTPError) in try sender.protectRTCP(b, length: n) }
            switch i % 4 {
            case 0:
                bytes = (0..<Int.random(in: 0..<100, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                rtcp = bytes
            case 1:
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                rtcp[Int.random(in: 0..<rtcp.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            case 2:
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &rng))
                rtcp.removeLast(Int.random(in: 1...rtcp.count, using: &rng))
            default:
                bytes[0] = UInt8.random(in: 0...255, using: &rng)  // header flags: CSRC count, extension
            }
            if (try? srtpInPlace(bytes) { b, n throws(RTPError) in try receiver.unprotectRTP(b, length: n) }) != nil { accepted += 1 }
            _ = try? srtpInPlace(rtcp) { b, n throws(RTPError) in try receiver.unprotectRTCP(b, length: n) }
        }
        #expect(accepted < 10, "a mutated packet should almost never authenticate (\(accepted))")
    }
}
