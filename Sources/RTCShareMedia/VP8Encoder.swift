import CCore
import CShims
import CVPX
import RTCShareCore

/// A libvpx VP8 encoder for live screen content: realtime deadline, one pass, no lookahead,
/// constant bitrate that can be changed while running, keyframes on request (rate-limited) and
/// optionally on a period. Takes I420 frames straight from a `FramePool` slot — libvpx reads
/// the slot's planes in place, nothing is copied on the way in — and hands each encoded frame
/// out without allocating.
///
/// Non-copyable: one value owns one libvpx context, destroyed when the value ends. libvpx
/// allocates its own memory outside the CCore budget, most of it a per-macroblock token buffer
/// (21 MiB at 1280x720, 48 MiB at 1920x1080) that it zero-fills at init: resident whole unless
/// `reclaimStartupZeroPages` leaves that fill out (`StartupZeroFill`), when only the pages a
/// frame's tokens reach become resident.
///
/// Keyframes: the first frame is one. `requestKeyframe(nowMicroseconds:)` (a PLI or FIR) makes
/// the next frame one unless a request was accepted less than
/// `minimumKeyframeRequestIntervalMicroseconds` before; `periodicKeyframeInterval` adds one
/// every N frames counted from the last keyframe of any cause. libvpx places none of its own.
public struct VP8Encoder: ~Copyable, @unchecked Sendable {
    // Sendable: the context is used from one thread at a time, which non-copyability (one
    // owner) and `mutating` on every encoder call guarantee.

    // A Swift value may move in memory, but libvpx is handed these C structs by address and
    // links them to each other (the context points at its config), so they live at fixed heap
    // addresses, allocated once.
    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>
    private let codecConfig: UnsafeMutablePointer<vpx_codec_enc_cfg_t>
    private let image: UnsafeMutablePointer<vpx_image_t>

    /// The settings in force (the bitrate follows `setBitrate(kbps:)`).
    public private(set) var configuration: Configuration
    public private(set) var stats = Stats()
    /// Bytes of all-zero pages given back after libvpx's init (`reclaimStartupZeroPages`).
    public private(set) var startupBytesReclaimed = 0
    /// Bytes of libvpx's start-up zero-fill left out, never made resident (`StartupZeroFill`).
    public private(set) var startupZeroFillSkipped = 0
    /// libvpx's token buffer, found as the fill of its size left out at start (nil when not).
    /// Each frame's tokens are written from its start and packed before the frame is out, so
    /// after a frame with many of them (`tokenGiveBackFrameBytes`) its pages go back: a dense
    /// 1920x1080 keyframe makes ~14 MiB of it resident, which otherwise stays.
    private var tokenBuffer: UnsafeMutableRawBufferPointer?
    /// Bytes of token-buffer pages given back after frames, in all.
    public private(set) var tokenBytesGivenBack = 0
    /// The most of the token buffer one frame left resident (seen when its pages go back), when
    /// `measuresTokenResidency` is set: a diagnostic walk over the buffer's pages (mincore) that
    /// the share's encode path does not pay for.
    public private(set) var largestTokenBytesResident = 0
    public var measuresTokenResidency = false
    /// Frames from this size up (and keyframes) give the token buffer's pages back.
    static let tokenGiveBackFrameBytes = 32 << 10
    /// Frames coded at the speed that searches the loop-filter level over the whole frame
    /// (`Configuration.loopFilterSearchInterval`).
    public private(set) var loopFilterSearches = 0

    /// Frames coded with an active map (`encode(_:activeMap:_:)`), and whether libvpx holds one.
    public private(set) var activeMapFrames = 0
    private var activeMapSet = false
    /// Above 1600x900: keyframes from a flat picture, no frame coding more than a band, and the
    /// frames until the picture is whole marked not to be shown (`VP8ProgressiveKeyframe`).
    var progressive: VP8ProgressiveKeyframe

    private var keyframePending = false
    /// Spaces accepted keyframe requests (`minimumKeyframeRequestIntervalMicroseconds`).
    private var keyframeLimit: KeyframeRateLimit
    /// `VP8E_SET_MAX_INTRA_BITRATE_PCT` in force (`setKeyframeCap(constrained:)`); -1 before init.
    private var keyframeCapPercent = -1
    /// Frames out since the last keyframe, that keyframe included.
    private var framesSinceKeyframe = 0
    /// The timeline libvpx's rate control sees, and the caller's timestamp of its last frame
    /// (`submit`).
    private var lastEncoderPts: Int64?
    private var lastCallerPts: Int64?
    /// The caller let frames go by since the last it submitted: the longest step the next may
    /// take on the timeline (`noteSkipped`).
    private var stepAfterSkip: Int64?
    /// Frames since the last whose loop-filter level was searched over the whole frame
    /// (`Configuration.loopFilterSearchInterval`).
    private var framesSinceFilterSearch = 0

