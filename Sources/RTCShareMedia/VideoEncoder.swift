import RTCShareCore

/// Counters of a video encoder since creation.
public struct VideoEncoderStats: Equatable, Sendable {
    /// Frames handed to `encode`.
    public var framesIn: UInt64 = 0
    /// Frames encoded (one that did not fit a caller's buffer included).
    public var framesOut: UInt64 = 0
    /// Of those, keyframes (IDRs for H.264).
    public var keyframesOut: UInt64 = 0
    /// Frames the rate controller dropped (no output) to hold the bitrate.
    public var framesDropped: UInt64 = 0
    /// Bytes of those frames.
    public var bytesOut: UInt64 = 0
    /// Keyframe requests that will be (or were) honoured.
    public var keyframeRequestsAccepted: UInt64 = 0
    /// Keyframe requests dropped by the rate limit.
    public var keyframeRequestsLimited: UInt64 = 0
    /// Of `framesOut`, frames marked not to be shown (VP8's progressive keyframes).
    public var framesHidden: UInt64 = 0

    public init() {}
}

/// What became of a keyframe request.
public enum KeyframeRequestOutcome: Equatable, Sendable {
    /// The next encoded frame will be a keyframe.
    case accepted
    /// Too soon after the last accepted request; ignored.
    case rateLimited
}

/// One encoded frame, valid only inside the closure it is given to.
public struct EncodedVideoFrame {
    /// The codec's frame: a VP8 frame (RFC 6386) or an H.264 access unit in Annex B form. The
    /// encoder's buffer: do not keep the pointer.
    public let bytes: UnsafeRawBufferPointer
    /// A VP8 keyframe, an H.264 IDR (with SPS and PPS in front).
    public let isKeyframe: Bool
    /// No later frame refers to this one: losing it costs only itself.
    public let isDroppable: Bool
    /// The timestamp of the input frame, as the caller gave it.
    public let ptsMicroseconds: Int64
    /// A decoder shows the picture; false for a VP8 frame it only takes into its references
    /// (`VP8FrameTag`: a progressive keyframe's sweep).
    public let isShown: Bool

    public init(bytes: UnsafeRawBufferPointer, isKeyframe: Bool, isDroppable: Bool, ptsMicroseconds: Int64,
                isShown: Bool = true) {
        self.bytes = bytes
        self.isKeyframe = isKeyframe
        self.isDroppable = isDroppable
        self.ptsMicroseconds = ptsMicroseconds
        self.isShown = isShown
    }
}

/// The pipeline's encoder, whichever codec it is: one switch here instead of a second
/// pipeline. Both encoders have the same face (bitrate, keyframe requests, encode a slot into a
/// borrowed frame), so the share drives this value and never names a codec.
public enum VideoEncoder: ~Copyable, @unchecked Sendable {
    case vp8(VP8Encoder)
    case h264(H264Encoder)

    /// Opens the encoder for `codec` at `width`x`height`. `reclaimStartupZeroPages`: VP8's
    /// (see `VP8Encoder.Configuration`).
    public init(codec: VideoCodec, width: Int, height: Int, bitrateKbps: Int, frameRate: Int,
                reclaimStartupZeroPages: Bool = false) throws(MediaError) {
        switch codec {
        case .vp8:
            var c = VP8Encoder.Configuration(width: width, height: height, bitrateKbps: bitrateKbps)
            c.frameRate = frameRate
            c.reclaimStartupZeroPages = reclaimStartupZeroPages
            self = .vp8(try VP8Encoder(c))
        case .h264:
            var c = H264Encoder.Configuration(width: width, height: height, bitrateKbps: bitrateKbps)
            c.frameRate = min(frameRate, 60)
            c.reclaimStartupZeroPages = reclaimStartupZeroPages
            self = .h264(try H264Encoder(c))
        }
    }

    public var codec: VideoCodec {
        switch self {
        case .vp8: .vp8
        case .h264: .h264
        }
    }

    public var width: Int {
        switch self {
        case .vp8(let e): e.width
        case .h264(let e): e.width
        }
    }

    public var height: Int {
        switch self {
        case .vp8(let e): e.height
        case .h264(let e): e.height
        }
    }

