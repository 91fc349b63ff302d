import RTCShareCore
import RTCShareMedia

/// `--audio ipc` (and pushed audio, through the same kind of queue): the PCM an IPC producer sends (already native-endian in the source's
/// `PCMChunkQueue`, at the producer's rate and channel count, with its capture times). A live
/// input: whatever has arrived is taken at each pump; the pipeline fills gaps (a producer that
/// stalls or is restarted) with silence so the Opus stream and its clock keep going.
public final class IPCAudioInput: AudioInput {
    public let name: String
    public let nominalSampleRate = 0
    /// Stereo: a producer may send either, and may be replaced by one that sends the other.
    public let encoderChannels = 2
    public let isLive = true
    private let queue: PCMChunkQueue

    public init(queue: PCMChunkQueue, name: String = "ipc") {
        self.queue = queue
        self.name = name
    }

    public func capture(until now: MediaTime, _ deliver: (AudioSamples) -> Void) throws(ShareError) -> Bool {
        while queue.pop({ chunk in
            deliver(AudioSamples(samples: chunk.samples, sampleRate: chunk.sampleRate, channels: chunk.channels,
                                 captureTime: MediaTime(microseconds: chunk.ptsMicroseconds)))
        }) != nil {}
        return true
    }
}
