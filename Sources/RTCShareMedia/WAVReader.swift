import RTCShareCore

/// What a WAV file holds, from its `fmt ` and `data` chunks.
public struct WAVFormat: Equatable, Sendable {
    public var sampleRate: Int
    /// 1 or 2, interleaved.
    public var channels: Int
    /// RIFX: samples (and every header field) are big-endian.
    public var bigEndian: Bool
    /// Bytes of samples the `data` chunk declares; nil when it says "unknown" (0xFFFFFFFF, as
    /// streaming writers do), and then the samples run to the end of the file.
    public var dataBytes: Int?
}

/// Reads 16-bit PCM from a RIFF/WAVE file (little-endian) or its big-endian twin RIFX, as it
/// streams through a `ByteSource` — the file is never held whole: the header is parsed from
/// small reads, then samples go straight into the caller's buffer.
///
/// ```
/// RIFF header (12)      chunk (8 + size, padded to even)     fmt  body (16, or 40 extensible)
///  0 "RIFF" | "RIFX"     0 id (4 ASCII)                       0 format tag: 1 PCM, 0xFFFE ext.
///  4 size (u32)          4 size (u32)                         2 channels  4 sample rate
///  8 "WAVE"              8 body                               8 bytes/s  12 block align
///                                                            14 bits/sample (16)
///                                                            extensible: 24 subformat GUID
///                                                            (first two bytes 1: PCM)
/// ```
///
/// The input is untrusted: every length is checked before use, and anything that is not
/// 16-bit mono/stereo PCM at a rate in `Resampler.inputRates` is one `.malformedInput` error
/// naming what was wrong. Chunks other than `fmt ` and `data` (LIST, fact, cue …) are skipped.
/// The RIFF size field is not trusted (writers of live recordings leave it 0 or wrong); a
/// `data` chunk that ends early just ends the audio.
public struct WAVReader<Source: ByteSource> {
    public let format: WAVFormat
    private let source: Source
    /// Sample bytes still to read (Int.max when the length is unknown).
    private var remaining: Int
    private let frameBytes: Int

    /// Chunks before `data` beyond this are refused (a file of nothing but tiny chunks).
    static var maximumChunks: Int { 1024 }
    /// Largest `fmt ` body read (WAVE_FORMAT_EXTENSIBLE is 40 bytes).
    static var maximumFormatBytes: Int { 256 }

    /// Reads the header up to the first sample. Throws `.malformedInput` for anything that is
    /// not a supported WAV file, or the source's error.
    public init(source: Source) throws(MediaError) {
        self.source = source
        var head = [UInt8](repeating: 0, count: 12)
        guard try Self.fill(&head, count: 12, from: source) == 12 else {
            throw .malformedInput("not a WAV file: shorter than its 12-byte RIFF header")
        }
        let riff = head[0..<4].elementsEqual("RIFF".utf8), rifx = head[0..<4].elementsEqual("RIFX".utf8)
        guard riff || rifx, head[8..<12].elementsEqual("WAVE".utf8) else {
            throw .malformedInput("not a WAV file: no RIFF/RIFX ... WAVE header")
        }
        let big = rifx
        var format: WAVFormat?
        var chunk = [UInt8](repeating: 0, count: Self.maximumFormatBytes)
        for _ in 0..<Self.maximumChunks {
            guard try Self.fill(&head, count: 8, from: source) == 8 else {
                throw .malformedInput(format == nil ? "WAV file has no fmt chunk" : "WAV file has no data chunk")
            }
            let id = Self.name(head[0..<4])
            let size = Int(Self.u32(head, 4, big))
            switch id {
            case "fmt ":
                guard format == nil else { throw .malformedInput("WAV file has two fmt chunks") }
                guard size >= 16, size <= Self.maximumFormatBytes else {
                    throw .malformedInput("WAV fmt chunk of \(size) bytes (16...\(Self.maximumFormatBytes) expected)")
                }
                guard try Self.fill(&chunk, count: size, from: source) == size else {
                    throw .malformedInput("WAV file ends inside its fmt chunk")
                }
                format = try Self.parseFormat(chunk, size: size, bigEndian: big)
                if size % 2 == 1 { try Self.skip(1, from: source, inside: "fmt ") }
            case "data":
                guard var f = format else { throw .malformedInput("WAV data chunk comes before the fmt chunk") }
                let unknown = size == 0xFFFF_FFFF
                guard unknown || size >= f.channels * 2 else {
                    throw .malformedInput("WAV data chunk holds no samples (\(size) bytes)")
                }
                f.dataBytes = unknown ? nil : size
                self.format = f
                self.remaining = unknown ? .max : size
                self.frameBytes = f.channels * 2
                return
            default:
                try Self.skip(size + size % 2, from: source, inside: id)
            }
        }
        throw .malformedInput("WAV file has more than \(Self.maximumChunks) chunks before its data")
    }

