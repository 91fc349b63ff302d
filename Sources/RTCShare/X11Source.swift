import CCore
import CXCB
import RTCShareCore
import RTCShareIO
import RTCShareMedia

/// `x11` or `x11:DISPLAY`: the screen of an X server, read through MIT-SHM.
///
/// Memory is the point of the design. The screen is never held whole: one SysV segment of one
/// strip (screen width x about 64 rows x 4 bytes; 495 KiB at 1920 wide) receives each strip in
/// turn from GetImage, and each strip goes at once through CCore's fused convert-and-scale
/// into its rows of an I420 frame slot. Frames are delivered already shrunk to fit the output
/// (see `X11StripPlan`, which keeps strip scaling bit-identical to whole-picture scaling), so a
/// 1080p screen sent at 720p costs 720p frames and, at the output size, no transform at all.
///
/// A static screen delivers nothing new: each strip's converted rows are hashed as they are
/// written and compared with the last delivered frame's; a frame whose strips all match is
/// dropped and reported `.unchanged` (alive, so the watchdog is content and the filler repeats).
///
/// Failure: the server refusing a request or the connection dropping throws (the share ends
/// with that line); a server that stops answering makes captures report `.nothingYet`, which the
/// watchdog sees as a stall. `restart()` opens a new connection and segment once the server
/// answers again; while it does not, a restart leaves the old connection waiting, because a
/// new connection to a server that does not answer would block in the X handshake.
public final class X11Source: SharedMemorySource {
    public let name: String
    public let format = PixelFormat.i420
    public var frameWidth: Int { plan.frameWidth }
    public var frameHeight: Int { plan.frameHeight }
    public let isLive = true
    public let fixedOrientation: Orientation? = .up

    /// The display as given or taken from $DISPLAY.
    public let display: String
    public let screenWidth: Int
    public let screenHeight: Int
    /// Captures per second (the capture runs on a fixed grid at this rate).
    public let framesPerSecond: Int
    /// How strips are read and placed; fixed once `prepare` has run.
    public private(set) var plan: X11StripPlan

    /// How long one strip may take before the capture counts the server as not answering.
    public static let replyTimeout = MediaDuration.milliseconds(250)

    private var connection: X11Connection
    private var scratch: BudgetBlock?
    private var scratchBase: UnsafeMutableRawPointer?
    private var scratchBytes = 0
    private var prepared = false
    /// Hash of each strip of the last delivered frame.
    private var stripHashes: [UInt64] = []
    private var hasDelivered = false
    private var nextCapture: MediaTime
    /// A GetImage the server has not answered yet (the capture gave up waiting for it).
    private var unanswered: UInt32?

    /// Connects to `display` (`":1"`, `"host:0.1"`; nil takes $DISPLAY) and checks that its
    /// screen can be captured. Delivers the screen at its own size until `deliver(fitting:)`.
    public init(display: String? = nil, framesPerSecond: Int = 30) throws(SourceError) {
        connection = try X11Connection(display: display)
        self.display = connection.display
        name = "x11:\(connection.display)"
        screenWidth = connection.width
        screenHeight = connection.height
        self.framesPerSecond = max(framesPerSecond, 1)
        plan = X11StripPlan.make(screenWidth: connection.width, screenHeight: connection.height,
                                 frame: PictureSize(width: connection.width, height: connection.height))
        nextCapture = MonotonicClock.now()
    }

    /// Makes the source deliver the screen shrunk (aspect kept) to fit `box`; a screen that
    /// already fits is delivered at its own size. Call before the share starts.
    public func deliver(fitting box: PictureSize) {
        precondition(!prepared, "the delivered size is fixed once the share has started")
        let size = X11StripPlan.fittedSize(screenWidth: screenWidth, screenHeight: screenHeight, into: box)
        plan = X11StripPlan.make(screenWidth: screenWidth, screenHeight: screenHeight, frame: size)
    }

    /// Sizes the delivered frames for a share with `configuration` and returns the configuration
    /// with its output size decided: the asked size as the configuration lays it out, or for
    /// an automatic size the screen's own or the largest standard size below it whose plan fits
    /// the memory cap (a configuration nothing fits is returned as it was; planning says why).
    public func fit(_ configuration: ShareConfiguration) -> ShareConfiguration {
        func laidOut(_ size: PictureSize) -> PictureSize {
            let long = max(size.width, size.height), short = min(size.width, size.height)
            let portrait = configuration.outputOrientation == .portrait
                || (configuration.outputOrientation == .source && screenHeight > screenWidth)
            return portrait ? PictureSize(width: short, height: long) : PictureSize(width: long, height: short)
        }
        if let asked = configuration.outputSize {
            deliver(fitting: laidOut(asked))
            return configuration
        }
        let own = laidOut(PictureSize(width: max(screenWidth & ~1, 16), height: max(screenHeight & ~1, 16)))
        var candidates = [own]
        for size in MemoryPlanner.standardSizes where laidOut(size).pixels < own.pixels {
            candidates.append(laidOut(size))
        }
        for size in candidates {
            var trial = configuration
            trial.outputSize = size
            deliver(fitting: size)
            if let plan = try? MemoryPlanner.resolve(trial, for: self), plan.fits { return trial }
        }
        deliver(fitting: own)
        return configuration
    }