    /// The codec-neutral types, under the names this encoder has always used.
    public typealias Stats = VideoEncoderStats
    public typealias KeyframeRequestOutcome = RTCShareMedia.KeyframeRequestOutcome
    public typealias EncodedFrame = EncodedVideoFrame

    /// An encoded frame written into a caller's buffer.
    public struct EncodedFrameInfo: Equatable, Sendable {
        public let byteCount: Int
        public let isKeyframe: Bool
        public let isDroppable: Bool
        public let ptsMicroseconds: Int64
        /// A decoder shows the picture (false: hidden while a progressive keyframe sweeps in).
        public let isShown: Bool
    }

    /// Opens a VP8 encoder. Throws `.invalidConfiguration` for a value out of range, `.vpx` when
    /// libvpx refuses (`.memoryError` if it cannot get its memory).
    public init(_ configuration: Configuration) throws(MediaError) {
        try configuration.validate()

        let context = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        let codecConfig = UnsafeMutablePointer<vpx_codec_enc_cfg_t>.allocate(capacity: 1)
        codecConfig.initialize(to: vpx_codec_enc_cfg_t())
        let image = UnsafeMutablePointer<vpx_image_t>.allocate(capacity: 1)
        image.initialize(to: vpx_image_t())
        var opened = false
        // Until every stored property is set, a failure releases what exists so far by hand.
        func cleanUp() {
            if opened { vpx_codec_destroy(context) }
            context.deallocate()
            codecConfig.deallocate()
            image.deallocate()
        }

        do throws(MediaError) {
            try MediaError.check(vpx: vpx_codec_enc_config_default(vpx_codec_vp8_cx(), codecConfig, 0))
            configuration.apply(to: &codecConfig.pointee)
            // libvpx runs one thread (`apply(to:)`): it starts none that could write meanwhile.
            // Its zero-fill of the token buffer is left out first (`StartupZeroFill`); the
            // reclaim gives back what was zeroed by other means.
            let reclaim = configuration.reclaimStartupZeroPages
            let ((_, skipped), reclaimed) = try StartupZeroPages.around(enabled: reclaim) { () throws(MediaError) in
                try StartupZeroFill.around(.libvpx, enabled: reclaim) { () throws(MediaError) in
                    try MediaError.check(vpx: rtcs_vpx_enc_init(context, codecConfig, 0), context: context)
                    opened = true
                    for (control, value) in configuration.controls {
                        try MediaError.check(vpx: rtcs_vpx_control_int(context, control, value),
                                             context: context)
                    }
                }
            }
            startupBytesReclaimed = reclaimed
            startupZeroFillSkipped = skipped
            if skipped > 0, let fill = StartupZeroFill.largestFill(),
               fill.count == Self.tokenBufferBytes(width: configuration.width, height: configuration.height) {
                tokenBuffer = fill
            }
        } catch {
            cleanUp()
            throw error
        }

        // The descriptor libvpx reads input from: I420 at the fixed size. The plane pointers
        // and strides are set per frame to the slot's own (64-byte aligned rows, three separate
        // planes), which vpx_img_wrap's single contiguous buffer could not describe.
        image.pointee.fmt = VPX_IMG_FMT_I420
        image.pointee.cs = VPX_CS_BT_601
        image.pointee.range = VPX_CR_STUDIO_RANGE
        image.pointee.w = UInt32(configuration.width)
        image.pointee.h = UInt32(configuration.height)
        image.pointee.d_w = UInt32(configuration.width)
        image.pointee.d_h = UInt32(configuration.height)
        image.pointee.bit_depth = 8
        image.pointee.x_chroma_shift = 1
        image.pointee.y_chroma_shift = 1
        image.pointee.bps = 12

        self.context = context
        self.codecConfig = codecConfig
        self.image = image
        self.configuration = configuration
        // Only where the token buffer's pages can go back after a frame: resident whole (its
        // zero-fill done), bands would bound nothing.
        progressive = VP8ProgressiveKeyframe(width: configuration.width, height: configuration.height,
                                             enabled: tokenBuffer != nil)
        keyframeCapPercent = configuration.maxKeyframeSizePercent
        keyframeLimit = KeyframeRateLimit(minimumIntervalMicroseconds: configuration.minimumKeyframeRequestIntervalMicroseconds)
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
        codecConfig.deallocate()
        image.deallocate()
    }

