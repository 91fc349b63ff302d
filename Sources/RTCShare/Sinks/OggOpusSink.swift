import RTCShareMedia

/// `--audio-output FILE.ogg`: the Opus stream in an Ogg Opus file (RFC 7845), for checking
/// the audio without a network. Video is not its business.
public final class OggOpusSink: MediaSink {
    public let name: String
    private var writer: OggOpusWriter?

    /// Opens `path` for an Opus stream of `channels`, with the encoder's `preSkip`.
    public init(path: String, channels: Int, preSkip: Int, inputSampleRate: Int, serial: Int32) throws(ShareError) {
        name = "ogg \(path)"
        do {
            writer = try OggOpusWriter(path: path, channels: channels, preSkip: preSkip,
                                       inputSampleRate: inputSampleRate, serial: serial)
        } catch {
            throw .output("--audio-output: \(error)")
        }
    }

    public func send(video frame: OutgoingVideoFrame) throws(ShareError) {}

    public func send(audio packet: OutgoingAudioPacket) throws(ShareError) {
        guard writer != nil else { return }
        do {
            try writer!.write(packet: packet.bytes, samples: packet.samples)
        } catch {
            throw .output("\(error)")
        }
    }

    public func finish(_ reason: FinishReason) throws(ShareError) {
        guard let file = writer.take() else { return }
        do { try file.close() } catch { throw .output("\(error)") }
    }
}
