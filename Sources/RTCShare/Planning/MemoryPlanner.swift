import RTCShareCore
import RTCShareMedia

/// Where the memory of a share goes, decided before it starts: `rtcshare plan` prints it, and
/// start-up refuses a configuration whose total passes the cap (or `--size auto` picks the
/// largest output that fits), so a share is never killed for memory at minute 40.
///
/// Two kinds of figures: what CCore's budget holds is computed exactly from the pool and
/// scratch sizes; what libraries allocate on their own (libvpx above all) and the runtime are
/// measured figures, checked by the peak-RSS test.
public struct MemoryPlan: Sendable, Equatable {
    /// One line of the plan.
    public struct Item: Sendable, Equatable {
        public var name: String
        public var bytes: Int
    }

    public var outputSize: PictureSize
    public var items: [Item]
    /// Bytes the CCore budget is created with (pools, ring, scratch, audio state).
    public var budgetBytes: Int
    /// Whether frames must be converted, turned or scaled (else the source slot goes straight
    /// to the encoder: no copy).
    public var needsTransform: Bool
    public var capBytes: Int
    /// The codec choice the encoder line is for (`auto`: the larger of the two).
    public var videoCodec: VideoCodecChoice = .vp8

    /// The resident peak while the encoder starts, before its all-zero pages are given back
    /// (0: not planned separately — the encoder line is its whole peak).
    public var startupPeakBytes = 0
    /// What the output loads to close once the encoder has gone (libcurl for the WHIP DELETE;
    /// 0: nothing), and the encoder line's bytes, which are free by then.
    public var closingHeapBytes = 0
    public var encoderBytes = 0
    /// What publishing again loads beside everything running (libcurl for a WHIP reconnect's
    /// DELETE and POST; 0: the output does not reconnect).
    public var reconnectHeapBytes = 0
    /// The encoder line's bytes still resident while a connection is made again: all of them,
    /// or none where the encoder is let go meanwhile (VP8: `releasesEncoderWhileReconnecting`;
    /// with `auto`, H.264's, which keeps its own).
    public var encoderKeptWhileReconnectingBytes = 0
    /// The pages only the start ran, which the output lets go of once it first connects or sends
    /// (a negative item of the running share; 0: it keeps them), and the encoder as it stands
    /// before (opened, no frame coded yet).
    public var releasedStartupBytes = 0
    public var encoderOpenBytes = 0

    /// What the share holds once running.
    public var totalBytes: Int { items.reduce(0) { $0 + $1.bytes } }
    /// The resident size while the output closes: everything running but the encoder, plus
    /// what closing loads (0 when closing loads nothing).
    public var closingPeakBytes: Int { closingHeapBytes > 0 ? totalBytes - encoderBytes + closingHeapBytes : 0 }
    /// The resident size while a lost connection is made again: everything running but what
    /// of the encoder is let go meanwhile, plus what publishing loads.
    public var reconnectPeakBytes: Int {
        reconnectHeapBytes > 0 ? totalBytes - encoderBytes + encoderKeptWhileReconnectingBytes + reconnectHeapBytes : 0
    }
    /// The resident size before the output lets the start-up's pages go (it connects, or sends
    /// its first frame): everything running but the encoder's frames, those pages still held
    /// (0 when the output lets none go).
    public var connectingPeakBytes: Int {
        releasedStartupBytes > 0 ? totalBytes - encoderBytes + encoderOpenBytes + releasedStartupBytes : 0
    }
    /// The process's peak: the highest of the phases — the encoder's start-up, connecting,
    /// running, a reconnect, and closing.
    public var peakBytes: Int {
        max(totalBytes, startupPeakBytes, connectingPeakBytes, closingPeakBytes, reconnectPeakBytes)
    }
    public var fits: Bool { peakBytes <= capBytes }

    /// Source frames: the one kept for repeats (it is the encoder's input when no transform is
    /// needed) and the one being captured. A captured frame waits in the ring only until the
    /// pipeline's next pass (at most a few milliseconds), which then lets the older one go; if
    /// both are out at a capture, the source skips that capture (counted by the pool).
    public static let sourceSlots = 2
    /// The smallest ring CCore makes; drop-oldest, so the newest frame always gets through.
    public static let ringCapacity = 2
    /// Encoder input frames: the last one made, given back just before the next is made.
    public static let outputSlots = 1
}

