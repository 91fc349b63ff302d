import CShims
import RTCShareCore

/// An openh264 H.264 encoder for live screen content, with the same face to the pipeline as
/// `VP8Encoder`: realtime, constrained baseline (CAVLC, no B-frames: several servers break on
/// them), one thread, bitrate changeable while running, IDRs only on request (rate-limited)
/// and optionally on a period. Reads I420 straight from a `FramePool` slot — openh264 copies
/// the picture into its own buffers inside the call — and hands each access unit out in Annex B
/// form (start codes; SPS and PPS in front of every IDR) without allocating.
///
/// Non-copyable: one value owns one openh264 encoder, closed when the value ends. openh264
/// allocates its own memory outside the CCore budget, all of it at open (measured here, 2.3.1:
/// see `MemoryPlanner.h264EncoderBytes`).
///
/// Keyframes: the first frame is an IDR. `requestKeyframe(nowMicroseconds:)` (a PLI or FIR)
/// makes the next frame one unless a request was accepted less than
/// `minimumKeyframeRequestIntervalMicroseconds` before; `periodicKeyframeInterval` adds one
/// every N frames counted from the last IDR. openh264 places none of its own (no intra period,
/// no scene-change detection: a slide change should not cost an IDR).
///
/// Size: no access unit handed out is larger than `Configuration.maxFrameBytes`. openh264's rate
/// control cannot hold one there: it keeps an IDR's quantizer at or under 40 and a picture's within
/// a few steps of the last one's, whatever the range's top (a 1920x1080 page of dense text: an IDR
/// of 680 KiB, a page change 490-690 KiB, at any maximum from 42 to 51). Such a picture is coded
/// again as an IDR, rate control off, at each of `oversizeQuantizers` in turn until one fits (the
/// same page: 286 KiB at 44, 90 KiB at 51); what is still too large is dropped (counted) and the
/// next picture is an IDR. The picture after it refines the page under rate control as usual.
public struct H264Encoder: ~Copyable, @unchecked Sendable {
    // Sendable: one owner, `mutating` on every encoder call, one thread at a time.
    private let handle: OpaquePointer

    public private(set) var configuration: Configuration
    public private(set) var stats = VideoEncoderStats()
    /// Bytes of all-zero pages given back after openh264's start (`reclaimStartupZeroPages`).
    public private(set) var startupBytesReclaimed = 0
    /// Bytes of openh264's start-up zero-fill left out, never made resident (`StartupZeroFill`).
    public private(set) var startupZeroFillSkipped = 0

    /// Pictures coded again, coarser, because they came out larger than `maxFrameBytes`.
    public private(set) var oversizeFramesRecoded = 0
    /// Pictures still larger than `maxFrameBytes` at the coarsest quantizer: dropped.
    public private(set) var oversizeFramesDropped = 0

    private var keyframePending = false
    /// Spaces accepted keyframe requests (`minimumKeyframeRequestIntervalMicroseconds`).
    private var keyframeLimit: KeyframeRateLimit
    private var framesSinceKeyframe = 0
    private var lastEncoderMilliseconds: Int64?

    /// How an `H264Encoder` is set up; the defaults are for live screen content.
    public struct Configuration: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var bitrateKbps: Int
        /// Give back the all-zero pages openh264 wrote at its start (`StartupZeroPages`); only
        /// when no other thread of the process allocates and writes memory meanwhile.
        public var reclaimStartupZeroPages = false
        public var frameRate: Int = 30
        /// openh264's screen-content real-time mode (else its camera mode), for pictures of up to
        /// `screenContentMaximumPixels`; larger ones are coded in camera mode (`contentModeIsScreen`).
        public var screenContent = true
        /// 0: one slice per picture (FU-A carries what is larger than a packet). Else slices of
        /// at most this many bytes, so most NAL units travel alone in a packet.
        public var maxSliceBytes = 0
        /// Quantizer range, 0 (best) ... 51 (worst).
        public var minQuantizer = 12
        public var maxQuantizer = 42
        /// Rate control may skip a picture (no output, counted) to hold the bitrate, at sizes up to
        /// `frameSkipMaximumPixels` (`frameSkipIsOn`).
        public var allowsFrameSkip = true
        public var periodicKeyframeInterval: Int? = nil
        /// The largest access unit handed out (nil: no bound): what the sender's packet history
        /// holds whole beside the frames before it, for the pacer to send and NACKs to repair.
        /// The default is 3/4 of the senders' default history (512 KiB): a 1280x720 page of
        /// dense text (a 330 KiB IDR) goes as rate control coded it, a 1920x1080 one (680 KiB)
        /// does not.
        public var maxFrameBytes: Int? = Self.defaultMaxFrameBytes
        public static let defaultMaxFrameBytes = 384 << 10
        public var minimumKeyframeRequestIntervalMicroseconds: Int64 = 500_000

