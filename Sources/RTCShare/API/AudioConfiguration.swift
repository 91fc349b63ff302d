import RTCShareCore
import RTCShareMedia

/// The audio of a share (`--audio`, `--audio-bitrate`, `--tone-hz`): where the PCM comes from
/// and how it is encoded. Opus at 48 kHz in 20 ms frames, whatever the input's rate.
public struct AudioConfiguration: Sendable, Equatable {
    public enum Input: Sendable, Equatable {
        /// A generated sine (`testtone`).
        case testTone(frequency: Double)
        /// A 16-bit PCM WAV/RIFX file played at real-time pace (`wav:PATH`).
        case wav(path: String)
        /// The IPC producer's PCM (`ipc`; needs `--source ipc:PATH`).
        case ipc
        /// PCM the embedder pushes (`ShareAgent.pushAudio`; needs the pushed source).
        case pushed
    }

    public var input: Input
    /// Opus bitrate in bit/s.
    public var bitrate: Int
    /// Write the Opus stream to this Ogg Opus file.
    public var oggPath: String?

    public static let defaultBitrate = 64_000

    public init(input: Input, bitrate: Int = defaultBitrate, oggPath: String? = nil) {
        self.input = input
        self.bitrate = bitrate
        self.oggPath = oggPath
    }

    /// Bytes the audio takes from the share's budget (planned for stereo, the most any input
    /// uses).
    public var budgetBytes: Int {
        AudioPipeline<IPCAudioInput>.budgetBytes(channels: 2)
            + max(ToneAudioInput.budgetBytes, WAVAudioInput.budgetBytes) + 64
    }

    /// Heap bytes the audio's libraries take on their own, budgeted by measurement:
    /// libspeexdsp's resampler state, libogg's stream state, a WAV file's read buffer.
    public var heapBytes: Int {
        Resampler.plannedHeapBytes
            + (oggPath != nil ? OggOpusWriter.plannedHeapBytes : 0)
            + (input.isWAV ? WAVAudioInput.readBufferBytes : 0)
    }

    /// Makes the audio path for a share of `source` inside `budget`. Throws
    /// `.invalidConfiguration` with one line for a bad input (an unreadable WAV file, `ipc`
    /// without an IPC source).
    public func makePath<S: VideoSource>(for source: S, budget: MemoryBudget,
                                         log: @escaping (String) -> Void) throws(ShareError) -> any AudioPath & AudioPathInfo {
        switch input {
        case .testTone(let frequency):
            return try AudioPipeline(input: ToneAudioInput(frequency: frequency, budget: budget), budget: budget,
                                     bitrate: bitrate, log: log)
        case .wav(let path):
            return try AudioPipeline(input: WAVAudioInput(path: path, budget: budget), budget: budget,
                                     bitrate: bitrate, log: log)
        case .ipc:
            guard let ipc = source as? IPCSource else {
                throw .invalidConfiguration("--audio ipc needs --source ipc:PATH")
            }
            return try AudioPipeline(input: IPCAudioInput(queue: ipc.audioSamples), budget: budget,
                                     bitrate: bitrate, log: log)
        case .pushed:
            guard let push = source as? PushSource else {
                throw .invalidConfiguration("pushed audio needs the pushed video source")
            }
            return try AudioPipeline(input: IPCAudioInput(queue: push.audioSamples, name: "pushed"), budget: budget,
                                     bitrate: bitrate, log: log)
        }
    }
}

extension AudioConfiguration.Input {
    var isWAV: Bool { if case .wav = self { true } else { false } }
}

/// What an audio path's outputs need to know of it (the Ogg Opus header).
public protocol AudioPathInfo: AnyObject {
    var channels: Int { get }
    var preSkip: Int { get }
    /// The input's capture rate, or 0 when it is not known up front.
    var inputSampleRate: Int { get }
}

extension AudioPipeline: AudioPathInfo {
    public var inputSampleRate: Int { input.nominalSampleRate }
}
