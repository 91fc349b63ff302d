import Glibc
import RTCShareCore
import RTCShareIO
import RTCShareMedia

/// `--audio wav:PATH`: a 16-bit PCM WAV (or RIFX) file played at real-time pace — at each
/// `capture(until:)` the samples due since the start, read through one small buffer (the file
/// is never loaded whole). At the end of the file the input ends; the share goes on.
public final class WAVAudioInput: AudioInput {
    public let name: String
    public let nominalSampleRate: Int
    public let encoderChannels: Int
    public let isLive = false
    public let format: WAVFormat
    private var reader: WAVReader<FileInput>
    private let scratch: BudgetBlock
    private let chunkFrames: Int
    private var start: MediaTime?
    private var delivered: Int64 = 0

    /// Bytes of FileInput's read buffer (on the heap, allocated when the file opens).
    public static let readBufferBytes = 16 << 10
    /// Frames read per delivery: 10 ms at the highest rate accepted.
    static let chunkSamples = 2 * 1_920
    static var budgetBytes: Int { chunkSamples * 2 }

    /// Opens `path` and reads its header. Throws `.invalidConfiguration` with one line naming
    /// the file and what is wrong with it.
    public init(path: String, budget: MemoryBudget) throws(ShareError) {
        do {
            let file = try FileInput(path: path, bufferBytes: Self.readBufferBytes)
            reader = try WAVReader(source: file)
        } catch let error as FileInputError {
            let reason = error.errno == 0 ? error.what : "\(error.what): \(String(cString: strerror(error.errno)))"
            throw .invalidConfiguration("--audio wav:\(path): \(reason)")
        } catch {
            throw .invalidConfiguration("--audio wav:\(path): \(error)")
        }
        format = reader.format
        nominalSampleRate = format.sampleRate
        encoderChannels = format.channels
        chunkFrames = Self.chunkSamples / format.channels
        do {
            scratch = try BudgetBlock(budget: budget, byteCount: Self.budgetBytes, alignment: 16)
        } catch {
            throw .doesNotFit("audio file buffer: \(error)")
        }
        name = "wav:\(path) (\(format.sampleRate) Hz, \(format.channels == 1 ? "mono" : "stereo")\(format.bigEndian ? ", big-endian" : ""))"
    }

    public func capture(until now: MediaTime, _ deliver: (AudioSamples) -> Void) throws(ShareError) -> Bool {
        let origin = start ?? now
        start = origin
        let rate = Int64(nominalSampleRate), channels = format.channels
        let due = (now - origin).microseconds * rate / 1_000_000
        let buffer = UnsafeMutableBufferPointer(start: scratch.base.assumingMemoryBound(to: Int16.self),
                                                count: chunkFrames * channels)
        while delivered < due {
            let frames = Int(min(due - delivered, Int64(chunkFrames)))
            let n: Int
            do {
                n = try reader.read(into: UnsafeMutableBufferPointer(rebasing: buffer[0..<frames * channels]))
            } catch {
                throw .source("audio \(name): \(error)")
            }
            if n == 0 { return false }
            let at = origin + .microseconds(delivered * 1_000_000 / rate)
            deliver(AudioSamples(samples: UnsafeBufferPointer(rebasing: buffer[0..<n]), sampleRate: nominalSampleRate,
                                 channels: channels, captureTime: at))
            delivered += Int64(n / channels)
        }
        return true
    }
}