    // MARK: memory

    /// The segment GetImage writes strips into: shared with the X server, so outside the budget.
    public var sharedMemoryBytes: Int { Self.pageAligned(plan.segmentBytes) }

    /// The fused transform's scratch for one strip.
    public var budgetBytes: Int { Self.transformScratchBytes(plan) + 4096 }

    static func pageAligned(_ bytes: Int) -> Int { (bytes + 4095) & ~4095 }

    static func transformScratchBytes(_ plan: X11StripPlan) -> Int {
        var src = ccore_image()
        src.format = CCORE_PIXEL_BGRX
        src.width = Int32(plan.screenWidth)
        src.height = Int32(plan.screenRows)
        var dst = ccore_image()
        dst.format = CCORE_PIXEL_I420
        dst.width = Int32(plan.frameWidth)
        dst.height = Int32(max(plan.frameRows, 1))
        return ccore_transform_scratch_size(&src, &dst, 1)
    }

    public func prepare(budget: MemoryBudget) throws(SourceError) {
        do {
            let block = try BudgetBlock(budget: budget, byteCount: max(Self.transformScratchBytes(plan), 64))
            scratchBase = block.base
            scratchBytes = block.byteCount
            scratch = consume block
        } catch {
            throw SourceError("x11: reserving the conversion scratch: \(error)")
        }
        try connection.attachSegment(bytes: sharedMemoryBytes)
        stripHashes = [UInt64](repeating: 0, count: plan.stripCount)
        hasDelivered = false
        prepared = true
    }

    // MARK: capture

    /// How one pass over the strips ended.
    private enum Pass {
        case complete(changed: Bool)
        case reply(X11Connection.ImageReply, sequence: UInt32, stripY: Int)
        case conversionFailed(ccore_status)
    }

    public func capture(from pool: FramePool, until deadline: MediaTime) throws(SourceError) -> CaptureOutcome {
        precondition(prepared, "prepare(budget:) must run before the first capture")
        if let sequence = unanswered {
            // Nothing new can be asked before the server has answered the old request.
            let reply = connection.waitForImage(sequence, until: max(deadline, MonotonicClock.now()))
            switch reply {
            case .timedOut: return .nothingYet
            case .lost: throw connection.lostConnection
            case .ready, .refused: unanswered = nil
            }
        }
        if nextCapture > deadline {
            MonotonicClock.sleep(until: deadline)
            return .nothingYet
        }
        MonotonicClock.sleep(until: nextCapture)
        let started = MonotonicClock.now()
        let interval = MediaDuration.frameInterval(framesPerSecond: framesPerSecond)
        repeat { nextCapture += interval } while nextCapture <= started

        var frame: FrameSlot
        do {
            frame = try pool.acquire(format: .i420, width: plan.frameWidth, height: plan.frameHeight)
        } catch {
            return .unchanged  // every slot is busy downstream: this capture is skipped (alive)
        }
        let pass = frame.withMutablePixels { pixels in readStrips(into: pixels) }
        switch pass {
        case .complete(let changed):
            guard changed || !hasDelivered else { return .unchanged }
            hasDelivered = true
            frame.ptsMicroseconds = started.microseconds
            return .frame(frame)
        case .reply(let reply, let sequence, let stripY):
            // A frame left half-written: the next one goes out whatever its hashes say.
            hasDelivered = false
            switch reply {
            case .timedOut:
                unanswered = sequence
                return .nothingYet
            case .lost:
                throw connection.lostConnection
            case .refused(let code):
                if let now = connection.currentScreenSize(), now.width != screenWidth || now.height != screenHeight {
                    throw SourceError("x11: the screen of \(display) changed size from \(screenWidth)x\(screenHeight) to \(now.width)x\(now.height); start the share again")
                }
                throw SourceError("x11: the X server \(display) refused GetImage at row \(stripY) (X error \(code))")
            case .ready:
                preconditionFailure("a ready reply ends no pass")
            }
        case .conversionFailed(let status):
            throw SourceError("x11: converting the screen failed (CCore status \(status.rawValue))")
        }
    }

    /// Reads every strip into `pixels` (a frame of the plan's size) and says whether any
    /// strip differs from the last delivered frame's.
    private func readStrips(into pixels: FramePixels) -> Pass {
        let segment = connection.segmentBase!.assumingMemoryBound(to: UInt8.self)
        var changed = false
        for index in 0..<plan.stripCount {
            let strip = plan.strip(index)
            let sequence = connection.requestImage(y: strip.screenY, rows: strip.screenRows)
            let reply = connection.waitForImage(sequence, until: MonotonicClock.now() + Self.replyTimeout)
            guard reply == .ready else { return .reply(reply, sequence: sequence, stripY: strip.screenY) }
            let status = Self.convertStrip(index, of: plan, from: segment, stride: plan.screenWidth * 4,
                                           into: pixels, scratch: scratchBase, scratchBytes: scratchBytes)
            guard status == CCORE_OK else { return .conversionFailed(status) }
            // Hashed while the rows just written are still in cache.
            let hash = Self.hashStrip(index, of: plan, in: pixels)
            if hash != stripHashes[index] || !hasDelivered {
                changed = true
                stripHashes[index] = hash
            }
        }
        return .complete(changed: changed)
    }

