import RTCShareCore
import RTCShareMedia

/// `--output FILE.ivf`: the video stream (VP8, or H.264 under fourcc H264) in an IVF file, for
/// checking without a network.
public final class IVFSink: MediaSink {
    public let name: String
    private var writer: IVFWriter?

    public init(path: String, codec: VideoCodec = .vp8, width: Int, height: Int) throws(ShareError) {
        name = "ivf \(path)"
        do {
            writer = try IVFWriter(path: path, width: width, height: height, fourcc: codec == .h264 ? "H264" : "VP80")
        } catch {
            throw .output("\(error)")
        }
    }

    public func send(video frame: OutgoingVideoFrame) throws(ShareError) {
        guard writer != nil else { return }
        do {
            try writer!.write(frame: frame.bytes, pts: frame.captureTime.microseconds)
        } catch {
            throw .output("\(error)")
        }
    }

    public func finish(_ reason: FinishReason) throws(ShareError) {
        guard let file = writer.take() else { return }
        do { try file.close() } catch { throw .output("\(error)") }
    }
}
