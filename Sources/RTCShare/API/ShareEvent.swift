import RTCShareCore
import RTCShareRTP
import RTCShareMedia

/// Lifecycle and health events of a share, reported to the embedder (and logged by the CLI):
/// `starting → started → finished(reason)`, with stalls and restarts in between.
public enum ShareEvent: Sendable, Equatable {
    case starting(source: String, output: PictureSize, framesPerSecond: Int, codec: VideoCodec = .vp8)
    case started
    /// The host paused the share: nothing is encoded or sent but RTCP; resumed with a keyframe.
    case paused
    case resumed
    case sourceStalled(restartAttempt: Int)
    case sourceRecovered(afterMilliseconds: Int64)
    /// No RTCP came from an output's receiver for this long (wrong address or key, receiver not
    /// running, a firewall): media may be going nowhere. Said once per silence.
    case receiverSilent(output: String, milliseconds: Int64)
    /// RTCP came from that receiver again after a silence of this long.
    case receiverHeardAgain(output: String, afterMilliseconds: Int64)
    /// The receiver said goodbye (RTCP BYE): it closed its session. The share goes on (a
    /// receiver may come back, and a WHIP server's subscribers are not the publisher's to judge).
    case receiverLeft(output: String)
    /// An output's connection was lost (or its first POST failed) and is being made again:
    /// attempt `attempt` comes in `retryInMilliseconds`. Nothing is encoded meanwhile.
    case reconnecting(output: String, attempt: Int, reason: String, retryInMilliseconds: Int64)
    /// Media flows again on that output, this long after the connection was lost; the next
    /// frame is a keyframe.
    case reconnected(output: String, afterMilliseconds: Int64)
    /// Resident memory reached the governor's line: the share gave way by `step`.
    case memoryPressure(residentBytes: Int, limitBytes: Int, step: MemoryGovernorStep)
    /// Once a second while running: the counters so far and the outputs' transport figures.
    case progress(ShareProgress)
    /// Something an output wants the user to know (a receiver left, a key problem); one line.
    case notice(String)
    case finished(FinishReason)
}

/// A snapshot for status lines and `--stats-json`.
public struct ShareProgress: Sendable, Equatable {
    public var stats: ShareStats
    /// The first output with transport figures (a peer), if any.
    public var transport: TransportStats?
    public var residentBytes: Int
    public var peakResidentBytes: Int

    public init(stats: ShareStats, transport: TransportStats?, residentBytes: Int, peakResidentBytes: Int) {
        self.stats = stats
        self.transport = transport
        self.residentBytes = residentBytes
        self.peakResidentBytes = peakResidentBytes
    }
}

/// Why a share ended.
public enum FinishReason: Sendable, Equatable, CustomStringConvertible {
    /// The requested duration passed.
    case durationReached
    /// The host (or a signal) asked it to stop.
    case stopped
    /// The host asked it to stop and said why (a broadcast extension's host-requested stop).
    case stoppedByHost(String)
    /// The source had no more frames.
    case sourceEnded
    /// Something failed (its description is one line for the user).
    case failed(ShareError)

    public var description: String {
        switch self {
        case .durationReached: "duration reached"
        case .stopped: "stopped"
        case .stoppedByHost(let why): "stopped: \(why)"
        case .sourceEnded: "source ended"
        case .failed(let error): "failed: \(error)"
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
    /// Frames the encoder was not let drop: the picture had gone too long without one
    /// (`ScreenFrameRate.mayDrop`).
    public var codedAgainstDrop = 0
    /// Of `droppedByEncoder`, frames skipped before the encoder: it was too far ahead of its
    /// ask (`FrameBudget`).
    public var skippedOverBudget = 0
    /// Frames not encoded because no output could take them yet (a connection being made).
    public var notEncodedConnecting = 0
    public var encodedBytes: UInt64 = 0
    /// Opus packets encoded and their bytes.
    public var audioPackets = 0
    public var audioBytes: UInt64 = 0
    /// The packet loss the Opus encoder prepares for (in-band FEC), percent, from the receiver's reports.
    public var audioExpectedLossPercent = 0
    public var sourceRestarts = 0
    /// Rows of its picture a screen source that converts only what was drawn converted
    /// (`CountsConvertedRows`; 0 for other sources).
    public var sourceRowsConverted = 0
    /// Times an output's connection was made again after it was lost.
    public var reconnects = 0
    /// An output's connection is lost and being made again now.
    public var reconnecting = false
    /// The video bitrate congestion control allows now (kbit/s, for everything on the wire:
    /// the pacer runs at it), and how often the encoder's bitrate changed (delay, REMB, loss,
    /// the host, the transport's overhead).
    public var targetBitrateKbps = 0
    public var bitrateChanges = 0
    /// What the encoder is asked for (kbit/s): the target less what the transport adds
    /// (`EncoderBitrate`).
    public var encoderBitrateKbps = 0
    /// The frame rate in force: the configured one, lower while the bitrate is short
    /// (`ScreenFrameRate`).
    public var targetFramesPerSecond = 0
    public var elapsed: MediaDuration = .zero
    /// Times the pipeline thread woke (frames, feedback, deadlines): what an idle share costs.
    public var wakeups = 0
    /// Source frames let go of while paused.
    public var droppedWhilePaused = 0
    /// The codec the share encodes with.
    public var videoCodec = VideoCodec.vp8
    /// Of `encodedFrames`, frames a decoder takes in without showing them: VP8's progressive
    /// keyframes above 1600x900 sweep in unseen.
    public var hiddenFrames = 0

    public init() {}
}
