import RTCShareCore
import RTCShareMedia

/// A run of captured PCM an `AudioInput` hands to the pipeline; the samples are borrowed for
/// the call only.
public struct AudioSamples {
    /// Interleaved, native-endian; `frames * channels` of them.
    public var samples: UnsafeBufferPointer<Int16>
    public var sampleRate: Int
    /// 1 or 2.
    public var channels: Int
    /// When the first sample was captured, on the monotonic clock.
    public var captureTime: MediaTime

    public var frames: Int { samples.count / max(channels, 1) }
}

/// Where an `AudioPipeline`'s PCM comes from: a generated tone, a file, a producer. Called on
/// the pipeline thread only.
public protocol AudioInput: AnyObject {
    /// For logs ("testtone 440 Hz", "wav:talk.wav", "ipc").
    var name: String { get }
    /// The rate it captures at, when known before the first sample (0 if not: ipc).
    var nominalSampleRate: Int { get }
    /// Channels the encoder should have for it (1 or 2).
    var encoderChannels: Int { get }
    /// A live input delivers what arrives, when it arrives: the pipeline keeps the Opus clock
    /// going on its own and fills gaps with silence. A paced input (tone, file) delivers
    /// exactly the samples due by `now`, so frames go out when they are complete.
    var isLive: Bool { get }
    /// Hands everything captured up to `now` to `deliver`, in order. Returns false once the
    /// input has ended for good (end of file); it is not called again after that.
    func capture(until now: MediaTime, _ deliver: (AudioSamples) -> Void) throws(ShareError) -> Bool
}