    /// Reads the next whole frames into `samples` (interleaved, native byte order, as many as
    /// fit); returns the number of samples written (a multiple of `channels`), 0 at the end.
    public mutating func read(into samples: UnsafeMutableBufferPointer<Int16>) throws(MediaError) -> Int {
        let wanted = min(samples.count / format.channels * frameBytes, remaining)
        guard wanted >= frameBytes, let base = samples.baseAddress else { return 0 }
        let raw = UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(base), count: wanted)
        var got = 0
        while got < wanted {
            let n = try Self.read(from: source, into: UnsafeMutableRawBufferPointer(rebasing: raw[got..<wanted]))
            if n <= 0 { break }
            got += min(n, wanted - got)
        }
        remaining = got < wanted ? 0 : remaining - got  // a short read is the end of the file
        let count = got / frameBytes * format.channels
        let fileIsBig = format.bigEndian
        #if _endian(big)
        let swap = !fileIsBig
        #else
        let swap = fileIsBig
        #endif
        if swap { PCM.byteSwap(UnsafeMutableBufferPointer(start: base, count: count)) }
        return count
    }

    // MARK: header helpers (start-up only)

    private static func parseFormat(_ b: [UInt8], size: Int, bigEndian big: Bool) throws(MediaError) -> WAVFormat {
        let tag = u16(b, 0, big), channels = Int(u16(b, 2, big)), rate = Int(u32(b, 4, big))
        let byteRate = Int(u32(b, 8, big)), blockAlign = Int(u16(b, 12, big)), bits = Int(u16(b, 14, big))
        var isPCM = tag == 1
        if tag == 0xFFFE {
            // WAVE_FORMAT_EXTENSIBLE: the real format is the subformat GUID's first field.
            guard size >= 40, u16(b, 16, big) >= 22 else {
                throw .malformedInput("WAV extensible fmt chunk too short (\(size) bytes)")
            }
            isPCM = u16(b, 24, big) == 1
        }
        guard isPCM else {
            throw .malformedInput("WAV format \(tag) is not PCM; only 16-bit PCM is supported")
        }
        guard bits == 16 else {
            throw .malformedInput("WAV has \(bits)-bit samples; only 16-bit PCM is supported")
        }
        guard channels == 1 || channels == 2 else {
            throw .malformedInput("WAV has \(channels) channels; only mono and stereo are supported")
        }
        guard Resampler.inputRates.contains(rate) else {
            throw .malformedInput("WAV sample rate \(rate) Hz is outside \(Resampler.inputRates.lowerBound)...\(Resampler.inputRates.upperBound)")
        }
        guard blockAlign == channels * 2, byteRate == rate * blockAlign else {
            throw .malformedInput("WAV fmt chunk is inconsistent (block align \(blockAlign), \(byteRate) bytes/s for \(channels) x 16 bit at \(rate) Hz)")
        }
        return WAVFormat(sampleRate: rate, channels: channels, bigEndian: big, dataBytes: nil)
    }

    /// One read from the source, its failure said as this reader's error (a file read error
    /// names the path and the OS's reason, as every file error of the media layer does).
    private static func read(from source: Source, into buffer: UnsafeMutableRawBufferPointer) throws(MediaError) -> Int {
        do {
            return try source.readBytes(into: buffer)
        } catch {
            switch error {
            case .readFailed(let path, let errno): throw .file(path: path, operation: .read, errno: errno)
            default: throw .malformedInput("WAV file could not be read: \(error)")
            }
        }
    }

    /// Reads up to `count` bytes into the start of `buffer`; returns how many came.
    private static func fill(_ buffer: inout [UInt8], count: Int, from source: Source) throws(MediaError) -> Int {
        var got = 0
        while got < count {
            let n = try buffer.withUnsafeMutableBytes { raw -> Result<Int, MediaError> in
                do throws(MediaError) {
                    return .success(try read(from: source, into: UnsafeMutableRawBufferPointer(rebasing: raw[got..<count])))
                } catch {
                    return .failure(error)
                }
            }.get()
            if n <= 0 { break }
            got += min(n, count - got)
        }
        return got
    }

    /// Reads and drops `count` bytes of a chunk being skipped.
    private static func skip(_ count: Int, from source: Source, inside id: String) throws(MediaError) {
        var left = count
        var scratch = [UInt8](repeating: 0, count: min(count, 4096))
        while left > 0 {
            let n = try fill(&scratch, count: min(left, scratch.count), from: source)
            if n == 0 { throw .malformedInput("WAV file ends inside its '\(id)' chunk") }
            left -= n
        }
    }

    private static func u16(_ b: [UInt8], _ at: Int, _ big: Bool) -> UInt16 {
        big ? UInt16(b[at]) << 8 | UInt16(b[at + 1]) : UInt16(b[at + 1]) << 8 | UInt16(b[at])
    }

    private static func u32(_ b: [UInt8], _ at: Int, _ big: Bool) -> UInt32 {
        big ? UInt32(u16(b, at, true)) << 16 | UInt32(u16(b, at + 2, true))
            : UInt32(u16(b, at + 2, false)) << 16 | UInt32(u16(b, at, false))
    }

    /// A chunk id for messages: its four characters, or hex if they are not printable.
    private static func name(_ id: ArraySlice<UInt8>) -> String {
        if id.allSatisfy({ (0x20...0x7E).contains($0) }) { return String(decoding: id, as: UTF8.self) }
        return "0x" + id.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
