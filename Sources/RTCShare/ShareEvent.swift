import RTCShareMedia

/// Lifecycle and health events of a share, reported to the embedder (and logged by the CLI):
/// `starting → started → finished(reason)`, with stalls and restarts in between.
public enum ShareEvent: Sendable, Equatable {
    case starting(source: String, output: PictureSize, framesPerSecond: Int)
    case started
    case sourceStalled(restartAttempt: Int)
    case sourceRecovered(afterMilliseconds: Int64)
    case finished(FinishReason)
}

/// Why a share ended.
public enum FinishReason: Sendable, Equatable, CustomStringConvertible {
    /// The requested duration passed.
    case durationReached
    /// The host (or a signal) asked it to stop.
    case stopped
    /// The source had no more frames.
    case sourceEnded
    /// Something failed; the message is one line for the user.
    case failed(String)

    public var description: String {
        switch self {
        case .durationReached: "duration reached"
        case .stopped: "stopped"
        case .sourceEnded: "source ended"
        case .failed(let message): "failed: \(message)"
        }
    }
}

/// Counters of a share, for status lines and the final summary.
public struct ShareStats: Sendable, Equatable {
    public var sourceFrames = 0
    public var encodedFrames = 0
    public var repeatedFrames = 0
    public var keyframes = 0
    public var droppedTooFast = 0
    public var droppedByRing: UInt64 = 0
    public var droppedByEncoder = 0
    public var encodedBytes: UInt64 = 0
    /// Opus packets encoded and their bytes.
    public var audioPackets = 0
    public var audioBytes: UInt64 = 0
    public var sourceRestarts = 0
    public var elapsed: MediaDuration = .zero
}