    /// Whether the last coded picture came out fine enough that coding a still one again would
    /// refine little: VP8's quantizer at or under `VP8Encoder.refinedQuantizer`. openh264 tells
    /// nothing of the kind: always true.
    /// (Mutating only so it can be asked of an optional encoder in place.)
    public mutating func lastPictureRefined() -> Bool {
        mutate(vp8: { ($0.lastQuantizer ?? 0) <= VP8Encoder.refinedQuantizer }, h264: { _ in true })
    }

    public var stats: VideoEncoderStats {
        switch self {
        case .vp8(let e): e.stats
        case .h264(let e): e.stats
        }
    }

    public mutating func setBitrate(kbps: Int) throws(MediaError) {
        try mutate(vp8: { e throws(MediaError) in try e.setBitrate(kbps: kbps) },
                   h264: { e throws(MediaError) in try e.setBitrate(kbps: kbps) })
    }

    /// VP8: keyframes capped harder while the network holds the rate below the configured one
    /// (`VP8Encoder.setKeyframeCap(constrained:)`). H.264: openh264 has no such cap; nothing.
    public mutating func setKeyframeCap(constrained: Bool) throws(MediaError) {
        try mutate(vp8: { e throws(MediaError) in try e.setKeyframeCap(constrained: constrained) },
                   h264: { (_: inout H264Encoder) throws(MediaError) in })
    }

    /// VP8: a frame went by unencoded; the next is sized for one frame interval
    /// (`VP8Encoder.noteSkipped`). H.264: nothing.
    public mutating func noteSkipped(frameIntervalMicroseconds: Int64) {
        mutate(vp8: { $0.noteSkipped(frameIntervalMicroseconds: frameIntervalMicroseconds) },
               h264: { (_: inout H264Encoder) in })
    }

    /// VP8: whether rate control may drop the next frames (`VP8Encoder.setFrameDropping`).
    /// H.264: openh264's frame skip is set at init; nothing.
    public mutating func setFrameDropping(allowed: Bool) throws(MediaError) {
        try mutate(vp8: { e throws(MediaError) in try e.setFrameDropping(allowed: allowed) },
                   h264: { (_: inout H264Encoder) throws(MediaError) in })
    }

    @discardableResult
    public mutating func requestKeyframe(nowMicroseconds now: Int64) -> KeyframeRequestOutcome {
        mutate(vp8: { $0.requestKeyframe(nowMicroseconds: now) }, h264: { $0.requestKeyframe(nowMicroseconds: now) })
    }

    public mutating func forceKeyframe(nowMicroseconds now: Int64) {
        mutate(vp8: { $0.forceKeyframe(nowMicroseconds: now) }, h264: { $0.forceKeyframe(nowMicroseconds: now) })
    }

    /// Encodes `frame` and gives the encoded frame to `body`; false when rate control dropped it.
    /// `activeMap`: the macroblocks that may have changed (VP8 skips the others without a
    /// search; openh264 has no such control and codes the whole picture).
    @discardableResult
    public mutating func encode(_ frame: borrowing FrameSlot, activeMap: ActiveMap? = nil,
                                _ body: (EncodedVideoFrame) -> Void) throws(MediaError) -> Bool {
        try mutate(vp8: { e throws(MediaError) in try e.encode(frame, activeMap: activeMap, body) },
                   h264: { e throws(MediaError) in try e.encode(frame, body) })
    }

    /// Runs `vp8` or `h264` on the encoder in place; the encoder is put back whatever they throw.
    private mutating func mutate<R, E: Error>(vp8: (inout VP8Encoder) throws(E) -> R,
                                              h264: (inout H264Encoder) throws(E) -> R) throws(E) -> R {
        switch consume self {
        case .vp8(var e):
            let result = Result { () throws(E) in try vp8(&e) }
            self = .vp8(e)
            return try result.get()
        case .h264(var e):
            let result = Result { () throws(E) in try h264(&e) }
            self = .h264(e)
            return try result.get()
        }
    }
}

/// Which macroblocks of a picture an encoder must look at: a byte a 16x16 macroblock, row after
/// row, nonzero where the picture may have changed since the last one coded; zero where it is
/// the same, so the macroblock can be coded as skipped (a copy of the last picture) without a
/// search. Borrowed for one `encode` call.
public struct ActiveMap {
    public let activity: UnsafeBufferPointer<UInt8>
    public let rows: Int
    public let cols: Int

    public init(activity: UnsafeBufferPointer<UInt8>, rows: Int, cols: Int) {
        self.activity = activity
        self.rows = rows
        self.cols = cols
    }
}