public enum MemoryPlanner {
    // Where the figures below come from. They are measured on the release build as shipped
    // (`scripts/build-release`: static Swift runtime, lld with packed relocations, no exported
    // symbols), Debian 12, libvpx 1.12, testsrc content at 20 fps, by sampling the share's
    // /proc/PID/status every few ms and reading /proc/PID/smaps at each new high and mid-share.
    // A share's resident size goes through three phases, and its peak is the highest of them:
    //   start-up: the encoder opens before anything else of size is made
    //     (`startupRuntimeBytes` + `vp8EncoderStartupBytes`: small now that libvpx's zero-fill
    //     of its token buffer is left out; openh264's first frames make it larger than it runs:
    //     `h264EncoderStartupBytes`);
    //   running: every item of the plan (`totalBytes`);
    //   closing (WHIP): the encoder has gone, libcurl is loaded again for the DELETE
    //     (`WHIPSink.closingHeapBytes`).
    // The WHIP POST (libcurl loaded, the encoder just opened) measured below the running figure
    // in every configuration (23.3 against 25.6 MiB at 640x360, 21 against 35 at 1280x720): much
    // of the code a running share touches is not touched yet, so it is no phase of its own.
    // `MemoryPlannerAccuracyTests` runs the shares and checks the plan within 1 MiB of each peak.

    /// Resident memory of a running share besides its own pieces: the rtcshare binary's pages
    /// (5.1–5.5 MiB: the Swift runtime's code 2.4, ours 1.1, C 0.5, the rest read-only data and
    /// Swift metadata), libc, libstdc++, libm and ld.so (3.3), the codec libraries' code
    /// (libvpx, openh264, libopus …: 1.75), the Swift runtime's heap and the threads' stacks.
    /// Measured mid-share as the resident size of a testsrc share to a file (no transport: 15.5
    /// MiB at 640x360, 24.5 at 1280x720, with the binary gold linked) less the encoder
    /// (`vp8EncoderReclaimedBytes`), the source frames and the budget bookkeeping: 11.4 and 11.2
    /// MiB; the shipped link (`scripts/build-release`) takes 1.0–1.2 MiB off every share's
    /// running figure (12 configurations, `bench/harness/planner_case.py`), and loading openh264
    /// only when H.264 is used another 0.3 (`openh264CodeBytes`: the 14 VP8 shares of
    /// `planner_case.py` peaked 0.0–0.8 MiB, mean 0.45, under their plan after that change).
    public static let runtimeBytes = (99 << 20) / 10
    /// Resident memory when the encoder opens (`ShareSession.prepareEncoder`), the first thing
    /// of size a share makes: the runtime with less of its code touched yet. Measured as a
    /// share's start-up peak (33.8 MiB, `--peer`, 1280x720, shipped link) less the encoder's
    /// start-up growth measured alone (`bench/Sources/encoder-alone`: 24.96 MiB), less the
    /// 0.3 MiB openh264 no longer holds there (see `runtimeBytes`).
    public static let startupRuntimeBytes = (88 << 20) / 10
    /// libopenh264's pages once loaded (its relocations, initialisers and the code an encoder
    /// runs): a share loads it with its H.264 encoder, so the H.264 figures below carry it (they
    /// were calibrated while it was linked into every process, inside `runtimeBytes`).
    public static let openh264CodeBytes = 5 << 16

    /// A figure measured at two sizes, taken as linear in the pixel count between and beyond
    /// them (libvpx's and openh264's buffers are per macroblock).
    static func linear(_ measured: (small: (size: PictureSize, mib: Double), large: (size: PictureSize, mib: Double)),
                       _ size: PictureSize) -> Int {
        let (small, large) = measured
        let perPixel = (large.mib - small.mib) * 1_048_576 / Double(large.size.pixels - small.size.pixels)
        let fixed = small.mib * 1_048_576 - perPixel * Double(small.size.pixels)
        return Int(fixed + perPixel * Double(size.pixels))
    }
    static let size360 = PictureSize(width: 640, height: 360)
    static let size720 = PictureSize(width: 1280, height: 720)
    static let size1080 = PictureSize(width: 1920, height: 1080)

    /// A figure measured at 640x360, 1280x720 and 1920x1080: linear between the first two up to
    /// 1280x720, between the last two above it.
    static func linear(_ mib360: Double, _ mib720: Double, _ mib1080: Double, _ size: PictureSize) -> Int {
        size.pixels <= size720.pixels ? linear(((size360, mib360), (size720, mib720)), size)
                                      : linear(((size720, mib720), (size1080, mib1080)), size)
    }