    public var width: Int { configuration.width }
    public var height: Int { configuration.height }

    /// The largest frame libvpx can produce at this size (its own output buffer's size): a
    /// buffer this big never makes `encode(_:into:)` fail.
    public var maximumFrameBytes: Int { max(width * height * 3, 32768) }

    /// Changes the target bitrate from the next frame on (congestion control's output).
    public mutating func setBitrate(kbps: Int) throws(MediaError) {
        guard (1...1_000_000).contains(kbps) else {
            throw .invalidConfiguration("bitrate \(kbps) kbit/s outside 1...1000000")
        }
        guard kbps != configuration.bitrateKbps else { return }
        codecConfig.pointee.rc_target_bitrate = UInt32(kbps)
        try MediaError.check(vpx: vpx_codec_enc_config_set(context, codecConfig), context: context)
        configuration.bitrateKbps = kbps
    }

    /// The caller let a frame go by unencoded (over its budget) while feeding frames
    /// `frameIntervalMicroseconds` apart: the next is sized for one such interval, not for the
    /// time since the last it was given (see `submit`).
    public mutating func noteSkipped(frameIntervalMicroseconds: Int64) {
        stepAfterSkip = max(frameIntervalMicroseconds, 1)
    }

    /// Whether the rate controller may drop the next frames (`rc_dropframe_thresh` at the
    /// configured `frameDropThreshold`) or must code them, however far over budget (0). The
    /// caller turns dropping off for a frame when the picture has gone too long without one: a
    /// streak of drops is a freeze at the receiver. The coded frame is still paid for — libvpx
    /// keeps its buffer level, so the frames after it are dropped until the debt is back.
    public mutating func setFrameDropping(allowed: Bool) throws(MediaError) {
        let threshold = UInt32(allowed ? configuration.frameDropThreshold : 0)
        guard codecConfig.pointee.rc_dropframe_thresh != threshold else { return }
        codecConfig.pointee.rc_dropframe_thresh = threshold
        try MediaError.check(vpx: vpx_codec_enc_config_set(context, codecConfig), context: context)
    }

    /// Keyframes capped at `Configuration.constrainedKeyframeSizePercent` and the quantizer
    /// allowed up to `Configuration.constrainedMaxQuantizer` while the network holds the rate
    /// below the configured one; the configured `maxKeyframeSizePercent` and `maxQuantizer`
    /// otherwise (from the next frame on).
    public mutating func setKeyframeCap(constrained: Bool) throws(MediaError) {
        let maxQuantizer = UInt32(constrained ? max(configuration.maxQuantizer, Configuration.constrainedMaxQuantizer)
                                              : configuration.maxQuantizer)
        if codecConfig.pointee.rc_max_quantizer != maxQuantizer {
            codecConfig.pointee.rc_max_quantizer = maxQuantizer
            try MediaError.check(vpx: vpx_codec_enc_config_set(context, codecConfig), context: context)
        }
        let percent = constrained ? Configuration.constrainedKeyframeSizePercent : configuration.maxKeyframeSizePercent
        guard percent != keyframeCapPercent else { return }
        try MediaError.check(vpx: rtcs_vpx_control_int(context, Int32(VP8E_SET_MAX_INTRA_BITRATE_PCT.rawValue), Int32(percent)),
                             context: context)
        keyframeCapPercent = percent
    }

    /// Asks for the next frame to be a keyframe (a PLI or FIR arrived at `now`, on any
    /// monotonic microsecond clock the caller keeps using). Refused when a request was accepted
    /// less than `minimumKeyframeRequestIntervalMicroseconds` earlier.
    @discardableResult
    public mutating func requestKeyframe(nowMicroseconds now: Int64) -> KeyframeRequestOutcome {
        guard keyframeLimit.accept(at: now) else {
            stats.keyframeRequestsLimited += 1
            return .rateLimited
        }
        keyframePending = true
        stats.keyframeRequestsAccepted += 1
        return .accepted
    }

