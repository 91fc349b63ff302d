import RTCShareCore
import RTCShareMedia

/// The video memory of a share and the work done on it: the source's pool and ring (the capture
/// thread fills them), the frame kept from the source, the fused transform into an encoder-input
/// slot, and the encoder. It carries out the pipeline's orders (`SharePipelineStateMachine`);
/// it decides nothing itself.
///
/// All of it is reserved at start from the share's budget (the encoder: by libvpx or openh264,
/// counted by the planner). The transform runs once per source frame, not per repeat: the
/// encoder input is kept until a newer frame arrives.
struct VideoStage: ~Copyable {
    let sourcePool: FramePool
    let ring: FrameRing
    private let outputPool: FramePool?
    private let transformer: FrameTransformer?
    let codec: VideoCodec
    /// With CVO the pixels stay as stored and the tag travels; otherwise they are turned upright.
    let signalsOrientation: Bool
    private(set) var output: PictureSize
    // Optional only so it can be let go before the outputs finish, and replaced on a resize.
    private var encoder: VideoEncoder?
    private var kept: FrameSlot?
    private var keptOrientation = Orientation.up
    private var keptGeneration = 0
    private var encoderInput: FrameSlot?
    private var inputGeneration = -1
    /// Which macroblocks of the encoder input changed since the last picture handed to the
    /// encoder (`ChangeMap`), and the kept frame's generation it last saw.
    private var changes: ChangeMap
    private var changesGeneration = -1
    /// What the encoder was last told, for a new encoder after a resize.
    private var bitrateKbps: Int?
    private var keyframeCapConstrained: Bool?

    var hasTransform: Bool { transformer != nil }

    init<S: VideoSource>(source: S, budget: MemoryBudget, plan: MemoryPlan, codec: VideoCodec,
                         signalsOrientation: Bool) throws(ShareError) {
        // Everything that can fail first, then a non-throwing init: a noncopyable value is
        // initialised in one go (and Swift 6.0's compiler crashes on a throw out of a
        // ~Copyable init whose stored defaults are in place).
        let parts = try Self.reserve(source: source, budget: budget, plan: plan)
        let changes: ChangeMap
        do {
            changes = try ChangeMap(budget: budget, width: plan.outputSize.width, height: plan.outputSize.height)
        } catch {
            throw .doesNotFit("reserving the change map: \(error)")
        }
        self.init(parts: parts, changes: changes, output: plan.outputSize, codec: codec,
                  signalsOrientation: signalsOrientation)
    }

    private static func reserve<S: VideoSource>(source: S, budget: MemoryBudget, plan: MemoryPlan) throws(ShareError)
        -> (FramePool, FrameRing, FramePool?, FrameTransformer?) {
        let output = plan.outputSize
        let parts: (FramePool, FrameRing, FramePool?, FrameTransformer?)
        do {
            let sourcePool = try FramePool(budget: budget, format: source.format, maxWidth: source.frameWidth,
                                           maxHeight: source.frameHeight, count: MemoryPlan.sourceSlots)
            let ring = try FrameRing(pool: sourcePool, capacity: MemoryPlan.ringCapacity, policy: .dropOldest)
            if plan.needsTransform {
                let outputPool = try FramePool(budget: budget, format: .i420, maxWidth: output.width,
                                               maxHeight: output.height, count: MemoryPlan.outputSlots)
                let transformer = try FrameTransformer(budget: budget, maxSourceWidth: source.frameWidth,
                                                       maxSourceHeight: source.frameHeight,
                                                       maxOutputWidth: output.width, maxOutputHeight: output.height)
                parts = (sourcePool, ring, outputPool, transformer)
            } else {
                parts = (sourcePool, ring, nil, nil)
            }
        } catch {
            throw .doesNotFit("reserving frame memory: \(error)")
        }
        return parts
    }

    private init(parts: (FramePool, FrameRing, FramePool?, FrameTransformer?), changes: consuming ChangeMap,
                 output: PictureSize, codec: VideoCodec, signalsOrientation: Bool) {
        (sourcePool, ring, outputPool, transformer) = parts
        self.changes = changes
        self.output = output
        self.codec = codec
        self.signalsOrientation = signalsOrientation
    }

