import CSpeexDSP

/// Converts interleaved 16-bit PCM from a producer's rate to Opus's 48 kHz with libspeexdsp's
/// resampler (a windowed-sinc filter; quality 3 is its "VoIP" setting: clean for speech and
/// app audio at a small fraction of a core).
///
/// Memory: libspeexdsp allocates its state with `malloc` when the resampler is made (and again
/// only if `setInputRate` needs a longer filter); nothing is allocated by `process`. The size
/// is small (a few KiB at quality 3, see `plannedHeapBytes`) and budgeted by measurement in
/// the memory plan rather than carved from the `MemoryBudget`, because the library does not
/// let the caller place it.
///
/// A rate equal to the output rate is a passthrough: no libspeexdsp state, samples copied.
/// Non-copyable: one value owns the libspeexdsp state and destroys it in `deinit`.
public struct Resampler: ~Copyable {
    /// libspeexdsp quality 0 (cheapest) ... 10; 3 keeps CPU low on small boards.
    public static let defaultQuality = 3
    /// Input rates accepted (what IPC allows; WAV files use the same range).
    public static let inputRates: ClosedRange<Int> = 8_000...192_000
    /// Heap bytes the plan reserves for libspeexdsp's state at `defaultQuality`, stereo, for
    /// the worst input rate in `inputRates`. Measured (glibc `mallinfo2`, ResamplerTests
    /// checks it): at most about 5 KiB over 8...192 kHz; reserved with a wide margin.
    public static let plannedHeapBytes = 32 << 10

    public private(set) var inputRate: Int
    public let outputRate: Int
    public let channels: Int
    public let quality: Int
    /// nil while `inputRate == outputRate` (passthrough).
    private var state: OpaquePointer?

    /// A resampler for `channels` (1 or 2) interleaved channels from `inputRate` to `outputRate`.
    /// Throws `.invalidConfiguration` for rates outside `inputRates`, `.library` if libspeexdsp
    /// fails (out of memory).
    public init(inputRate: Int, outputRate: Int = 48_000, channels: Int,
                quality: Int = defaultQuality) throws(MediaError) {
        guard channels == 1 || channels == 2 else {
            throw .invalidConfiguration("resampler channels must be 1 or 2, not \(channels)")
        }
        guard Self.inputRates.contains(inputRate), Self.inputRates.contains(outputRate) else {
            throw .invalidConfiguration("sample rate \(inputRate) Hz outside \(Self.inputRates.lowerBound)...\(Self.inputRates.upperBound)")
        }
        guard (0...10).contains(quality) else {
            throw .invalidConfiguration("resampler quality must be 0...10, not \(quality)")
        }
        let made = inputRate == outputRate
            ? nil : try Self.makeState(channels: channels, from: inputRate, to: outputRate, quality: quality)
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        self.quality = quality
        self.state = made
    }

    deinit {
        if let state { speex_resampler_destroy(state) }
    }

    private static func makeState(channels: Int, from: Int, to: Int, quality: Int) throws(MediaError) -> OpaquePointer {
        var error: Int32 = 0
        guard let made = speex_resampler_init(UInt32(channels), UInt32(from), UInt32(to), Int32(quality), &error) else {
            throw .library("speexdsp resampler \(from) -> \(to) Hz: \(String(cString: speex_resampler_strerror(error)))")
        }
        // Without this the first output samples are the filter's run-in zeros (a delay of
        // half the filter), which would only shift the audio against its timestamps.
        speex_resampler_skip_zeros(made)
        return made
    }

    /// Whether samples are only copied (the input is already at the output rate).
    public var isPassthrough: Bool { state == nil }

    /// Switches to a new input rate (a producer that reconnected at another rate). May
    /// allocate (libspeexdsp's filter for the new ratio); never on a steady stream.
    public mutating func setInputRate(_ rate: Int) throws(MediaError) {
        guard rate != inputRate else { return }
        guard Self.inputRates.contains(rate) else {
            throw .invalidConfiguration("sample rate \(rate) Hz outside \(Self.inputRates.lowerBound)...\(Self.inputRates.upperBound)")
        }
        if rate == outputRate {
            if let state { speex_resampler_destroy(state) }
            state = nil
        } else if let state {
            let code = speex_resampler_set_rate(state, UInt32(rate), UInt32(outputRate))
            guard code == Int32(RESAMPLER_ERR_SUCCESS) else {
                throw .library("speexdsp set rate \(rate) Hz: \(String(cString: speex_resampler_strerror(code)))")
            }
        } else {
            state = try Self.makeState(channels: channels, from: rate, to: outputRate, quality: quality)
        }
        inputRate = rate
    }

    /// Resamples as much of `input` (interleaved, whole frames) as fits in `output`; returns
    /// the frames (samples per channel) consumed from `input` and written to `output`. Call
    /// again with the rest of the input once the output has been taken.
    public mutating func process(_ input: UnsafeBufferPointer<Int16>,
                                 into output: UnsafeMutableBufferPointer<Int16>) -> (consumed: Int, produced: Int) {
        let inFrames = input.count / channels, outFrames = output.count / channels
        guard inFrames > 0, outFrames > 0, let src = input.baseAddress, let dst = output.baseAddress else {
            return (0, 0)
        }
        guard let state else {
            let n = min(inFrames, outFrames)
            dst.update(from: src, count: n * channels)
            return (n, n)
        }
        var consumed = UInt32(clamping: inFrames), produced = UInt32(clamping: outFrames)
        let code = speex_resampler_process_interleaved_int(state, src, &consumed, dst, &produced)
        // The only failures are bad arguments (ruled out above): report nothing done.
        guard code == Int32(RESAMPLER_ERR_SUCCESS) else { return (0, 0) }
        return (Int(consumed), Int(produced))
    }

    /// Output frames that `inputFrames` can produce at most (for sizing buffers).
    public func maximumOutputFrames(forInput inputFrames: Int) -> Int {
        (inputFrames * outputRate + inputRate - 1) / inputRate + 1
    }
}
