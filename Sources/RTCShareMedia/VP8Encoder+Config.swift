import CShims
import CVPX

extension VP8Encoder {
    /// How a `VP8Encoder` is set up. The defaults are for live screen content over a congested
    /// network: one pass, no lookahead, constant bitrate with a short buffer, fast motion search,
    /// keyframes only when asked (a PLI/FIR) plus an optional period.
    public struct Configuration: Sendable, Equatable {
        /// Picture size; fixed for the encoder's life (a new size is a new encoder).
        public var width: Int
        public var height: Int
        /// Target bitrate in kbit/s; `setBitrate(kbps:)` changes it while running.
        public var bitrateKbps: Int
        /// Nominal frame rate: the duration handed to the rate controller with each frame and
        /// its first guess of the rate (later it follows the timestamps).
        public var frameRate: Int = 30

        /// libvpx speed: negative is a fixed realtime speed (-16 fastest .. -1), positive lets
        /// libvpx pick a speed from measured encode time (which makes output depend on timing).
        /// -6 keeps 720p well inside a frame interval on one slow core; -8 is cheaper still.
        public var cpuUsed: Int = -6
        /// Every this many frames, while the picture is easy for the rate (the last frame's
        /// quantizer at most `loopFilterSearchMaxQuantizer`), one frame is coded at speed 4
        /// (`loopFilterSearchCPUUsed`), whose loop-filter level is searched over the whole
        /// frame. At faster speeds libvpx tries only the levels next to the last one on a strip
        /// across the middle of the picture, and keeps the level when that strip is flat (a
        /// desktop's middle often is): the strong level a coarse keyframe got then stays for
        /// good, and every later frame, however fine its quantizer, is deblocked across the
        /// edges of flat boxes and text. On bench/run's screen clip at 2500 kbit/s that held
        /// the viewer's picture at 52 dB PSNR-Y while every frame still cost ~2.4 KB (0.6
        /// Mbit/s); with one frame in ten searched it refines to 63 dB at 0.24 Mbit/s. The first
        /// search makes the luma plane of libvpx's filter-trial frame resident (the strip search
        /// touches an eighth of it): +0.8 MiB at 1280x720, measured. nil: never.
        public var loopFilterSearchInterval: Int? = 10
        /// The quantizer (0 ... 63) at or under which the last frame counts as easy: busy
        /// content at its rate runs at a higher one, where speed 4's motion search would cost
        /// ten times the frame's time for a level the strip search finds as well.
        public var loopFilterSearchMaxQuantizer: Int = 20
        /// The speed of the searching frame: the fastest whose loop-filter level is searched
        /// over the whole frame (speeds 3 and 5 and above search the strip).
        public static let loopFilterSearchCPUUsed = -4
        /// Screen-content tools in the VP8 encoder. Off: measured on bench/run's 30 s desktop
        /// clip (libvpx 1.12, quantizer 2...56) they bought nothing — viewer PSNR-Y 44.4 dB off,
        /// 44.3 `.on`, 43.2 `.aggressive` at 800 kbit/s; 52.4, 52.3, 52.0 at 2500 — and
        /// `.aggressive` dropped 39 of 150 frames of busy content at 1000 kbit/s where off
        /// dropped 15. ffmpeg and GStreamer do not set it either.
        public var screenContent: ScreenContentMode = .off
        /// Macroblocks whose change is below this are coded as unchanged (skipped). Screen
        /// content is mostly static, and one changed text pixel is far above 100.
        public var staticThreshold: Int = 100
        /// Denoising strength 0 ... 6. A screen has no sensor noise, and 0 spares the denoiser's
        /// frame buffers (several MiB at 720p).
        public var noiseSensitivity: Int = 0
        /// How many DCT token partitions a frame is split into; more lets a receiver's decoder
        /// work on several macroblock rows at once. Four cost 3 partition sizes and a few bytes
        /// of coder flush per frame: measured in libvpx 1.12 with the bench's settings, the same
        /// bytes and PSNR-Y on busy content at 2500 kbit/s (3039.6 kB, 33.48 dB against 3039.7
        /// kB, 33.47 dB with one), 1.5 % of the screen clip's 264 kB
        /// (`bench/harness/vp8_resilience_ab.py`).
        public var tokenPartitions: TokenPartitions = .four
        /// Frames do not depend on probability state a lost frame may have changed
        /// (`VPX_ERROR_RESILIENT_DEFAULT`). A receiver that waits for a keyframe after a loss
        /// (libwebrtc, ffmpeg, `rtcshare receive`) gains nothing from it; one that decodes on
        /// (GStreamer's rtpvp8depay by default, over `--peer` with no NACK or PLI) shows a
        /// drifting picture instead of a broken one until the next keyframe: busy content with
        /// one inter frame lost for good stayed at a median 32.5-36.0 dB PSNR-Y against the
        /// intact decode; not resilient, 14.7-21.1 dB in five drops of six. Every variant is
        /// whole again from the next keyframe. What it costs, measured in libvpx 1.12 with the
        /// bench's settings: nothing on busy content at 2500 kbit/s (33.48 dB on, 33.51 off, the
        /// same bytes), 7 % of the screen clip's bytes at the same PSNR-Y (264 against 246 kB),
        /// and on the 30 s desktop clip at 800 kbit/s no more than the rate control's own spread
        /// (39.42 dB on, 39.13 off; 39.73 and 39.23 with one partition) —
        /// `bench/harness/vp8_resilience_ab.py`.
        public var errorResilient: Bool = true

