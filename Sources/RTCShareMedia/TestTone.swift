import Glibc

/// A deterministic sine tone (`--audio testtone`): the same samples on every run, so a receiver
/// can measure its frequency (zero crossings, a DFT) and check the audio path end to end.
///
/// The phase is kept in cycles in [0, 1) and advanced by `frequency / sampleRate` per sample,
/// so it never loses precision however long the share runs.
public struct TestTone: Sendable {
    public static let defaultFrequency = 440.0
    /// Frequencies accepted: audible and below Nyquist at 48 kHz.
    public static let frequencies: ClosedRange<Double> = 20...20_000

    public let frequency: Double
    public let sampleRate: Int
    /// Peak amplitude (Int16 full scale is 32767); -12 dBFS by default.
    public let amplitude: Double
    private let step: Double
    private var phase = 0.0

    public init(frequency: Double = defaultFrequency, sampleRate: Int = 48_000, amplitude: Double = 8_192) {
        precondition(sampleRate > 0 && frequency > 0 && frequency < Double(sampleRate) / 2, "tone above Nyquist")
        self.frequency = frequency
        self.sampleRate = sampleRate
        self.amplitude = min(max(amplitude, 0), 32_767)
        self.step = frequency / Double(sampleRate)
    }

    /// Writes the next `output.count / channels` samples, the same value on every channel.
    public mutating func render(into output: UnsafeMutableBufferPointer<Int16>, channels: Int) {
        let frames = output.count / max(channels, 1)
        for i in 0..<frames {
            let value = Int16(amplitude * sin(2 * Double.pi * phase))
            for c in 0..<channels { output[i * channels + c] = value }
            phase += step
            if phase >= 1 { phase -= 1 }
        }
    }
}