    /// libvpx VP8 (1.12, realtime, one thread) without the start-up reclaim: all of its token
    /// buffer stays resident. The anonymous growth of the encoder alone (`encoder-alone
    /// --no-reclaim`, 120 frames of testsrc): 8.51 MiB at 640x360, 31.33 MiB at 1280x720 (69 at
    /// 1920x1080 by this line; a 1080p share measured 72 with libvpx's code, which
    /// `runtimeBytes` holds). The library's default; the CLI gives the pages back.
    public static func vp8EncoderBytes(_ size: PictureSize) -> Int {
        linear(((size360, 8.51), (size720, 31.33)), size) + size.pixels
    }
    /// libvpx VP8 with its start-up zero-fill left out (`reclaimEncoderStartupMemory`): what
    /// stays resident once encoding — the anonymous growth of the encoder alone
    /// (`bench/Sources/encoder-alone`, 120 frames of testsrc at 20 fps, as a share encodes
    /// them): 3.19 MiB at 640x360, 10.44 MiB at 1280x720 (libvpx's code pages are in
    /// `runtimeBytes`); 22.9 MiB at 1920x1080, calibrated on the shipped build against 1080p
    /// testsrc shares with audio (`planner_case.py`: 44.9 MiB over `--peer`, 52.9 through a
    /// WHIP reconnect, at 23.2; 0.3 less since the `--peer` share measured 39.6 against 40.4
    /// planned on the build with the hidden keyframe sweep). Screen content writes a small part
    /// of the token buffer; content busy everywhere writes more of it (a 1080p page of dense text at libvpx's coarsest quantizer:
    /// ~14 MiB of tokens, the encoder alone 25–32 MiB; the governor answers that, not the plan).
    /// Plus one luma plane: the frame libvpx codes at the speed that searches the loop-filter
    /// level over the whole picture (one in ten while the picture is easy,
    /// `VP8Encoder.Configuration.loopFilterSearchInterval`) makes its filter-trial frame's luma
    /// resident (measured at 1280x720: the encoder alone 45 336 → 46 140 KiB, +0.8 MiB).
    /// Above 1600x900, less `vp8ProgressiveSavedBytes`.
    public static func vp8EncoderReclaimedBytes(_ size: PictureSize) -> Int {
        let whole = linear(3.19, 10.44, 22.9, size) + size.pixels
        guard VP8Encoder.codesProgressiveKeyframes(width: size.width, height: size.height) else { return whole }
        return whole - vp8ProgressiveSavedBytes(size)
    }
    /// What libvpx no longer makes resident above 1600x900, where a keyframe is coded from a flat
    /// picture and no frame codes more than an eighth of the macroblocks (`VP8ProgressiveKeyframe`):
    /// its token buffer's pages follow what one frame codes. Measured on the shipped build,
    /// 1920x1080 testsrc shares with audio (`planner_case.py`, medians of 3, one sitting):
    /// `--peer` 42.1 → 40.0 MiB, WHIP through a reconnect 50.1 → 49.6; 1.8 MiB at 1080p keeps
    /// both planned over their peak (40.4 and 49.8; the WHIP share 43.8 against 43.4 since its
    /// reconnect lets the encoder go), taken as per pixel.
    static func vp8ProgressiveSavedBytes(_ size: PictureSize) -> Int {
        Int(1.8 * 1_048_576 * Double(size.pixels) / Double(size1080.pixels))
    }
    /// The resident growth while libvpx starts. Its token buffer (6 KiB a macroblock) is
    /// zero-filled at init, but that fill is left out (`StartupZeroFill`), so only what init
    /// writes otherwise is resident: measured alone (the encoder's anonymous growth over
    /// `rtcs_vpx_enc_init`, plus libvpx's code, 0.75), 1.6 / 2.55 / 4.4 MiB at 640x360 /
    /// 1280x720 / 1920x1080 (it was 7.45 / 24.96 / 54 with the fill made resident, before its
    /// pages were given back).
    public static func vp8EncoderStartupBytes(_ size: PictureSize) -> Int {
        linear(1.6, 2.55, 4.4, size)
    }
    /// What audio adds to a running share beside its budget and its libraries' heap: the pages
    /// of libopus's and libspeexdsp's code it runs and the audio thread's stack. Measured as the
    /// difference of the same share with `--audio testtone` and `--audio none`: 0.32–0.41 MiB
    /// (`--peer` and `--whip`, 640x360 and 1280x720), budget and heap 0.1 of it.
    public static let audioCodeBytes = 1 << 18
    /// openh264 (2.3.1, screen-content realtime, one thread, one slice) once running: what it
    /// keeps resident. It opens higher (`h264EncoderStartupBytes`) and gives ~12 MiB back at
    /// 1280x720 after its first frames. Calibrated on the shipped build against the shares whose
    /// peak is the running phase (`bench/harness/planner_case.py`, H.264 with audio: `--whip`
    /// 26.1–27.2 / 36.8–36.9 MiB at 640x360 / 1280x720 in two runs, less the plan's other
    /// items): 4.9 / 13.0 MiB.
    /// Above `H264Encoder.Configuration.screenContentMaximumPixels` openh264 codes in camera
    /// mode (`h264CameraModeBytes`).
    public static func h264EncoderBytes(_ size: PictureSize) -> Int {
        if h264InCameraMode(size) { return h264CameraModeBytes(size) }
        return linear(((size360, 4.9), (size720, 13.0)), size) + openh264CodeBytes
    }
    /// Whether openh264 codes `size` in camera mode (`H264Encoder.Configuration.contentModeIsScreen`).
    static func h264InCameraMode(_ size: PictureSize) -> Bool {
        size.pixels > H264Encoder.Configuration.screenContentMaximumPixels
    }
    static let size900 = PictureSize(width: 1600, height: 900)
    /// openh264 in camera mode (the sizes above 1280x720): without screen content's block
    /// feature tables it writes its buffers at its first frames and keeps them, so its start-up
    /// is no phase of its own and a WHIP share's late first frames add nothing. Calibrated on
    /// the shipped build against `--peer` testsrc shares with audio, whose resident size is
    /// flat from the first frames on (36.9 / 30.7 MiB at 1920x1080 / 1600x900, less the plan's
    /// other items): 15.7 / 11.2 MiB; a WHIP 1080p share through a reconnect, 46.2–46.5 MiB,
    /// agrees within 0.3. With the start-up's code pages let go, three rehearsals measured the
    /// 1080p `--peer` share 0.9, 1.0 and over 1 MiB under its plan, and the WHIP one 0.7–0.9: the
    /// 1080p point is 0.4 lower (15.3), still over every measured peak.
    static func h264CameraModeBytes(_ size: PictureSize) -> Int {
        linear(((size900, 11.19), (size1080, 15.3)), size) + openh264CodeBytes
    }
    /// openh264's growth while it opens and codes its first frames, before it gives part back:
    /// a `--peer` H.264 share's peak is this phase (22.1 / 35.5 MiB at 640x360 / 1280x720 on
    /// the shipped build, `planner_case.py`, less `startupRuntimeBytes` and openh264's code):
    /// 13.0 / 26.4 MiB (screen-content mode; it was 48.2 at 1920x1080, a 1080p share 57.7 MiB,
    /// before the sizes above 1280x720 went to camera mode).
    /// Its zero-fill at open is left out (`StartupZeroFill`), but its first frames write those
    /// buffers (reference pictures, screen-content motion search tables): the phase stays.
    /// (The figure this replaces, 8.1 / 21.3 MiB measured as a difference from VP8's peak,
    /// planned H.264 shares 2.7–8.3 MiB too high.)
    public static func h264EncoderStartupBytes(_ size: PictureSize) -> Int {
        if h264InCameraMode(size) { return h264CameraModeBytes(size) }
        return linear(((size360, 13.0), (size720, 26.4)), size) + openh264CodeBytes
    }

