import RTCShareCore
import RTCShareMedia

/// `--audio testtone`: a sine generated in real time at 48 kHz — at each `capture(until:)` the
/// samples due since the start, so the tone runs at exactly the capture clock's pace.
public final class ToneAudioInput: AudioInput {
    public let name: String
    public let nominalSampleRate = 48_000
    public let encoderChannels = 1
    public let isLive = false
    private var tone: TestTone
    private let scratch: BudgetBlock
    private var start: MediaTime?
    private var generated: Int64 = 0

    /// Samples generated per delivery (10 ms).
    static let chunkSamples = 480
    static var budgetBytes: Int { chunkSamples * 2 }

    public init(frequency: Double, budget: MemoryBudget) throws(ShareError) {
        guard TestTone.frequencies.contains(frequency) else {
            throw .invalidConfiguration("tone frequency must be 20...20000 Hz, not \(frequency)")
        }
        tone = TestTone(frequency: frequency, sampleRate: nominalSampleRate)
        do {
            scratch = try BudgetBlock(budget: budget, byteCount: Self.budgetBytes, alignment: 16)
        } catch {
            throw .doesNotFit("audio tone buffer: \(error)")
        }
        let hz = frequency == frequency.rounded() ? "\(Int(frequency))" : "\(frequency)"
        name = "testtone \(hz) Hz"
    }

    public func capture(until now: MediaTime, _ deliver: (AudioSamples) -> Void) throws(ShareError) -> Bool {
        let origin = start ?? now
        start = origin
        let due = (now - origin).microseconds * Int64(nominalSampleRate) / 1_000_000
        let buffer = UnsafeMutableBufferPointer(start: scratch.base.assumingMemoryBound(to: Int16.self),
                                                count: Self.chunkSamples)
        while generated < due {
            let n = Int(min(due - generated, Int64(Self.chunkSamples)))
            let part = UnsafeMutableBufferPointer(rebasing: buffer[0..<n])
            tone.render(into: part, channels: 1)
            let at = origin + .microseconds(generated * 1_000_000 / Int64(nominalSampleRate))
            deliver(AudioSamples(samples: UnsafeBufferPointer(part), sampleRate: nominalSampleRate, channels: 1,
                                 captureTime: at))
            generated += Int64(n)
        }
        return true
    }
}
