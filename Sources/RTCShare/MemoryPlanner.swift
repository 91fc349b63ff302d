import CCore
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

    /// What the share holds once running.
    public var totalBytes: Int { items.reduce(0) { $0 + $1.bytes } }
    /// The process's peak: running, or the encoder's start-up if that is higher.
    public var peakBytes: Int { max(totalBytes, startupPeakBytes) }
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
    /// Resident memory of the process before any share: Swift runtime, the linked libraries and
    /// their relocations, stacks. Measured as peak RSS of `rtcshare build-info`, release build
    /// with the Swift runtime linked statically: 8.0 MiB (it was 11.3 MiB while the CLI linked
    /// FoundationEssentials through swift-argument-parser); half a MiB on top for the threads.
    public static let runtimeBytes = 17 << 19
    /// libvpx VP8 (1.12, realtime, one thread): measured peak-RSS growth of opening the encoder
    /// and encoding 100 frames is close to linear in the pixel count.
    public static func vp8EncoderBytes(_ size: PictureSize) -> Int {
        // Peak-RSS growth measured here: 33.5 MiB at 1280x720, 72 MiB at 1920x1080.
        let perPixel = (72.0 - 33.5) * 1_048_576 / Double(1920 * 1080 - 1280 * 720)
        let fixed = 33.5 * 1_048_576 - perPixel * Double(1280 * 720)
        return Int(fixed + perPixel * Double(size.pixels))
    }
    /// libvpx VP8 with its start-up zero pages given back (`reclaimEncoderStartupMemory`): what
    /// stays resident once encoding. The token buffer is written again as far as the busiest
    /// frame needs, so this is taken at a conservative 55 % of the whole (measured: 29.5 MiB
    /// for a whole 1280x720 --peer share with audio once running, 18 MiB for libvpx alone
    /// after 100 frames of busy content).
    public static func vp8EncoderReclaimedBytes(_ size: PictureSize) -> Int {
        vp8EncoderBytes(size) * 55 / 100
    }
    /// The peak-RSS growth while libvpx starts, before the zero pages go back: its memset of the
    /// token buffer makes it all resident for a moment. Measured as the peak of a testsrc share
    /// to a file (nothing else of size yet allocated, the encoder being made first): 34.7 MiB
    /// at 1280x720 and 64.9 MiB at 1920x1080, less the runtime.
    public static func vp8EncoderStartupBytes(_ size: PictureSize) -> Int {
        let perPixel = (64.9 - 34.7) * 1_048_576 / Double(1920 * 1080 - 1280 * 720)
        let fixed = (34.7 - 8.5) * 1_048_576 - perPixel * Double(1280 * 720)
        return Int(fixed + perPixel * Double(size.pixels))
    }
    /// openh264 (2.3.1, screen-content realtime, one thread, one slice): its peak-RSS growth,
    /// measured here against VP8's as the peak-RSS difference of the same release-build share
    /// (`--size S --fps 20 --duration 6 --output x.ivf`): 2.3 MiB less than VP8 at 640x360,
    /// 12.3 MiB less at 1280x720; linear in the pixel count like libvpx's (43 MiB at 1080p).
    public static func h264EncoderBytes(_ size: PictureSize) -> Int {
        let (small, large) = h264Measured
        let perPixel = (large.mib - small.mib) * 1_048_576 / Double(large.size.pixels - small.size.pixels)
        let fixed = small.mib * 1_048_576 - perPixel * Double(small.size.pixels)
        return Int(fixed + perPixel * Double(size.pixels))
    }
    /// The two measurements the H.264 line goes through (MiB of peak RSS the encoder adds).
    static let h264Measured = ((size: PictureSize(width: 640, height: 360), mib: 8.1),
                               (size: PictureSize(width: 1280, height: 720), mib: 21.3))

    /// What the encoder of `choice` takes at `size`; `auto` (a WHIP offer of both) plans for
    /// the larger, whichever the server picks.
    /// `reclaimed`: VP8's start-up zero pages are given back (`vp8EncoderReclaimedBytes`).
    public static func encoderBytes(_ choice: VideoCodecChoice, _ size: PictureSize, reclaimed: Bool = false) -> Int {
        let vp8 = reclaimed ? vp8EncoderReclaimedBytes(size) : vp8EncoderBytes(size)
        switch choice {
        case .vp8: return vp8
        case .h264: return h264EncoderBytes(size)
        case .auto: return max(vp8, h264EncoderBytes(size))
        }
    }

    static func encoderName(_ choice: VideoCodecChoice) -> String {
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
        // libvpx's start-up is planned with its pages given back; openh264's (it gives back
        // ~11 MiB at 1280x720 but its peak moves by ~2 MiB) keeps its measured figure, on the safe side.
        let reclaims = configuration.reclaimEncoderStartupMemory && configuration.videoCodec != .h264
        var items: [MemoryPlan.Item] = [
            .init(name: "runtime and libraries", bytes: runtimeBytes),
            .init(name: "\(encoderName(configuration.videoCodec)) encoder \(output)"
                  + (reclaims ? " (start-up zero pages given back)" : ""),
                  bytes: encoderBytes(configuration.videoCodec, output, reclaimed: reclaims)),
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
            items.append(.init(name: "audio: Opus 48 kHz, resampler, 20 ms framing", bytes: audio.budgetBytes + audio.heapBytes))
            budget += audio.budgetBytes
        }
        budget += budgetSlackBytes
        items.append(.init(name: "budget bookkeeping", bytes: budgetSlackBytes))
        var plan = MemoryPlan(outputSize: output, items: items, budgetBytes: budget,
                              needsTransform: needsTransform, capBytes: configuration.memoryCapBytes)
        plan.videoCodec = configuration.videoCodec
        if reclaims {
            // The encoder is made first (`ShareSession.prepareEncoder`): at its start only the
            // runtime is resident beside it.
            plan.startupPeakBytes = runtimeBytes + vp8EncoderStartupBytes(output)
        }
        return plan
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
        func plan(_ output: PictureSize) -> MemoryPlan {
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
            return p
        }
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
                throw .doesNotFit("\(p.outputSize) needs \(p.peakBytes >> 20) MiB, over the \(configuration.memoryCapBytes >> 20) MiB cap\(hint)")
            }
            return p
        }
        guard let size = largestFitting else {
            throw .doesNotFit("no output size fits a \(configuration.memoryCapBytes >> 20) MiB cap")
        }
        return plan(size)
    }
}