    /// Makes the next frame a keyframe whatever the rate limit says: media just started to flow
    /// to a receiver that has seen nothing (a WebRTC connection came up).
    public mutating func forceKeyframe(nowMicroseconds now: Int64) {
        keyframeLimit.restart(at: now)
        keyframePending = true
    }

    /// Whether the next frame will be forced to be a keyframe.
    public var keyframeWillBeForced: Bool {
        if keyframePending { return true }
        if let interval = configuration.periodicKeyframeInterval, framesSinceKeyframe >= interval {
            return true
        }
        return false
    }

    /// Encodes `frame` (I420 at the encoder's size; its `ptsMicroseconds` is the timestamp)
    /// and gives the encoded frame to `body`. Returns false, without calling `body`, when the
    /// rate controller dropped the frame.
    @discardableResult
    public mutating func encode(_ frame: borrowing FrameSlot, activeMap: ActiveMap? = nil,
                                _ body: (EncodedFrame) -> Void) throws(MediaError) -> Bool {
        let pts = frame.ptsMicroseconds
        try submit(frame, activeMap: activeMap)
        guard let packet = takeFramePacket() else { return false }
        let data = packet.pointee.data.frame
        let bytes = UnsafeRawBufferPointer(start: data.buf, count: data.sz)
        body(EncodedFrame(bytes: bytes,
                          isKeyframe: Self.has(VPX_FRAME_IS_KEY, data.flags),
                          isDroppable: Self.has(VPX_FRAME_IS_DROPPABLE, data.flags),
                          ptsMicroseconds: pts, isShown: VP8FrameTag.isShown(bytes) ?? true))
        return true
    }

    /// Encodes `frame` as `encode(_:_:)` does, writing the encoded frame to the start of
    /// `buffer`; nil when the rate controller dropped the frame. A buffer too small throws
    /// `.bufferTooSmall` — that frame is lost, so the next one is made a keyframe.
    public mutating func encode(_ frame: borrowing FrameSlot, activeMap: ActiveMap? = nil,
                                into buffer: UnsafeMutableRawBufferPointer) throws(MediaError)
        -> EncodedFrameInfo?
    {
        let pts = frame.ptsMicroseconds
        try submit(frame, activeMap: activeMap)
        guard let packet = takeFramePacket() else { return nil }
        let data = packet.pointee.data.frame
        guard data.sz <= buffer.count, let source = data.buf else {
            keyframePending = true
            throw .bufferTooSmall(needed: data.sz, available: buffer.count)
        }
        buffer.baseAddress!.copyMemory(from: source, byteCount: data.sz)
        return EncodedFrameInfo(byteCount: data.sz,
                                isKeyframe: Self.has(VPX_FRAME_IS_KEY, data.flags),
                                isDroppable: Self.has(VPX_FRAME_IS_DROPPABLE, data.flags),
                                ptsMicroseconds: pts,
                                isShown: VP8FrameTag.isShown(UnsafeRawBufferPointer(start: source, count: data.sz)) ?? true)
    }

    /// The quantizer at or under which a frame counts as fine (`VideoEncoder.lastPictureRefined()`):
    /// within 2 of the finest the configuration allows. A macroblock leaves the active map only
    /// after 30 such frames, so a still picture goes on refining as long as the rate lets it.
    /// With 20 (where a still screen at 2500 kbit/s is within a second) bench/run's desktop clip
    /// at 800 kbit/s stopped refining the still parts at a middling picture: 100 kbit/s spent
    /// while text was typed, where ffmpeg spent 650...1070 refining the rest, and 654 kbit/s in
    /// all. At 4: 760 kbit/s, viewer PSNR-Y +0.3 dB (median of three), CPU +20 % while it
    /// refines; the screen clip at 2500 and the desktop at 300 and 2500 kbit/s unchanged.
    public static let refinedQuantizer = 4

    /// The quantizer (0 ... 63) of the last encoded frame, for diagnostics.
    public var lastQuantizer: Int? {
        var q: Int32 = 0
        let id = Int32(VP8E_GET_LAST_QUANTIZER_64.rawValue)
        guard rtcs_vpx_control_get_int(context, id, &q) == VPX_CODEC_OK else { return nil }
        return Int(q)
    }

    // MARK: internals