    /// What openh264 keeps besides `h264EncoderBytes` when its first frames come after the
    /// transport (`ShareConfiguration.videoWaitsForConnection`: a WHIP share encodes nothing
    /// until DTLS-SRTP is up). Its first frames then grow it by ~12 MiB at 1280x720 on top of
    /// everything the connection made resident, and less of that goes back. Measured on the
    /// shipped build, 1280x720@20 H.264 WHIP shares with audio into aiortc: 40.1–40.5 MiB
    /// peak (8 runs), against 37.5–37.9 MiB in the runs where a frame or two had been encoded
    /// before the connection came up (and 41.2–41.5 where none had) before video waited for
    /// it; 640x360: 26.6–27.3 against 26.0. Less `h264EncoderBytes`' share: 3.5 / 0.2 MiB.
    public static func h264LateFirstFramesBytes(_ size: PictureSize) -> Int {
        if h264InCameraMode(size) { return 0 }
        return max(0, linear(((size360, 0.2), (size720, 3.5)), size))
    }

    /// openh264's first frames' growth above its running figure when they come after the
    /// start-up's pages were let go (`--peer`: with its first frame): measured as the peak of
    /// `--peer` H.264 shares with audio less their running plan (`planner_case.py`, medians of
    /// 3): 1.6 / 3.2 MiB at 640x360 / 1280x720; none in camera mode (1920x1080: 0.7 under).
    public static func h264FirstFramesAfterReleaseBytes(_ size: PictureSize) -> Int {
        if h264InCameraMode(size) { return 0 }
        return max(0, linear(((size360, 1.6), (size720, 3.2)), size))
    }