    /// Converts strip `index` of `plan`, whose BGRX screen rows start at `screen` (`stride`
    /// bytes apart), into its rows of `pixels`, scaling on the way. Strips start on even frame
    /// rows, so their chroma rows line up with the frame's.
    static func convertStrip(_ index: Int, of plan: X11StripPlan, from screen: UnsafeMutablePointer<UInt8>,
                             stride: Int, into pixels: FramePixels, scratch: UnsafeMutableRawPointer?,
                             scratchBytes: Int) -> ccore_status {
        let strip = plan.strip(index)
        let y = pixels.plane(0), u = pixels.plane(1), v = pixels.plane(2)
        let chromaY = strip.frameY / 2
        var src = ccore_image(format: CCORE_PIXEL_BGRX, width: Int32(plan.screenWidth),
                              height: Int32(strip.screenRows), plane: (screen, nil, nil),
                              stride: (Int32(stride), 0, 0))
        var dst = ccore_image(format: CCORE_PIXEL_I420, width: Int32(plan.frameWidth),
                              height: Int32(strip.frameRows),
                              plane: (y.row(strip.frameY).baseAddress, u.row(chromaY).baseAddress,
                                      v.row(chromaY).baseAddress),
                              stride: (Int32(y.stride), Int32(u.stride), Int32(v.stride)))
        return ccore_transform(&src, &dst, 1, CCORE_FILTER_AUTO, CCORE_RANGE_LIMITED, scratch, scratchBytes)
    }

    /// The hash of strip `index`'s rows of the frame, all three planes.
    static func hashStrip(_ index: Int, of plan: X11StripPlan, in pixels: FramePixels) -> UInt64 {
        let strip = plan.strip(index)
        let y = pixels.plane(0), u = pixels.plane(1), v = pixels.plane(2)
        let chromaY = strip.frameY / 2, chromaRows = (strip.frameRows + 1) / 2
        var hash = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15
        hash = Self.hash(rows: y.row(strip.frameY).baseAddress!, stride: y.stride, width: y.rowBytes,
                         count: strip.frameRows, into: hash)
        hash = Self.hash(rows: u.row(chromaY).baseAddress!, stride: u.stride, width: u.rowBytes,
                         count: chromaRows, into: hash)
        return Self.hash(rows: v.row(chromaY).baseAddress!, stride: v.stride, width: v.rowBytes,
                         count: chromaRows, into: hash)
    }

    /// A 64-bit hash of `count` rows of `width` bytes: multiply-rotate over 8-byte words in two
    /// independent lanes (the rotation carries high bits down, so no bit of the input can only
    /// reach the top of the state). Not cryptographic: it only has to notice a changed screen.
    static func hash(rows base: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, count: Int,
                     into seed: UInt64) -> UInt64 {
        let k0: UInt64 = 0x9FB2_1C65_1E98_DF25, k1: UInt64 = 0xC2B2_AE3D_27D4_EB4F
        var a = seed ^ 0x2545_F491_4F6C_DD1D, b = seed &+ UInt64(truncatingIfNeeded: width)
        for row in 0..<count {
            let p = UnsafeRawPointer(base + row * stride)
            var i = 0
            while i + 16 <= width {
                a = (a ^ p.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* k0
                b = (b ^ p.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)) &* k1
                a = (a << 29) | (a >> 35)
                b = (b << 31) | (b >> 33)
                i += 16
            }
            while i < width {
                a = (a ^ UInt64(p.load(fromByteOffset: i, as: UInt8.self))) &* k0
                a = (a << 29) | (a >> 35)
                i += 1
            }
        }
        var h = a ^ ((b << 17) | (b >> 47))
        h = (h ^ (h >> 33)) &* k1
        return h ^ (h >> 29)
    }

    public func restart() throws(SourceError) {
        if let sequence = unanswered {
            // Still silent: a new connection would block in the handshake. Keep waiting.
            guard connection.waitForImage(sequence, until: MonotonicClock.now()) != .timedOut else { return }
            unanswered = nil
        }
        var fresh = try X11Connection(display: display)
        guard fresh.width == screenWidth, fresh.height == screenHeight else {
            throw SourceError("x11: the screen of \(display) changed size from \(screenWidth)x\(screenHeight) to \(fresh.width)x\(fresh.height); start the share again")
        }
        if prepared { try fresh.attachSegment(bytes: sharedMemoryBytes) }
        connection = fresh
        hasDelivered = false
        nextCapture = MonotonicClock.now()
    }
}