    /// Takes the encoder (made before the rest of the share's memory, or now).
    mutating func install(_ encoder: consuming VideoEncoder) {
        self.encoder = consume encoder
    }

    /// The source's newest frame: what the next `.encode` order codes.
    mutating func keep(_ frame: consuming FrameSlot) {
        keptOrientation = frame.orientation
        kept = consume frame
        keptGeneration += 1
    }

    /// What became of an `.encode` order.
    enum Outcome: Equatable {
        case coded
        /// The encoder's rate control dropped the frame.
        case dropped
        /// Not a macroblock of the picture is active (`ChangeMap`) and the order allowed a
        /// still picture to go uncoded: nothing was encoded.
        case unchanged
    }

    /// How many fine pictures (`VideoEncoder.lastPictureRefined()`) a macroblock stays active after
    /// it changed, or after a keyframe coded it afresh: the frames after a change refine it (its
    /// first coding is coarse when the rate goes to a big change), and only then is it coded as
    /// skipped without a look. On
    /// bench/run's screen clip at 2500 kbit/s a macroblock let go after the keyframe stayed
    /// at the keyframe's coarse picture (viewer PSNR-Y 48 dB against 63); held 30 pictures
    /// (a second at 30 fps) the picture is as fine as without the map, in 9 % fewer bytes.
    static let refinePictures: UInt8 = 30

    /// Codes the kept frame as `order` says; `emit` gets each coded frame.
    mutating func encode(_ order: SharePipelineStateMachine.EncodeOrder,
                         emit: (EncodedVideoFrame, OutgoingVideoFrame) throws(ShareError) -> Void) throws(ShareError) -> Outcome {
        guard kept != nil, encoder != nil else { return .dropped }
        try prepareInput(at: order.at)
        let active = try noteChanges()
        if active == 0, order.skipIfUnchanged, order.keyframe == .no { return .unchanged }
        switch order.keyframe {
        case .forced: encoder!.forceKeyframe(nowMicroseconds: order.at.microseconds)
        case .requested: encoder!.requestKeyframe(nowMicroseconds: order.at.microseconds)
        case .no: break
        }
        do { try encoder!.setFrameDropping(allowed: order.mayDrop) } catch { throw .pipeline("frame dropping: \(error)") }
        let orientation = signalsOrientation ? keptOrientation : .up
        let size = output
        var emitError: ShareError?
        var codedKeyframe = false
        // The map's memory is the stage's own (a budget block that stays put until the stage
        // ends), so the view is good for the encode call below.
        let activeMap = changes.withActivity { ActiveMap(activity: $0, rows: $1, cols: $2) }
        func encodeSlot(_ slot: borrowing FrameSlot) throws(MediaError) -> Bool {
            try encoder!.encode(slot, activeMap: activeMap) { frame in
                guard emitError == nil else { return }
                codedKeyframe = frame.isKeyframe
                let outgoing = OutgoingVideoFrame(
                    bytes: frame.bytes, isKeyframe: frame.isKeyframe, isDroppable: frame.isDroppable,
                    captureTime: order.at, mediaTimestamp: order.mediaTimestamp, orientation: orientation,
                    width: size.width, height: size.height)
                do throws(ShareError) { try emit(frame, outgoing) } catch { emitError = error }
            }
        }
        let delivered: Bool
        do {
            delivered = encoderInput != nil ? try encodeSlot(encoderInput!) : try encodeSlot(kept!)
        } catch {
            throw .pipeline("encode: \(error)")
        }
        if let emitError { throw emitError }
        // What changed in a dropped picture was never coded, and a coarse picture is not done
        // refining: what is active stays active (the count only runs down over fine pictures).
        if !delivered || !encoder!.lastPictureRefined() { changes.renew(hold: Self.refinePictures) }
        if codedKeyframe { changes.activateAll(count: Self.refinePictures) }
        return delivered ? .coded : .dropped
    }

