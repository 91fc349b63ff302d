import RTCShareCore
import RTCShareMedia
import RTCShareRTP

/// One encoded video frame on its way out; the bytes are borrowed for the call only.
public struct OutgoingVideoFrame {
    /// The VP8 frame (RFC 6386) or H.264 access unit (Annex B), as the share's codec makes them.
    public let bytes: UnsafeRawBufferPointer
    public let isKeyframe: Bool
    /// No later frame refers to this one (RFC 7741's N bit).
    public let isDroppable: Bool
    /// When the pixels were captured (repeats: when they were sent), on the monotonic clock.
    public let captureTime: MediaTime
    /// 90 kHz media timestamp without a random offset: from the capture clock, strictly
    /// increasing. An RTP sender adds its stream's offset.
    public let mediaTimestamp: UInt32
    /// How the encoded picture must be turned to be upright: `.up` when the pipeline turned the
    /// pixels, the source's tag when the orientation is signalled instead (CVO).
    public let orientation: Orientation
    public let width: Int
    public let height: Int

    public init(bytes: UnsafeRawBufferPointer, isKeyframe: Bool, isDroppable: Bool, captureTime: MediaTime,
                mediaTimestamp: UInt32, orientation: Orientation, width: Int, height: Int) {
        self.bytes = bytes
        self.isKeyframe = isKeyframe
        self.isDroppable = isDroppable
        self.captureTime = captureTime
        self.mediaTimestamp = mediaTimestamp
        self.orientation = orientation
        self.width = width
        self.height = height
    }
}

/// One encoded Opus packet (20 ms at 48 kHz); the bytes are borrowed for the call only.
public struct OutgoingAudioPacket {
    public let bytes: UnsafeRawBufferPointer
    /// When its first sample was captured, on the monotonic clock.
    public let captureTime: MediaTime
    /// 48 kHz media timestamp of its first sample, without a random offset.
    public let mediaTimestamp: UInt32
    /// Samples per channel (960 for 20 ms).
    public let samples: Int
    public let channels: Int

    public init(bytes: UnsafeRawBufferPointer, captureTime: MediaTime, mediaTimestamp: UInt32, samples: Int, channels: Int) {
        self.bytes = bytes
        self.captureTime = captureTime
        self.mediaTimestamp = mediaTimestamp
        self.samples = samples
        self.channels = channels
    }
}

/// Where a share's encoded media goes: a file, a peer. Every call comes on the pipeline thread,
/// in media order; a sink never blocks (sockets are non-blocking, files are local). Between
/// frames the run loop calls `service` so the sink can read feedback and send reports without
/// a thread of its own.
public protocol MediaSink: AnyObject {
    /// A name for logs ("ivf share.ivf", "peer 127.0.0.1:5004").
    var name: String { get }
    func send(video frame: OutgoingVideoFrame) throws(ShareError)
    func send(audio packet: OutgoingAudioPacket) throws(ShareError)
    /// Reads what arrived, sends what is due; returns what the sink needs of the pipeline.
    func service(at now: MediaTime) throws(ShareError) -> TransportRequests
    /// The share's video bitrate (configured, or the host's), set at the start and when the
    /// host changes it: a network sink's transport makes its target under it (and reports the
    /// target in its requests).
    func maximumBitrateChanged(kbps: Int, at now: MediaTime)
    /// The share is over: say goodbye (RTCP BYE), flush and close. Called once.
    func finish(_ reason: FinishReason) throws(ShareError)
    /// Transport figures, for outputs that have them (nil for files).
    var transportStats: TransportStats? { get }
    /// Descriptors feedback arrives on; the run loop wakes and calls `service` when one is
    /// readable (none for files).
    var descriptors: [Int32] { get }
    /// Goes up whenever `descriptors` changed (a reconnect's new connection to a TURN server):
    /// the loop then watches the new list.
    var descriptorGeneration: Int { get }
    /// One of `descriptors` (or another sink's: ignore it) was readable when the loop woke,
    /// before `service`: a descriptor read only now and then is read only then.
    func descriptorReady(_ descriptor: Int32)
    /// One-line notices for the user gathered since the last call (connected, a peer left).
    func takeNotices() -> [String]
    /// Connection lost and made again since the last call (a WHIP output that reconnects).
    func takeConnectionChanges() -> [ConnectionChange]
    /// Whether a video frame sent now can reach anyone. False while a connection is still
    /// being made (WHIP before DTLS-SRTP is up): when no sink accepts video the pipeline does
    /// not encode the frame at all (`ShareStats.notEncodedConnecting`), so the first frame
    /// encoded is the keyframe the connection asks for, not one more before it.
    var acceptsVideo: Bool { get }
}

extension MediaSink {
    public func send(audio packet: OutgoingAudioPacket) throws(ShareError) {}
    public func service(at now: MediaTime) throws(ShareError) -> TransportRequests { TransportRequests() }
    public func maximumBitrateChanged(kbps: Int, at now: MediaTime) {}
    public var transportStats: TransportStats? { nil }
    public var descriptors: [Int32] { [] }
    public var descriptorGeneration: Int { 0 }
    public func descriptorReady(_ descriptor: Int32) {}
    public func takeNotices() -> [String] { [] }
    public func takeConnectionChanges() -> [ConnectionChange] { [] }
    public var acceptsVideo: Bool { true }
}
