import RTCShareCore

/// The timing of an audio stream cut into 20 ms Opus frames at 48 kHz: frame k was captured
/// from `origin + k x 20 ms`, and its media timestamp is the 48 kHz tick of the origin on the
/// capture clock plus k x 960 — no random offset (an RTP sender adds its own), no drift
/// against the frame count, wrapping modulo 2^32 as RTP timestamps do.
///
/// Invariant: consecutive frames' timestamps differ by exactly 960 unless `skip` was called
/// (then by a multiple of 960), so a receiver never sees samples overlap.
public struct AudioFrameClock: Sendable, Equatable {
    public static let sampleRate: Int64 = 48_000
    public static let frameSamples: Int64 = 960
    public static let frameDuration = MediaDuration.milliseconds(20)

    /// Capture time of frame 0's first sample.
    public let origin: MediaTime
    private let originTicks: Int64
    /// Index of the next frame to go out.
    public private(set) var nextFrame: Int64 = 0

    public init(origin: MediaTime) {
        self.origin = origin
        self.originTicks = origin.rtpTicks(clockRate: Self.sampleRate)
    }

    /// When the next frame's first sample was captured.
    public var nextCaptureTime: MediaTime { origin + Self.frameDuration * nextFrame }
    /// When the next frame's last sample has been captured (the frame can be complete).
    public var nextFrameEnd: MediaTime { origin + Self.frameDuration * (nextFrame + 1) }
    /// The next frame's 48 kHz media timestamp.
    public var nextMediaTimestamp: UInt32 {
        UInt32(truncatingIfNeeded: originTicks &+ nextFrame &* Self.frameSamples)
    }

    /// The next frame went out.
    public mutating func advance() { nextFrame += 1 }

    /// Frames that will never be sent (the pipeline fell behind): the clock jumps over them.
    public mutating func skip(frames: Int64) { nextFrame += max(frames, 0) }
}