        /// A keyframe every this many frames regardless of requests; nil: only on request (and
        /// the first frame). Counted from the last keyframe of any cause.
        public var periodicKeyframeInterval: Int? = nil
        /// A keyframe request this soon after the last accepted one is dropped: a receiver that
        /// repeats PLIs, or many receivers behind an SFU, cannot make every frame a keyframe.
        public var minimumKeyframeRequestIntervalMicroseconds: Int64 = 500_000
        /// Largest keyframe as a percentage of the average frame at the target rate
        /// (`VP8E_SET_MAX_INTRA_BITRATE_PCT`), while the share runs at its configured rate. 0: no
        /// cap. A coarser keyframe costs more later: on screen content the frames after it
        /// refine the still picture, so at 300 % a 720p screen share sent twice the bits of
        /// 900 % (0.55 against 0.26 Mbit/s, `bench/run`'s screen case).
        public var maxKeyframeSizePercent: Int = 900
        /// The cap while the network holds the rate below the configured one
        /// (`setKeyframeCap(constrained:)`): 300 % is 150 ms of the target at 20 fps, a burst a
        /// shallow bottleneck queue takes.
        public static let constrainedKeyframeSizePercent = 300

        /// Quantizer range, 0 (best) ... 63 (worst). Up to 56, as ffmpeg and GStreamer: the
        /// coarsest steps make frames (a scroll, a slide change) that the still picture after
        /// them needs many frames to refine — on the 30 s desktop clip at 800 kbit/s the viewer
        /// got 44.4 dB with 56, 40.6 with 63. With screen-content mode off, busy content at a
        /// thin 1000 kbit/s drops about one frame in ten at 56 and looks no worse for it
        /// (31.8 dB against 31.5 at 63 with the aggressive mode, which dropped 39 of 150).
        public var minQuantizer: Int = 2
        public var maxQuantizer: Int = 56
        /// The coarsest quantizer while the network holds the rate below the configured one
        /// (`setKeyframeCap(constrained:)`): there busy content is better coarse than dropped
        /// (at 56, 720p moving content at 1 Mbit/s overshot its target and the encoder dropped
        /// frames to pay it back).
        public static let constrainedMaxQuantizer = 63
        /// Rate-control buffer in milliseconds of data at the target rate: its size, the level
        /// it starts at and the level it aims for. Short, so a burst is paid back within about
        /// a second instead of building queueing delay.
        public var bufferMilliseconds: Int = 1000
        public var bufferInitialMilliseconds: Int = 500
        public var bufferOptimalMilliseconds: Int = 600
        /// How far a frame may fall below / rise above its budget, in percent of the target.
        public var undershootPercent: Int = 100
        public var overshootPercent: Int = 15
        /// Buffer fullness (percent of optimal) under which the encoder drops frames to hold the
        /// bitrate; 0 never drops. A dropped frame produces no output and is counted.
        public var frameDropThreshold: Int = 30
        /// Give back the all-zero pages libvpx wrote at init (`StartupZeroPages`: most of its
        /// per-macroblock token buffer). Only when no other thread of the process allocates and
        /// writes memory while an encoder starts; the CLI's share turns it on.
        public var reclaimStartupZeroPages = false

        public init(width: Int, height: Int, bitrateKbps: Int) {
            self.width = width
            self.height = height
            self.bitrateKbps = bitrateKbps
        }