    /// Points the image descriptor at the frame's planes and runs the encoder on it.
    private mutating func submit(_ frame: borrowing FrameSlot, activeMap: ActiveMap?) throws(MediaError) {
        guard frame.format == .i420, frame.width == width, frame.height == height else {
            throw .frameMismatch(format: frame.format, width: frame.width, height: frame.height)
        }
        var flags: vpx_enc_frame_flags_t = 0
        if keyframeWillBeForced { flags |= vpx_enc_frame_flags_t(VPX_EFLAG_FORCE_KF) }
        // libvpx makes its first frame a keyframe by itself.
        let keyframe = keyframeWillBeForced || stats.keyframesOut == 0
        try applyActiveMap(keyframe ? nil : progressive.bound(activeMap))

        // libvpx takes its frame rate from the timestamps and sizes each frame for the time
        // since the one before, so frames the caller skipped (over its budget) would make the
        // next one as big as all of them together — and through a thin path the caller then
        // skips the next ones too: busy 720p (and 360p alike) at ~700 kbit/s settled at one
        // ~19 KB frame every ~210 ms whatever the frame rate asked. After a skip
        // (`noteSkipped`) its timeline therefore advances by at most the caller's frame
        // interval; otherwise by the caller's own step (a frame rate
        // picked out of a faster source comes in uneven steps, 50 and 100 ms for 14 of 20 fps,
        // whose mean the output must follow). At least 1 µs: rate control wants strictly
        // increasing timestamps (a filler re-sending the last frame repeats its pts). Callers
        // get their own pts back regardless.
        var encoderPts = frame.ptsMicroseconds
        if let last = lastEncoderPts, let lastCaller = lastCallerPts {
            var step = max(frame.ptsMicroseconds - lastCaller, 1)
            if let longest = stepAfterSkip { step = min(step, longest) }
            encoderPts = last + step
        }
        lastEncoderPts = encoderPts
        lastCallerPts = frame.ptsMicroseconds
        stepAfterSkip = nil
        stats.framesIn += 1

        let searchesFilter = filterSearchDue
        if searchesFilter { try setSpeed(Configuration.loopFilterSearchCPUUsed) }

        let image = self.image, context = self.context
        let duration = UInt(configuration.frameDurationMicroseconds)
        let status = frame.withPixels { pixels in
            let y = pixels.plane(0), u = pixels.plane(1), v = pixels.plane(2)
            image.pointee.planes = (y.row(0).baseAddress, u.row(0).baseAddress,
                                    v.row(0).baseAddress, nil)
            image.pointee.stride = (Int32(y.stride), Int32(u.stride), Int32(v.stride), 0)
            if keyframe, let flat = progressive.flatPicture(like: pixels) {
                image.pointee.planes = (flat.planes.0, flat.planes.1, flat.planes.2, nil)
                image.pointee.stride = (flat.strides.0, flat.strides.1, flat.strides.2, 0)
            }
            // VP8 copies the picture into its own frame buffer inside this call (no lookahead),
            // so the slot's pixels are not read after it returns.
            return vpx_codec_encode(context, image, vpx_codec_pts_t(encoderPts), duration, flags,
                                    UInt(VPX_DL_REALTIME))
        }
        image.pointee.planes = (nil, nil, nil, nil)
        if searchesFilter {
            framesSinceFilterSearch = 0
            loopFilterSearches += 1
            try setSpeed(configuration.cpuUsed)
        } else {
            framesSinceFilterSearch += 1
        }
        try MediaError.check(vpx: status, context: context)
    }

    /// Hands libvpx the macroblocks to look at for the next frame, or (nil) all of them. An
    /// inactive macroblock is coded as skipped with no motion search, which is what makes a
    /// mostly still screen cheap. libvpx 1.12 still copies the whole picture into its lookahead
    /// (its copy of active macroblocks only applies at a lookahead depth of 0, and its depth
    /// is at least 1), builds a prediction for each skipped macroblock and loop-filters the
    /// whole frame: ~1.6 ms a 720p frame however few are active (bench/README.md, the profile).
    /// libvpx keeps the map until told otherwise, so nil clears one set before. Keyframes code
    /// every macroblock.
    private mutating func applyActiveMap(_ map: ActiveMap?) throws(MediaError) {
        guard let map else {
            if activeMapSet {
                // libvpx checks the size even when it is only told to drop the map.
                try MediaError.check(vpx: rtcs_vpx_set_active_map(context, nil, UInt32((height + 15) / 16),
                                                                  UInt32((width + 15) / 16)), context: context)
                activeMapSet = false
            }
            return
        }
        guard map.rows == (height + 15) / 16, map.cols == (width + 15) / 16, map.activity.count >= map.rows * map.cols
        else { throw .invalidConfiguration("active map \(map.cols)x\(map.rows) for a \(width)x\(height) picture") }
        try MediaError.check(vpx: rtcs_vpx_set_active_map(context, map.activity.baseAddress, UInt32(map.rows),
                                                          UInt32(map.cols)), context: context)
        activeMapSet = true
        activeMapFrames += 1
    }

