import TestSupport
import Testing
import RTCShareCore
@testable import RTCShareMedia

@Suite struct WAVReaderTests {
    // MARK: building files

    private static func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
    private static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
    private static func be32(_ v: Int) -> [UInt8] { le32(v).reversed() }
    private static func be16(_ v: Int) -> [UInt8] { le16(v).reversed() }

    /// A canonical RIFF file: header, fmt, a LIST chunk to skip (odd size, padded), data.
    static func riff(rate: Int = 16_000, channels: Int = 1, samples: [Int16]) -> [UInt8] {
        let data = samples.flatMap { le16(Int(UInt16(bitPattern: $0))) }
        var f: [UInt8] = Array("RIFF".utf8) + le32(0) + Array("WAVE".utf8)  // size 0: not trusted
        f += Array("fmt ".utf8) + le32(16)
        f += le16(1)                              // format tag: PCM
        f += le16(channels)                       // channels
        f += le32(rate)                           // sample rate
        f += le32(rate * channels * 2)            // bytes per second
        f += le16(channels * 2)                   // block align
        f += le16(16)                             // bits per sample
        f += Array("LIST".utf8) + le32(5) + Array("INFOx".utf8) + [0]  // 5 bytes + pad byte
        f += Array("data".utf8) + le32(data.count) + data
        return f
    }

    /// The same as big-endian RIFX, stereo.
    static func rifx(rate: Int = 44_100, samples: [Int16]) -> [UInt8] {
        let data = samples.flatMap { be16(Int(UInt16(bitPattern: $0))) }
        var f: [UInt8] = Array("RIFX".utf8) + be32(36 + data.count) + Array("WAVE".utf8)
        f += Array("fmt ".utf8) + be32(16) + be16(1) + be16(2) + be32(rate) + be32(rate * 4) + be16(4) + be16(16)
        f += Array("data".utf8) + be32(data.count) + data
        return f
    }

    private func readAll(_ bytes: [UInt8], maximumRead: Int = .max, chunk: Int = 64) throws(MediaError) -> (WAVFormat, [Int16]) {
        var reader = try WAVReader(source: MemoryByteSource(bytes, maximumRead: maximumRead))
        var out: [Int16] = []
        var buffer = [Int16](repeating: 0, count: chunk)
        while true {
            // The error comes out by hand: Swift 6.0's withUnsafeMutableBufferPointer rethrows `any Error`.
            var n = 0
            var failure: MediaError?
            buffer.withUnsafeMutableBufferPointer { b in
                do throws(MediaError) { n = try reader.read(into: b) } catch { failure = error }
            }
            if let failure { throw failure }
            if n == 0 { break }
            #expect(n % reader.format.channels == 0)
            out += buffer[0..<n]
        }
        return (reader.format, out)
    }

    // MARK: good files

    @Test func aRIFFFileReadsWithOtherChunksSkipped() throws {
        let samples: [Int16] = [0, 1, -1, 32_767, -32_768, 0x1234]
        let (format, got) = try readAll(Self.riff(samples: samples))
        #expect(format == WAVFormat(sampleRate: 16_000, channels: 1, bigEndian: false, dataBytes: 12))
        #expect(got == samples)
    }

    @Test func aBigEndianRIFXFileReadsToNativeSamples() throws {
        let samples: [Int16] = [0x0102, -2, 300, -300, 7, 8]
        let (format, got) = try readAll(Self.rifx(samples: samples))
        #expect(format == WAVFormat(sampleRate: 44_100, channels: 2, bigEndian: true, dataBytes: 12))
        #expect(got == samples)
    }

    @Test func oneByteReadsAndSmallBuffersGiveTheSameSamples() throws {
        let samples = (0..<1_001).map { Int16(truncatingIfNeeded: $0 * 77) }
        let (_, got) = try readAll(Self.riff(samples: samples), maximumRead: 1, chunk: 3)
        #expect(got == samples)
        let stereo = Array(samples[0..<1_000])
        let (_, gotStereo) = try readAll(Self.rifx(samples: stereo), maximumRead: 7, chunk: 5)  // 5 → 4: whole frames
        #expect(gotStereo == stereo)
    }

    @Test func aTruncatedDataChunkEndsTheAudioAtTheLastWholeFrame() throws {
        let file = Self.rifx(samples: [1, 2, 3, 4, 5, 6])
        let (_, got) = try readAll(Array(file.dropLast(3)))  // half of frame 3 missing
        #expect(got == [1, 2, 3, 4])
    }