    /// Brings the change map up to the encoder input (once per source frame; a repeat only
    /// ages it) and returns how many macroblocks are active.
    private mutating func noteChanges() throws(ShareError) -> Int {
        let counts: ChangeMap.Counts
        if changesGeneration == keptGeneration {
            counts = changes.age()
        } else {
            do {
                counts = encoderInput != nil ? try changes.update(encoderInput!, hold: Self.refinePictures)
                                             : try changes.update(kept!, hold: Self.refinePictures)
            } catch {
                throw .pipeline("change map: \(error)")
            }
            changesGeneration = keptGeneration
        }
        return counts.active
    }

    /// Turns the kept frame into encoder input once per source frame (not per repeat).
    private mutating func prepareInput(at now: MediaTime) throws(ShareError) {
        guard let outputPool, let transformer else {
            kept!.ptsMicroseconds = now.microseconds
            return
        }
        if inputGeneration != keptGeneration || encoderInput == nil {
            encoderInput = nil  // give its slot back before taking the next
            do {
                var next = try outputPool.acquire(format: .i420, width: output.width, height: output.height)
                try transformer.apply(kept!, into: &next, orientation: signalsOrientation ? .up : nil)
                encoderInput = consume next
            } catch {
                throw .pipeline("transform: \(error)")
            }
            inputGeneration = keptGeneration
        }
        encoderInput!.ptsMicroseconds = now.microseconds
    }

    mutating func noteSkipped(frameIntervalMicroseconds: Int64) {
        encoder?.noteSkipped(frameIntervalMicroseconds: frameIntervalMicroseconds)
    }

    mutating func setBitrate(kbps: Int) throws(ShareError) {
        do { try encoder?.setBitrate(kbps: kbps) } catch { throw .pipeline("bitrate \(kbps) kbit/s: \(error)") }
        bitrateKbps = kbps
    }

    mutating func setKeyframeCap(constrained: Bool) throws(ShareError) {
        do { try encoder?.setKeyframeCap(constrained: constrained) } catch { throw .pipeline("keyframe cap: \(error)") }
        keyframeCapConstrained = constrained
    }

    /// A smaller picture under memory pressure: the old encoder goes first (the point is to need
    /// less), its pages back to the system, then one at `size` with the same settings (none
    /// while the encoder is let go for a reconnect: `restoreEncoder` makes it at `size`).
    mutating func resize(to size: PictureSize,
                         makeEncoder: (VideoCodec, PictureSize) throws(ShareError) -> VideoEncoder) throws(ShareError) {
        let released = encoder == nil
        encoderInput = nil
        releaseEncoder()
        if !released { try remakeEncoder(size, makeEncoder) }
        output = size
        inputGeneration = -1
        do { try changes.resize(width: size.width, height: size.height) } catch { throw .pipeline("change map: \(error)") }
        changesGeneration = -1
    }

    /// Lets the encoder go while no output takes video (a reconnect): its buffers, most of the
    /// share's memory, go back to the system.
    mutating func releaseEncoder() {
        encoder = nil
        ProcessHeap.releaseFree()
    }

    /// Makes the encoder again after `releaseEncoder`, with the settings it was last given;
    /// its first frame is a keyframe. Nothing when it is there.
    mutating func restoreEncoder(makeEncoder: (VideoCodec, PictureSize) throws(ShareError) -> VideoEncoder) throws(ShareError) {
        guard encoder == nil else { return }
        try remakeEncoder(output, makeEncoder)
        // What the picture was coded against is gone with the encoder: every macroblock is
        // coded afresh.
        changesGeneration = -1
    }

    private mutating func remakeEncoder(_ size: PictureSize,
                                        _ makeEncoder: (VideoCodec, PictureSize) throws(ShareError) -> VideoEncoder) throws(ShareError) {
        encoder = try makeEncoder(codec, size)
        if let bitrateKbps { try setBitrate(kbps: bitrateKbps) }
        if let keyframeCapConstrained { try setKeyframeCap(constrained: keyframeCapConstrained) }
    }

    /// Lets the frames and the encoder go (most of the share's memory) before the outputs finish.
    mutating func release() {
        encoderInput = nil
        kept = nil
        encoder = nil
    }
}
