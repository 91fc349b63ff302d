import RTCShare

/// `--audio-output FILE.wav`: decoded audio as 48 kHz PCM s16le WAV; the RIFF and data sizes
/// are patched in at `close`.
final class WAVFileWriter {
    private let file: ReceiveOutputFile
    let channels: Int
    private var dataBytes = 0

    init(path: String, channels: Int) throws(ShareError) {
        file = try ReceiveOutputFile(path: path)
        self.channels = channels
        try writeHeader(at: nil)
    }

    private func writeHeader(at offset: Int?) throws(ShareError) {
        let rate = 48_000
        var h = [UInt8]()
        h.reserveCapacity(44)
        func u32(_ v: Int) { for k in 0..<4 { h.append(UInt8(truncatingIfNeeded: v >> (8 * k))) } }
        func u16(_ v: Int) { for k in 0..<2 { h.append(UInt8(truncatingIfNeeded: v >> (8 * k))) } }
        h += Array("RIFF".utf8); u32(36 + dataBytes); h += Array("WAVE".utf8)
        h += Array("fmt ".utf8); u32(16); u16(1); u16(channels); u32(rate)
        u32(rate * channels * 2); u16(channels * 2); u16(16)
        h += Array("data".utf8); u32(dataBytes)
        let result: Result<Void, ShareError> = h.withUnsafeBytes { raw in
            do throws(ShareError) { try file.write(raw, at: offset); return .success(()) } catch { return .failure(error) }
        }
        try result.get()
    }

    /// Appends interleaved samples (host order is little-endian on every target we build for).
    func append(_ samples: UnsafeBufferPointer<Int16>) throws(ShareError) {
        try file.write(UnsafeRawBufferPointer(samples))
        dataBytes += samples.count * 2
    }

    func close() throws(ShareError) {
        try writeHeader(at: 0)
        try file.close()
    }
}