    @Test func anExtensiblePCMFormatIsAccepted() throws {
        var f: [UInt8] = Array("RIFF".utf8) + Self.le32(0) + Array("WAVE".utf8)
        f += Array("fmt ".utf8) + Self.le32(40) + Self.le16(0xFFFE) + Self.le16(2) + Self.le32(48_000)
        f += Self.le32(192_000) + Self.le16(4) + Self.le16(16)
        f += Self.le16(22) + Self.le16(16) + Self.le32(3)                      // cbSize, valid bits, mask
        f += [1, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71]  // KSDATAFORMAT_SUBTYPE_PCM
        f += Array("data".utf8) + Self.le32(0xFFFF_FFFF) + Self.le16(5) + Self.le16(6)  // length unknown
        let (format, got) = try readAll(f)
        #expect(format.channels == 2 && format.sampleRate == 48_000 && format.dataBytes == nil)
        #expect(got == [5, 6])
    }

    // MARK: bad files: one clear error each

    private func error(_ bytes: [UInt8]) -> String {
        do { _ = try readAll(bytes); return "no error" } catch { return error.description }
    }

    private func patched(_ file: [UInt8], at offset: Int, _ bytes: [UInt8]) -> [UInt8] {
        var f = file
        f.replaceSubrange(offset..<offset + bytes.count, with: bytes)
        return f
    }

    @Test func badFilesAreOneClearError() {
        let good = Self.riff(samples: [1, 2, 3])
        #expect(error([]).contains("shorter than its 12-byte RIFF header"))
        #expect(error(Array("RIFF\0\0\0\0AVI ".utf8)).contains("no RIFF/RIFX ... WAVE header"))
        #expect(error(Array("hello, world! this is text".utf8)).contains("not a WAV file"))
        #expect(error(Array(good[0..<12])).contains("no fmt chunk"))
        #expect(error(Array(good[0..<30])).contains("ends inside its fmt chunk"))
        #expect(error(Array(good[0..<36])).contains("no data chunk"))
        #expect(error(Array(good[0..<46])).contains("ends inside its 'LIST' chunk"))
        #expect(error(patched(good, at: 20, Self.le16(3))).contains("format 3 is not PCM"))     // IEEE float
        #expect(error(patched(good, at: 22, Self.le16(6))).contains("6 channels"))
        #expect(error(patched(good, at: 24, Self.le32(4_000))).contains("4000 Hz is outside"))
        #expect(error(patched(good, at: 34, Self.le16(24))).contains("24-bit"))
        #expect(error(patched(good, at: 28, Self.le32(1))).contains("inconsistent"))
        #expect(error(patched(good, at: 16, Self.le32(8))).contains("fmt chunk of 8 bytes"))
        #expect(error(patched(good, at: 16, Self.le32(0xFFFF_FFF0))).contains("fmt chunk of"))
        #expect(error(patched(good, at: 12, Array("data".utf8))).contains("data chunk comes before the fmt chunk"))
        #expect(error(patched(good, at: good.count - 10, Self.le32(1))).contains("holds no samples"))
        let twoFormats = Array(good[0..<36]) + Array(good[12..<36]) + Array(good[36...])
        #expect(error(twoFormats).contains("two fmt chunks"))
        var many: [UInt8] = Array(good[0..<36])
        for _ in 0...WAVReader<MemoryByteSource>.maximumChunks { many += Array("junk".utf8) + Self.le32(0) }
        #expect(error(many).contains("more than"))
    }

    // MARK: fuzz: untrusted bytes never trap

    @Test func randomBytesNeverTrap() {
        var rng = SeededRandom(seed: 0x5EED)
        for _ in 0..<3_000 {
            let n = Int(rng.next() % 200)
            var bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if rng.next() % 2 == 0, n >= 12 {  // often a plausible start, to get further in
                bytes.replaceSubrange(0..<4, with: Array((rng.next() % 2 == 0 ? "RIFF" : "RIFX").utf8))
                bytes.replaceSubrange(8..<12, with: Array("WAVE".utf8))
            }
            _ = try? readAll(bytes, maximumRead: Int(rng.next() % 17) + 1, chunk: Int(rng.next() % 9) + 1)
        }
    }

    @Test func mutatedGoodFilesNeverTrap() {
        var rng = SeededRandom(seed: 42)
        let seeds = [Self.riff(samples: (0..<50).map { Int16($0) }), Self.rifx(samples: (0..<50).map { Int16(-$0) })]
        var readable = 0
        for i in 0..<5_000 {
            var bytes = seeds[i % 2]
            for _ in 0...(rng.next() % 4) {
                let at = Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 4 {
                case 0: bytes[at] = UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes[at] ^= 1 << UInt8(rng.next() % 8)
                case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int(rng.next() % 8)))
                default: bytes.insert(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF], at: at)
                }
                if bytes.isEmpty { break }
            }
            if (try? readAll(bytes, maximumRead: 5)) != nil { readable += 1 }
        }
        #expect(readable > 0)  // the mutations leave some files valid: the good path is fuzzed too
    }
}