    /// What the encoder of `choice` takes at `size`; `auto` (a WHIP offer of both) plans for
    /// the larger, whichever the server picks.
    /// `reclaimed`: VP8's start-up zero pages are given back (`vp8EncoderReclaimedBytes`).
    /// `lateFirstFrames`: the first frames are encoded after the transport has loaded.
    public static func encoderBytes(_ choice: VideoCodecChoice, _ size: PictureSize, reclaimed: Bool = false,
                                    lateFirstFrames: Bool = false) -> Int {
        let vp8 = reclaimed ? vp8EncoderReclaimedBytes(size) : vp8EncoderBytes(size)
        let h264 = h264EncoderBytes(size) + (lateFirstFrames ? h264LateFirstFramesBytes(size) : 0)
        switch choice {
        case .vp8: return vp8
        case .h264: return h264
        case .auto: return max(vp8, h264)
        }
    }

    public static func encoderName(_ choice: VideoCodecChoice) -> String {
        switch choice {
        case .vp8: "VP8"
        case .h264: "H.264"
        case .auto: "VP8 or H.264"
        }
    }

    /// Bookkeeping the budget keeps besides what the items count (block headers, alignment).
    static let budgetSlackBytes = 256 << 10

    /// The plan for streaming `source` (format and stored size) at `output`.
    public static func plan(configuration: ShareConfiguration, sourceFormat: PixelFormat,
                            sourceWidth: Int, sourceHeight: Int, sourceAlwaysUpright: Bool,
                            output: PictureSize) -> MemoryPlan {
        let frameBytes = (sourceFormat.bytes(width: sourceWidth, height: sourceHeight) ?? 0) + 128
        let needsTransform = !(sourceFormat == .i420 && sourceAlwaysUpright
                               && sourceWidth == output.width && sourceHeight == output.height)
        // libvpx's start-up zero-fill is left out (the CLI asks for it); openh264's first frames
        // write most of what it zeroes, and it gives part back by itself: either way the running
        // line is the smaller figure, the start-up phase the larger.
        let reclaims = configuration.reclaimEncoderStartupMemory && configuration.videoCodec != .h264
        let encoder = encoderBytes(configuration.videoCodec, output, reclaimed: reclaims,
                                   lateFirstFrames: configuration.videoWaitsForConnection)
        var items: [MemoryPlan.Item] = [
            .init(name: "runtime and libraries", bytes: runtimeBytes),
            .init(name: "\(encoderName(configuration.videoCodec)) encoder \(output)"
                  + (reclaims ? " (start-up zero-fill left out)" : ""),
                  bytes: encoder),
            .init(name: "source frames \(MemoryPlan.sourceSlots) x \(sourceWidth)x\(sourceHeight) \(sourceFormat)",
                  bytes: MemoryPlan.sourceSlots * frameBytes),
        ]
        var budget = MemoryPlan.sourceSlots * frameBytes + 4096
        if needsTransform {
            let outBytes = (PixelFormat.i420.bytes(width: output.width, height: output.height) ?? 0) + 128
            let scratch = (try? FrameTransformer.scratchBytes(
                maxSourceWidth: sourceWidth, maxSourceHeight: sourceHeight,
                maxOutputWidth: output.width, maxOutputHeight: output.height)) ?? 0
            items.append(.init(name: "encoder input frames \(MemoryPlan.outputSlots) x \(output)",
                               bytes: MemoryPlan.outputSlots * outBytes))
            items.append(.init(name: "transform scratch", bytes: scratch))
            budget += MemoryPlan.outputSlots * outBytes + scratch
        }
        // Which macroblocks changed since the last coded picture (VideoStage): 9 bytes a macroblock.
        let changeMapBytes = ChangeMap.bytes(width: output.width, height: output.height) ?? 0
        items.append(.init(name: "change map \(output)", bytes: changeMapBytes))
        budget += changeMapBytes + 64
        if configuration.outputBudgetBytes > 0 {
            items.append(.init(name: "packet history (retransmissions)", bytes: configuration.outputBudgetBytes))
            budget += configuration.outputBudgetBytes
        }
        if configuration.outputHeapBytes > 0 {
            items.append(.init(name: "transport: crypto libraries, sockets", bytes: configuration.outputHeapBytes))
        }
        if let audio = configuration.audio {
            // Opus state, framing ring and buffers in the budget; libspeexdsp, libogg and a
            // WAV read buffer on the heap (measured: see Resampler, OggOpusWriter).
            items.append(.init(name: "audio: Opus 48 kHz, resampler, 20 ms framing",
                               bytes: audio.budgetBytes + audio.heapBytes + audioCodeBytes))
            budget += audio.budgetBytes
        }
        budget += budgetSlackBytes
        items.append(.init(name: "budget bookkeeping", bytes: budgetSlackBytes))
        if configuration.outputReleasedStartupBytes > 0 {
            items.append(.init(name: "start-up's code pages let go once under way",
                               bytes: -configuration.outputReleasedStartupBytes))
        }
        var plan = MemoryPlan(outputSize: output, items: items, budgetBytes: budget,
                              needsTransform: needsTransform, capBytes: configuration.memoryCapBytes)
        plan.videoCodec = configuration.videoCodec
        plan.encoderBytes = encoder
        plan.closingHeapBytes = configuration.outputClosingHeapBytes
        plan.reconnectHeapBytes = configuration.outputReconnectHeapBytes
        switch configuration.videoCodec {
        case .vp8 where configuration.releasesEncoderWhileReconnecting(.vp8): plan.encoderKeptWhileReconnectingBytes = 0
        case .auto where configuration.releasesEncoderWhileReconnecting(.vp8):
            plan.encoderKeptWhileReconnectingBytes = encoderBytes(.h264, output, lateFirstFrames: configuration.videoWaitsForConnection)
        default: plan.encoderKeptWhileReconnectingBytes = encoder
        }
        plan.releasedStartupBytes = configuration.outputReleasedStartupBytes
        // Opened, nothing coded yet (video waits for the connection): its start-up growth.
        plan.encoderOpenBytes = configuration.videoCodec == .h264 ? openh264CodeBytes : vp8EncoderStartupBytes(output)
        // The encoder is made first (`ShareSession.prepareEncoder`): at its start only the
        // runtime is resident beside it.
        switch configuration.videoCodec {
        case .vp8 where reclaims: plan.startupPeakBytes = startupRuntimeBytes + vp8EncoderStartupBytes(output)
        case .vp8: break
        case .h264: plan.startupPeakBytes = startupRuntimeBytes + h264EncoderStartupBytes(output)
        case .auto:
            plan.startupPeakBytes = startupRuntimeBytes + max(h264EncoderStartupBytes(output),
                                                              reclaims ? vp8EncoderStartupBytes(output) : 0)
        }
        // An output that lets the start-up's pages go with its first frame (`--peer`) has
        // openh264's first frames after that: their growth stands on the running share instead.
        if configuration.outputReleasedStartupBytes > 0, !configuration.videoWaitsForConnection,
           configuration.videoCodec != .vp8 {
            plan.startupPeakBytes = plan.totalBytes + h264FirstFramesAfterReleaseBytes(output)
        }
        return plan
    }

