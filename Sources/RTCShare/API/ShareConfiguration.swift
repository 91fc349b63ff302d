import RTCShareCore
import RTCShareMedia

/// What a share sends and how: the settings the CLI and embedders fill in.
public struct ShareConfiguration: Sendable, Equatable {
    /// Output (encoded) picture size; `nil` picks the largest that fits the memory cap.
    public var outputSize: PictureSize?
    /// Which way the output is laid out when the source's upright shape differs.
    public var outputOrientation: OutputOrientation = .landscape
    /// Frames per second sent; the filler repeats the last frame to hold it.
    public var framesPerSecond = 20
    /// Frame rate while the screen is static, or nil to always send at `framesPerSecond`.
    public var idleFramesPerSecond: Int?
    /// Video target bitrate (the ceiling congestion control works under).
    public var bitrateKbps = 1500
    /// VP8, H.264, or `auto`: VP8 unless a WHIP server's answer picks H.264.
    public var videoCodec = VideoCodecChoice.auto
    /// Stop after this long; nil runs until stopped.
    public var duration: MediaDuration?
    /// Write the video stream to this IVF file (fourcc VP80 or H264).
    public var ivfPath: String?
    /// Whole-process memory budget.
    public var memoryCapBytes = 50 << 20
    /// The resident size at which the share gives way (frame rate, then output size; see
    /// `MemoryGovernor`); nil: no governor. It reads the whole process's resident memory, so
    /// an embedder running several shares in one process sets its own line or none.
    public var memorySoftLimitBytes: Int?
    /// The share's audio; nil: video only.
    public var audio: AudioConfiguration?
    /// A live source that delivers nothing for this long is restarted.
    public var stallThreshold: MediaDuration = .seconds(1)
    /// Send the orientation with each frame (CVO) instead of turning the pixels: the encoded
    /// picture keeps the source's stored shape and the receiver turns it.
    public var signalsOrientation = false
    /// A keyframe at least this often, for receivers that join late and send no PLI (nil: only
    /// on request, on start and on orientation changes).
    public var keyframeInterval: MediaDuration?
    /// In place of `keyframeInterval` where VP8 keyframes sweep in over 8 frames the viewer does
    /// not see (above 1600x900, with `reclaimEncoderStartupMemory`): each one holds the
    /// viewer's picture for them and re-codes the whole picture; nil: `keyframeInterval`.
    public var progressiveKeyframeInterval: MediaDuration?
    /// Memory the outputs take from the frame budget (the packet history), and what they
    /// allocate on their own (SRTP contexts, socket buffers): the planner counts both.
    public var outputBudgetBytes = 0
    public var outputHeapBytes = 0
    /// What the outputs load to close once the encoder has gone (libcurl for a WHIP DELETE):
    /// the planner's closing phase.
    public var outputClosingHeapBytes = 0
    /// What the output loads beside the running share to publish again after a lost
    /// connection (libcurl for the DELETE and POST; 0: it does not reconnect).
    public var outputReconnectHeapBytes = 0
    /// What the output lets go of once it first connects or sends (the pages only the start
    /// ran: `WHIPConfiguration.releasesStartupCodePages`, `PeerConfiguration`'s; 0: it keeps
    /// them): off the running share, held before (the planner's phase before they go).
    public var outputReleasedStartupBytes = 0
    /// The output takes video only once a connection is up (WHIP): the encoder's first frames
    /// come after the transport and its libraries are resident, which the planner counts for
    /// H.264 (`MemoryPlanner.h264LateFirstFramesBytes`).
    public var videoWaitsForConnection = false
    /// Give back the all-zero pages the video encoder wrote at its start (`StartupZeroPages`;
    /// ~17 MiB at 1280x720 with VP8). Only when no thread of the process outside rtcshare
    /// allocates and writes memory while a share starts: the CLI turns it on; an embedder turns
    /// it on when that holds for its threads.
    public var reclaimEncoderStartupMemory = false

    public init() {}
}

/// Width and height in pixels.
public struct PictureSize: Sendable, Equatable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses "WxH" with both sides even and in 16...4096 (VP8 and 4:2:0 chroma want even sides).
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
              (16...4096).contains(w), (16...4096).contains(h), w % 2 == 0, h % 2 == 0 else { return nil }
        self.init(width: w, height: h)
    }

    public var pixels: Int { width * height }
    public var description: String { "\(width)x\(height)" }
}

/// How the output picture is laid out.
public enum OutputOrientation: String, Sendable, CaseIterable {
    /// Always wider than tall; a portrait source is shown upright with bars at the sides.
    case landscape
    /// Always taller than wide.
    case portrait
    /// The shape of the first frame's upright picture.
    case source
}

extension ShareConfiguration {
    /// Whether a share coding `codec` lets its encoder go while a lost connection is made again
    /// (`SharePipelineStateMachine.Configuration.releasesEncoderWhileReconnecting`): VP8 with its
    /// start-up zero-fill left out, whose start costs little (4.4 MiB at 1920x1080, against the
    /// ~23 it holds running), when an output reconnects and no file takes the video meanwhile.
    /// openh264 keeps its encoder: its first frames write most of what its start zeroes (a phase
    /// above its running figure at 1280x720 and below).
    public func releasesEncoderWhileReconnecting(_ codec: VideoCodec) -> Bool {
        codec == .vp8 && reclaimEncoderStartupMemory && outputReconnectHeapBytes > 0 && ivfPath == nil
    }
}