        /// Every value in range, or the first one that is not.
        func validate() throws(MediaError) {
            func require(_ ok: Bool, _ what: String) throws(MediaError) {
                if !ok { throw .invalidConfiguration(what) }
            }
            // VP8 codes sizes in 14 bits; libvpx needs at least one pixel.
            try require((1...16383).contains(width), "width \(width) outside 1...16383")
            try require((1...16383).contains(height), "height \(height) outside 1...16383")
            try require((1...1_000_000).contains(bitrateKbps),
                        "bitrate \(bitrateKbps) kbit/s outside 1...1000000")
            try require((1...240).contains(frameRate), "frame rate \(frameRate) outside 1...240")
            try require((-16...16).contains(cpuUsed), "cpuUsed \(cpuUsed) outside -16...16")
            try require(staticThreshold >= 0, "static threshold \(staticThreshold) negative")
            try require((0...6).contains(noiseSensitivity),
                        "noise sensitivity \(noiseSensitivity) outside 0...6")
            if let interval = loopFilterSearchInterval {
                try require(interval >= 1, "loop filter search interval \(interval) below 1")
            }
            try require((0...63).contains(loopFilterSearchMaxQuantizer),
                        "loop filter search quantizer \(loopFilterSearchMaxQuantizer) outside 0...63")
            if let interval = periodicKeyframeInterval {
                try require(interval >= 1, "keyframe interval \(interval) below 1")
            }
            try require(minimumKeyframeRequestIntervalMicroseconds >= 0,
                        "keyframe request interval negative")
            try require(maxKeyframeSizePercent >= 0, "max keyframe size percent negative")
            try require((0...63).contains(minQuantizer) && (0...63).contains(maxQuantizer)
                            && minQuantizer <= maxQuantizer,
                        "quantizer range \(minQuantizer)...\(maxQuantizer) not within 0...63")
            try require(bufferMilliseconds > 0 && bufferInitialMilliseconds > 0
                            && bufferOptimalMilliseconds > 0
                            && bufferInitialMilliseconds <= bufferMilliseconds
                            && bufferOptimalMilliseconds <= bufferMilliseconds,
                        "buffer sizes must be positive and not above the buffer size")
            try require((0...100).contains(undershootPercent), "undershoot percent outside 0...100")
            try require((0...100).contains(overshootPercent), "overshoot percent outside 0...100")
            try require((0...100).contains(frameDropThreshold), "frame drop threshold outside 0...100")
        }

        /// Nominal frame duration in microseconds.
        var frameDurationMicroseconds: Int64 { 1_000_000 / Int64(frameRate) }

        /// Writes these settings over libvpx's VP8 defaults in `cfg`.
        func apply(to cfg: inout vpx_codec_enc_cfg_t) {
            cfg.g_w = UInt32(width)
            cfg.g_h = UInt32(height)
            // Timestamps are microseconds, as frames carry them.
            cfg.g_timebase = vpx_rational(num: 1, den: 1_000_000)
            cfg.g_threads = 1
            cfg.g_lag_in_frames = 0
            cfg.g_pass = VPX_RC_ONE_PASS
            cfg.g_error_resilient = errorResilient ? vpx_codec_er_flags_t(VPX_ERROR_RESILIENT_DEFAULT) : 0
            cfg.rc_end_usage = VPX_CBR
            cfg.rc_target_bitrate = UInt32(bitrateKbps)
            cfg.rc_min_quantizer = UInt32(minQuantizer)
            cfg.rc_max_quantizer = UInt32(maxQuantizer)
            cfg.rc_undershoot_pct = UInt32(undershootPercent)
            cfg.rc_overshoot_pct = UInt32(overshootPercent)
            cfg.rc_buf_sz = UInt32(bufferMilliseconds)
            cfg.rc_buf_initial_sz = UInt32(bufferInitialMilliseconds)
            cfg.rc_buf_optimal_sz = UInt32(bufferOptimalMilliseconds)
            cfg.rc_dropframe_thresh = UInt32(frameDropThreshold)
            cfg.rc_resize_allowed = 0
            // Keyframes are placed by VP8Encoder (first frame, requests, the optional period),
            // never by libvpx's own scene-cut guess: a slide change should not cost a keyframe.
            cfg.kf_mode = VPX_KF_DISABLED
            cfg.kf_min_dist = 0
            cfg.kf_max_dist = 0
        }

        /// The encoder controls, as (control id, value) pairs, in the order they are set.
        var controls: [(Int32, Int32)] {
            [
                (Int32(VP8E_SET_CPUUSED.rawValue), Int32(cpuUsed)),
                (Int32(VP8E_SET_SCREEN_CONTENT_MODE.rawValue), screenContent.rawValue),
                (Int32(VP8E_SET_STATIC_THRESHOLD.rawValue), Int32(staticThreshold)),
                (Int32(VP8E_SET_NOISE_SENSITIVITY.rawValue), Int32(noiseSensitivity)),
                (Int32(VP8E_SET_TOKEN_PARTITIONS.rawValue), tokenPartitions.rawValue),
                (Int32(VP8E_SET_MAX_INTRA_BITRATE_PCT.rawValue), Int32(maxKeyframeSizePercent)),
                // No alt-ref: it needs lookahead, which realtime has none of.
                (Int32(VP8E_SET_ENABLEAUTOALTREF.rawValue), 0),
            ]
        }
    }

    /// `VP8E_SET_SCREEN_CONTENT_MODE`.
    public enum ScreenContentMode: Int32, Sendable {
        case off = 0
        /// Screen-content mode decisions.
        case on = 1
        /// As `on`, and a frame that overshoots its budget badly (a slide change) is dropped and
        /// the next one coded coarser, rather than the burst sitting in the network queue.
        /// Drops happen only with `frameDropThreshold` above 0.
        case aggressive = 2
    }

    /// `VP8E_SET_TOKEN_PARTITIONS`.
    public enum TokenPartitions: Int32, Sendable {
        case one = 0, two = 1, four = 2, eight = 3
    }
}
