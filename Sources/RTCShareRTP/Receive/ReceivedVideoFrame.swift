import RTCShareCore

/// A complete encoded frame the receive core hands out, whichever codec: a VP8 frame, or an
/// H.264 access unit in Annex B form.
public struct ReceivedVideoFrame: Equatable, Sendable {
    public var codec: VideoCodec
    public var byteCount: Int
    public var timestamp: UInt32
    /// Decoding can start here (a VP8 keyframe, an H.264 IDR).
    public var isKeyframe: Bool
    /// VP8's 15-bit PictureID, when the sender writes one (gaps are frames lost).
    public var pictureID: UInt16?

    public init(codec: VideoCodec, byteCount: Int, timestamp: UInt32, isKeyframe: Bool, pictureID: UInt16? = nil) {
        self.codec = codec
        self.byteCount = byteCount
        self.timestamp = timestamp
        self.isKeyframe = isKeyframe
        self.pictureID = pictureID
    }
}

/// The reassembly of whichever codec the session receives: one switch here, so the receive
/// core never names a codec.
enum VideoDepacketizer: Sendable {
    case vp8(VP8Depacketizer)
    case h264(H264Depacketizer)

    init(_ codec: VideoCodec) {
        switch codec {
        case .vp8: self = .vp8(VP8Depacketizer())
        case .h264: self = .h264(H264Depacketizer())
        }
    }

    /// Feeds one whole RTP packet; returns the frame it completed (if any) and whether a frame
    /// was given up (a packet missing, malformed, too large).
    mutating func push(packet: UnsafeRawBufferPointer,
                       into buffer: UnsafeMutableRawBufferPointer) -> (frame: ReceivedVideoFrame?, dropped: Bool) {
        switch self {
        case .vp8(var d):
            let out = d.push(packet: packet, into: buffer)
            self = .vp8(d)
            return (out.frame.map {
                ReceivedVideoFrame(codec: .vp8, byteCount: $0.byteCount, timestamp: $0.timestamp,
                                   isKeyframe: $0.isKeyframe, pictureID: $0.pictureID)
            }, out.dropped != nil)
        case .h264(var d):
            let out = d.push(packet: packet, into: buffer)
            self = .h264(d)
            return (out.frame.map {
                ReceivedVideoFrame(codec: .h264, byteCount: $0.byteCount, timestamp: $0.timestamp,
                                   isKeyframe: $0.isIDR)
            }, out.dropped != nil)
        }
    }

    /// Frames given up so far.
    var framesDropped: UInt64 {
        switch self {
        case .vp8(let d): d.framesDropped
        case .h264(let d): d.framesDropped
        }
    }
}