        public init(width: Int, height: Int, bitrateKbps: Int) {
            self.width = width
            self.height = height
            self.bitrateKbps = bitrateKbps
        }

        func validate() throws(MediaError) {
            func require(_ ok: Bool, _ what: String) throws(MediaError) {
                if !ok { throw .invalidConfiguration(what) }
            }
            // Even sides: 4:2:0 chroma; openh264 takes at least 16.
            try require((16...4096).contains(width) && width % 2 == 0, "width \(width) not even in 16...4096")
            try require((16...4096).contains(height) && height % 2 == 0, "height \(height) not even in 16...4096")
            try require((1...1_000_000).contains(bitrateKbps), "bitrate \(bitrateKbps) kbit/s outside 1...1000000")
            try require((1...60).contains(frameRate), "frame rate \(frameRate) outside 1...60")
            try require(maxSliceBytes == 0 || (200...65_535).contains(maxSliceBytes),
                        "slice size \(maxSliceBytes) neither 0 nor 200...65535")
            try require((0...51).contains(minQuantizer) && (0...51).contains(maxQuantizer)
                            && minQuantizer <= maxQuantizer,
                        "quantizer range \(minQuantizer)...\(maxQuantizer) not within 0...51")
            if let interval = periodicKeyframeInterval {
                try require(interval >= 1, "keyframe interval \(interval) below 1")
            }
            try require(minimumKeyframeRequestIntervalMicroseconds >= 0, "keyframe request interval negative")
            if let bound = maxFrameBytes {
                try require(bound >= 4096, "frame size bound \(bound) below 4096 bytes")
            }
        }

        /// The quantizers a picture larger than `maxFrameBytes` is coded again at, in turn (rate
        /// control off). 44 first: text still legible, and a 1920x1080 page of it fits (286 KiB;
        /// 40 gives 426); 51, the coarsest, for what does not (90 KiB).
        public static let oversizeQuantizers: [Int32] = [44, 51]

        /// The most pixels coded in screen-content mode: 1280x720. Its motion search by block
        /// features keeps, per reference picture, tables of 4 bytes a pixel written on every
        /// P-frame: a 1080p share of text over WHIP peaked 57.5 MiB in screen mode, 44.3 in camera
        /// mode (`bench/harness/fullhd_case.py`), more than 50 MiB leaves room for. Camera mode
        /// gives up the search for scrolled and repeated blocks; on 1080p text pages it measured
        /// a higher PSNR-Y for the bytes (`bench/harness/text_quality.py`).
        public static let screenContentMaximumPixels = 1280 * 720

        /// The most pixels at which rate control may skip pictures: 1280x720. Above it a picture of
        /// text that changed whole, or refines a coarse IDR, is hundreds of KB, and rate control
        /// then skipped every picture for seconds after each (a 1080p page change a second for
        /// 22 s over WHIP, debug build: 29 pictures coded of 333, `bench/harness/fullhd_case.py
        /// --seconds 30 --still 8`); without skipping it holds its quantizer at the top instead
        /// and every picture goes (307 coded, 303 decoded by aiortc), at 3.4 Mbit/s against a
        /// 1.5 Mbit/s target while the whole screen changes every second.
        public static let frameSkipMaximumPixels = 1280 * 720