    /// `bytes` in MiB with one decimal, as `rtcshare plan`'s table prints it: a plan 0.6 MiB
    /// over a 50 MiB cap is not "50 MiB, over the 50 MiB cap".
    static func tenthsOfMiB(_ bytes: Int) -> String {
        let tenths = (bytes * 10 + (1 << 19)) >> 20
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// Output sizes tried by `--size auto`, largest first (16:9, then the source's own shape).
    public static let standardSizes = [
        PictureSize(width: 1920, height: 1080), PictureSize(width: 1600, height: 900),
        PictureSize(width: 1280, height: 720), PictureSize(width: 960, height: 540),
        PictureSize(width: 854, height: 480), PictureSize(width: 640, height: 360),
        PictureSize(width: 426, height: 240),
    ]
}

extension MemoryPlanner {
    /// The plan for a share of `source` at `output` (laid out already), with the source's own
    /// lines (its working and shared memory, its libraries), whether it fits or not.
    public static func plan<S: VideoSource>(_ configuration: ShareConfiguration, for source: S,
                                            output: PictureSize) -> MemoryPlan {
        var p = Self.plan(configuration: configuration, sourceFormat: source.format,
                          sourceWidth: source.frameWidth, sourceHeight: source.frameHeight,
                          sourceAlwaysUpright: source.fixedOrientation == .up || configuration.signalsOrientation,
                          output: output)
        if source.budgetBytes > 0 {
            p.items.append(.init(name: "\(source.name) working memory", bytes: source.budgetBytes))
            p.budgetBytes += source.budgetBytes
        }
        if let shared = source as? any SharedMemorySource, shared.sharedMemoryBytes > 0 {
            p.items.append(.init(name: "\(source.name) shared memory", bytes: shared.sharedMemoryBytes))
        }
        if source is WaylandSource {
            p.items.append(.init(name: "wayland: libwayland-client, libffi, the connection", bytes: WaylandSource.libraryBytes))
        }
        if source is PortalSource {
            p.items.append(.init(name: "portal: libpipewire, libdbus, PipeWire modules", bytes: PortalSource.libraryBytes))
            // An output that lets the start-up's pages go lets the portal's set-up pages go with them.
            if p.releasedStartupBytes > 0 {
                p.items.append(.init(name: "portal: its set-up's pages let go once under way", bytes: -PortalSource.setupPagesBytes))
                p.releasedStartupBytes += PortalSource.setupPagesBytes
            }
        }
        return p
    }