    /// Whether the next frame is coded at `Configuration.loopFilterSearchCPUUsed`: one in
    /// `loopFilterSearchInterval`, while the last frame's quantizer says the content is easy,
    /// and only when the configured speed is one that searches the strip alone.
    private var filterSearchDue: Bool {
        guard let interval = configuration.loopFilterSearchInterval, framesSinceFilterSearch >= interval - 1,
              configuration.cpuUsed < Configuration.loopFilterSearchCPUUsed,
              stats.framesOut > 0, let q = lastQuantizer else { return false }
        return q <= configuration.loopFilterSearchMaxQuantizer
    }

    private func setSpeed(_ cpuUsed: Int) throws(MediaError) {
        try MediaError.check(vpx: rtcs_vpx_control_int(context, Int32(VP8E_SET_CPUUSED.rawValue), Int32(cpuUsed)),
                             context: context)
    }

    /// The frame packet of the last `submit`, nil if the rate controller dropped the frame;
    /// keeps the counters and keyframe state. The packet and its bytes are libvpx's, valid
    /// until the next `submit`.
    private mutating func takeFramePacket() -> UnsafePointer<vpx_codec_cx_pkt_t>? {
        var iterator: vpx_codec_iter_t?
        var frame: UnsafePointer<vpx_codec_cx_pkt_t>?
        while let packet = vpx_codec_get_cx_data(context, &iterator) {
            guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            // No lookahead and no partition output: one picture in, at most one frame out.
            precondition(frame == nil, "libvpx returned two frames for one picture")
            frame = packet
        }
        guard let frame else {
            stats.framesDropped += 1
            return nil
        }
        let data = frame.pointee.data.frame
        giveBackTokens(after: data)
        // The viewer keeps the last picture while a progressive keyframe's is unfinished.
        if progressive.frameCoded(isKeyframe: Self.has(VPX_FRAME_IS_KEY, data.flags)), let buf = data.buf {
            VP8FrameTag.setShown(false, in: UnsafeMutableRawBufferPointer(start: buf, count: data.sz))
            stats.framesHidden += 1
        }
        stats.framesOut += 1
        stats.bytesOut += UInt64(data.sz)
        if Self.has(VPX_FRAME_IS_KEY, data.flags) {
            stats.keyframesOut += 1
            keyframePending = false
            framesSinceKeyframe = 1
        } else {
            framesSinceKeyframe += 1
        }
        return frame
    }

    /// libvpx's VP8 token buffer at this size: 24 blocks of 16 tokens per macroblock, a token
    /// two pointers wide (`TOKENEXTRA`: a pointer, a short and two bytes).
    static func tokenBufferBytes(width: Int, height: Int) -> Int {
        ((width + 15) / 16) * ((height + 15) / 16) * 24 * 16 * 2 * MemoryLayout<UnsafeRawPointer>.size
    }

    /// Gives back the token buffer's pages after a frame that wrote many tokens.
    private mutating func giveBackTokens(after data: vpx_codec_cx_pkt.__Unnamed_union_data.__Unnamed_struct_frame) {
        guard let tokens = tokenBuffer,
              Self.has(VPX_FRAME_IS_KEY, data.flags) || data.sz >= Self.tokenGiveBackFrameBytes else { return }
        if measuresTokenResidency, let resident = VP8ProgressiveKeyframe.residentBytes(tokens) {
            largestTokenBytesResident = max(largestTokenBytesResident, resident)
        }
        let start = UInt(bitPattern: tokens.baseAddress)
        var given = 0
        if ccore_discard_pages(start, start + UInt(tokens.count), &given) == CCORE_OK { tokenBytesGivenBack += given }
    }

    /// Generic: libvpx 1.12 declares the flags as int literals, 1.15 (Debian 13) as unsigned.
    private static func has(_ flag: some BinaryInteger, _ flags: vpx_codec_frame_flags_t) -> Bool {
        flags & vpx_codec_frame_flags_t(truncatingIfNeeded: flag) != 0
    }
}