        /// Whether rate control may skip pictures: allowed, and the picture no larger than
        /// `frameSkipMaximumPixels`.
        public var frameSkipIsOn: Bool { allowsFrameSkip && width * height <= Self.frameSkipMaximumPixels }

        /// Whether openh264 is opened in screen-content mode: asked for, and the picture no
        /// larger than `screenContentMaximumPixels`.
        public var contentModeIsScreen: Bool { screenContent && width * height <= Self.screenContentMaximumPixels }

        /// The H.264 level the picture size and rate need (Table A-1's macroblocks per frame
        /// and per second); 3.1 (what `profile-level-id=42e01f` announces) up to 720p30.
        var levelIDC: Int32 { Int32(H264Level.idc(width: width, height: height, framesPerSecond: frameRate)) }
    }

    public init(_ configuration: Configuration) throws(MediaError) {
        try configuration.validate()
        var params = rtcs_openh264_encoder_params(
            width: Int32(configuration.width), height: Int32(configuration.height),
            bitrate_bps: Int32(min(configuration.bitrateKbps * 1000, Int(Int32.max))),
            max_frame_rate: Float(configuration.frameRate),
            screen_content: configuration.contentModeIsScreen ? 1 : 0,
            max_slice_bytes: Int32(configuration.maxSliceBytes),
            min_qp: Int32(configuration.minQuantizer), max_qp: Int32(configuration.maxQuantizer),
            frame_skip: configuration.frameSkipIsOn ? 1 : 0, level_idc: configuration.levelIDC)
        // Loaded before the start-up window below, so the library's own pages are not the
        // encoder's start-up growth.
        guard rtcs_openh264_load() == 0 else { throw .library(String(cString: rtcs_openh264_load_error())) }
        var handle: OpaquePointer?
        // One thread (iMultipleThreadIdc = 1): openh264 starts none that could write meanwhile.
        let reclaim = configuration.reclaimStartupZeroPages
        let ((status, skipped), reclaimed) = StartupZeroPages.around(enabled: reclaim) {
            StartupZeroFill.around(.openh264, enabled: reclaim) { rtcs_openh264_encoder_open(&params, &handle) }
        }
        startupBytesReclaimed = reclaimed
        startupZeroFillSkipped = skipped
        guard status == 0, let handle else { throw .openh264(status, "opening the encoder") }
        self.handle = handle
        self.configuration = configuration
        keyframeLimit = KeyframeRateLimit(minimumIntervalMicroseconds: configuration.minimumKeyframeRequestIntervalMicroseconds)
    }

    deinit { rtcs_openh264_encoder_close(handle) }

    public var width: Int { configuration.width }
    public var height: Int { configuration.height }

    /// An upper bound on one access unit: the raw picture plus headers (even I_PCM fits).
    public var maximumFrameBytes: Int { width * height * 3 / 2 + 4096 }

    public mutating func setBitrate(kbps: Int) throws(MediaError) {
        guard (1...1_000_000).contains(kbps) else {
            throw .invalidConfiguration("bitrate \(kbps) kbit/s outside 1...1000000")
        }
        guard kbps != configuration.bitrateKbps else { return }
        let status = rtcs_openh264_encoder_set_bitrate(handle, Int32(min(kbps * 1000, Int(Int32.max))))
        guard status == 0 else { throw .openh264(status, "setting the bitrate") }
        configuration.bitrateKbps = kbps
    }

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

    public mutating func forceKeyframe(nowMicroseconds now: Int64) {
        keyframeLimit.restart(at: now)
        keyframePending = true
    }

    public var keyframeWillBeForced: Bool {
        if keyframePending || stats.framesOut == 0 { return true }
        if let interval = configuration.periodicKeyframeInterval, framesSinceKeyframe >= interval { return true }
        return false
    }

    /// Encodes `frame` (I420 at the encoder's size) and gives the access unit to `body`.
    /// Returns false, without calling `body`, when rate control skipped the picture.
    @discardableResult
    public mutating func encode(_ frame: borrowing FrameSlot,
                                _ body: (EncodedVideoFrame) -> Void) throws(MediaError) -> Bool {
        guard frame.format == .i420, frame.width == width, frame.height == height else {
            throw .frameMismatch(format: frame.format, width: frame.width, height: frame.height)
        }
        let pts = frame.ptsMicroseconds
        if keyframeWillBeForced {
            let status = rtcs_openh264_encoder_force_idr(handle)
            guard status == 0 else { throw .openh264(status, "forcing an IDR") }
        }
        // openh264's rate control reads millisecond timestamps and wants them increasing; a
        // repeat with its old pts is nudged forward, as for VP8.
        var ms = pts / 1000
        if let last = lastEncoderMilliseconds, ms <= last { ms = last + 1 }
        lastEncoderMilliseconds = ms
        stats.framesIn += 1

        var (out, count, frameType) = try encodeOnce(frame, milliseconds: ms)
        if let bound = configuration.maxFrameBytes, count > bound {
            oversizeFramesRecoded += 1
            // What openh264 coded is not sent, so its reference is not the receiver's: only an
            // IDR follows it.
            for qp in Configuration.oversizeQuantizers where count > bound {
                (out, count, frameType) = try recode(frame, milliseconds: ms, quantizer: qp)
            }
            if count > bound {
                oversizeFramesDropped += 1
                stats.framesDropped += 1
                keyframePending = true
                return false
            }
        }
        guard let out, count > 0 else {
            stats.framesDropped += 1
            return false
        }
        let isIDR = frameType == Self.frameTypeIDR
        stats.framesOut += 1
        stats.bytesOut += UInt64(count)
        if isIDR {
            stats.keyframesOut += 1
            keyframePending = false
            framesSinceKeyframe = 1
        } else {
            framesSinceKeyframe += 1
        }
        // Every picture is a reference (one reference frame, no temporal layers): none is droppable.
        body(EncodedVideoFrame(bytes: UnsafeRawBufferPointer(start: out, count: count), isKeyframe: isIDR,
                                     isDroppable: false, ptsMicroseconds: pts))
        return true
    }

    /// One call into openh264: the access unit (nil, 0 when rate control skipped the picture) and
    /// its frame type.
    private mutating func encodeOnce(_ frame: borrowing FrameSlot, milliseconds ms: Int64)
        throws(MediaError) -> (UnsafePointer<UInt8>?, Int, Int32) {
        let handle = self.handle
        var out: UnsafePointer<UInt8>?
        var count = 0
        var frameType: Int32 = 0
        let status = frame.withPixels { pixels in
            let y = pixels.plane(0), u = pixels.plane(1), v = pixels.plane(2)
            return rtcs_openh264_encoder_encode(handle, y.row(0).baseAddress, u.row(0).baseAddress,
                                                v.row(0).baseAddress, Int32(y.stride), Int32(u.stride),
                                                Int32(v.stride), ms, &out, &count, &frameType)
        }
        guard status == 0 else { throw .openh264(status, "encoding") }
        return (out, count, frameType)
    }

    /// Codes `frame` again as an IDR at `quantizer`, rate control off for this picture only.
    private mutating func recode(_ frame: borrowing FrameSlot, milliseconds ms: Int64, quantizer: Int32)
        throws(MediaError) -> (UnsafePointer<UInt8>?, Int, Int32) {
        var status = rtcs_openh264_encoder_set_fixed_qp(handle, quantizer)
        guard status == 0 else { throw .openh264(status, "setting quantizer \(quantizer)") }
        status = rtcs_openh264_encoder_force_idr(handle)
        let result: (UnsafePointer<UInt8>?, Int, Int32)
        do throws(MediaError) {
            guard status == 0 else { throw .openh264(status, "forcing an IDR") }
            result = try encodeOnce(frame, milliseconds: ms)
        } catch {
            _ = rtcs_openh264_encoder_set_fixed_qp(handle, 0)
            throw error
        }
        status = rtcs_openh264_encoder_set_fixed_qp(handle, 0)
        guard status == 0 else { throw .openh264(status, "turning rate control back on") }
        return result
    }

    /// openh264's videoFrameTypeIDR.
    static let frameTypeIDR: Int32 = 1
}