    /// The plan for a share of `source`: the output size asked for (laid out as the
    /// configuration's output orientation says) or, with no size given, the largest standard
    /// size no bigger than the source that fits the cap. Throws `.doesNotFit` naming the
    /// largest size that would fit.
    public static func resolve<S: VideoSource>(_ configuration: ShareConfiguration,
                                               for source: S) throws(ShareError) -> MemoryPlan {
        // With the orientation signalled (CVO) the picture is encoded as stored, not turned.
        let turn = configuration.signalsOrientation ? Orientation.up : (source.fixedOrientation ?? .up)
        let (uw, uh) = turn.uprightSize(width: source.frameWidth, height: source.frameHeight)
        let sourceIsPortrait = uh > uw
        func laidOut(_ size: PictureSize) -> PictureSize {
            let long = max(size.width, size.height), short = min(size.width, size.height)
            if configuration.signalsOrientation {
                return sourceIsPortrait ? PictureSize(width: short, height: long) : PictureSize(width: long, height: short)
            }
            switch configuration.outputOrientation {
            case .landscape: return PictureSize(width: long, height: short)
            case .portrait: return PictureSize(width: short, height: long)
            case .source: return sourceIsPortrait ? PictureSize(width: short, height: long)
                                                  : PictureSize(width: long, height: short)
            }
        }
        func plan(_ output: PictureSize) -> MemoryPlan { Self.plan(configuration, for: source, output: output) }
        // The source's own size first (no scaling), then the standard sizes below it.
        let own = laidOut(PictureSize(width: max(uw & ~1, 16), height: max(uh & ~1, 16)))
        var candidates = [own]
        for size in standardSizes {
            let s = laidOut(size)
            if s.pixels < own.pixels { candidates.append(s) }
        }
        let largestFitting = candidates.first { plan($0).fits }
        if let asked = configuration.outputSize {
            let p = plan(laidOut(asked))
            guard p.fits else {
                let hint = largestFitting.map { "; the largest that fits is \($0) (or use --size auto)" } ?? ""
                throw .doesNotFit("\(p.outputSize) needs \(Self.tenthsOfMiB(p.peakBytes)) MiB, over the \(Self.tenthsOfMiB(configuration.memoryCapBytes)) MiB cap\(hint)")
            }
            return p
        }
        guard let size = largestFitting else {
            throw .doesNotFit("no output size fits a \(configuration.memoryCapBytes >> 20) MiB cap")
        }
        return plan(size)
    }
}
