import COpus
import Foundation
import RTCShareCore
import Testing
@testable import RTCShareMedia

/// Opus in-band FEC on the receive side, with the real libopus: which packets carry LBRR data,
/// and whether rebuilding a lost packet from the next one beats concealing it, measured as the
/// error against the packet decoded as sent.
@Suite struct OpusRedundancyTests {
    /// `seconds` of a tone with a slow vibrato (so concealment cannot simply repeat), stereo.
    static func tone(seconds: Double = 2) -> [Int16] {
        let n = Int(48_000 * seconds)
        var out = [Int16](repeating: 0, count: n * 2)
        for i in 0..<n {
            let t = Double(i) / 48_000
            let s = Int16(9_000 * sin(2 * .pi * (300 * t + 20 * sin(2 * .pi * 3 * t))))
            out[2 * i] = s
            out[2 * i + 1] = s
        }
        return out
    }

    static func encode(_ pcm: [Int16], bitrate: Int, application: OpusEncoder.Application) throws -> [[UInt8]] {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let encoder = try OpusEncoder(budget: budget, channels: 2, bitrate: bitrate, application: application)
        var packets: [[UInt8]] = []
        var packet = [UInt8](repeating: 0, count: OpusEncoder.maximumPacketBytes)
        let step = OpusEncoder.frameSamples * 2
        for start in stride(from: 0, through: pcm.count - step, by: step) {
            let n = try pcm[start..<start + step].withUnsafeBufferPointer { input in
                try packet.withUnsafeMutableBytes { try encoder.encode(input, into: $0) }
            }
            packets.append(Array(packet[0..<n]))
        }
        return packets
    }

    static func carries(_ p: [UInt8]) -> Bool {
        p.withUnsafeBufferPointer { OpusDecoder.carriesRedundancy($0.baseAddress!, count: p.count) }
    }

    /// Decodes `packets` with every `lost` one missing, rebuilt from FEC (or concealed when
    /// `useFEC` is false or the next packet has none); returns the squared error of the lost
    /// packets' samples against a decode with no loss.
    static func errorOfLost(_ packets: [[UInt8]], lost: Set<Int>, useFEC: Bool) throws -> Double {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let clean = try OpusDecoder(budget: budget, channels: 2)
        let lossy = try OpusDecoder(budget: budget, channels: 2)
        var a = [Int16](repeating: 0, count: OpusDecoder.maximumFrameSamples * 2)
        var b = a
        var error = 0.0
        for (i, p) in packets.enumerated() {
            let n = try p.withUnsafeBytes { raw in try a.withUnsafeMutableBufferPointer { try clean.decode(raw, into: $0) } }
            if lost.contains(i) {
                let next = packets[i + 1]
                let m = try next.withUnsafeBytes { raw -> Int in
                    try b.withUnsafeMutableBufferPointer { out in
                        if useFEC, let m = lossy.decodeRedundancy(in: raw, samples: 960, into: out) { return m }
                        return try lossy.decode(nil, into: out)
                    }
                }
                #expect(m == n)
                for j in 0..<(n * 2) { error += pow(Double(a[j]) - Double(b[j]), 2) }
            } else {
                _ = try p.withUnsafeBytes { raw in try b.withUnsafeMutableBufferPointer { try lossy.decode(raw, into: $0) } }
            }
        }
        return error
    }

    @Test func hybridVoicePacketsCarryFECAndRebuildingBeatsConcealment() throws {
        // VoIP mode at 40 kbit/s stereo codes hybrid (SILK + CELT) frames, and libopus (5 %
        // expected loss) adds LBRR to most of them; below ~40 kbit/s it leaves it out.
        let packets = try Self.encode(Self.tone(), bitrate: 40_000, application: .voice)
        let carrying = packets.filter(Self.carries).count
        #expect(carrying * 10 >= packets.count * 6, "\(carrying) of \(packets.count) carry LBRR")
        let lost = Set(stride(from: 10, to: packets.count - 1, by: 7).filter { Self.carries(packets[$0 + 1]) })
        let withFEC = try Self.errorOfLost(packets, lost: lost, useFEC: true)
        let concealed = try Self.errorOfLost(packets, lost: lost, useFEC: false)
        print("OpusRedundancyTests 40 kbit/s voice: \(carrying)/\(packets.count) carry FEC; error of \(lost.count) lost packets: FEC \(Int(withFEC / 1e6))e6, concealed \(Int(concealed / 1e6))e6")
        #expect(withFEC * 2 < concealed)
    }

    @Test func theSharesDefaultMusicModeAt64kbitsCarriesNone() throws {
        // rtcshare's audio: application .audio at 64 kbit/s, which Opus codes as CELT: no
        // LBRR, so the receiver conceals (the encoder's FEC setting does not apply there).
        let packets = try Self.encode(Self.tone(), bitrate: 64_000, application: .audio)
        let carrying = packets.filter(Self.carries).count
        let celt = packets.filter { $0[0] >> 3 >= 16 }.count
        print("OpusRedundancyTests 64 kbit/s audio: \(carrying)/\(packets.count) carry FEC, \(celt) CELT-only")
        #expect(carrying == 0 && celt == packets.count)
    }
}
