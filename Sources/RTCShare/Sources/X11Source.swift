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
/// Where the server has DAMAGE, a static screen is not even read: a capture with nothing drawn
/// since the last read is `.unchanged` at once, no request made; the whole screen is still read
/// once a second whatever DAMAGE says (`fullReadInterval`), a guard against drawing it missed.
///
/// A screen that changes size mid-share (RandR) is followed: the size frames are delivered at
/// stays what the share started with (the pool, the encoder and the plan are sized for it), and
/// the new screen is fitted into it, aspect kept and centred on black (letterboxed, never
/// scaled up). The size is checked once a second and whenever the server refuses a strip; a new
/// screen whose strips need a larger segment or scratch than were reserved ends the share with
/// that line (a screen over about 8000 pixels wide).
///
/// Failure: the server refusing a request or the connection dropping throws (the share ends
/// with that line); a server that stops answering makes captures report `.nothingYet`, which the
/// watchdog sees as a stall. `restart()` opens a new connection and segment once the server
/// answers again; while it does not, a restart leaves the old connection waiting, because a
/// new connection to a server that does not answer would block in the X handshake.
public final class X11Source: ScreenFitting {
    public let name: String
    public let format = PixelFormat.i420
    public var frameWidth: Int { delivered?.width ?? plan.frameWidth }
    public var frameHeight: Int { delivered?.height ?? plan.frameHeight }
    public let isLive = true
    public let fixedOrientation: Orientation? = .up

    /// The display as given or taken from $DISPLAY.
    public let display: String
    /// The screen's size now (it may change mid-share).
    public private(set) var screenWidth: Int
    public private(set) var screenHeight: Int
    /// An X screen has no transform: its size is the upright one.
    public var uprightScreenSize: PictureSize { PictureSize(width: screenWidth, height: screenHeight) }
    /// Captures per second (the capture runs on a fixed grid at this rate).
    public let framesPerSecond: Int
    /// How strips are read and placed; fixed once `prepare` has run.
    public private(set) var plan: X11StripPlan

    /// The size frames are delivered at, fixed by `prepare`; the plan's frame sits in it at
    /// `placement` (the origin, until the screen changes shape).
    private var delivered: PictureSize?
    private var placement = (x: 0, y: 0)
    /// Times the screen changed size and the share followed.
    public private(set) var screenChanges = 0
    /// How often the screen's size is asked for (a change that does not make GetImage fail,
    /// a larger screen, is only seen this way).
    static let sizeCheckInterval = MediaDuration.seconds(1)
    private var nextSizeCheck: MediaTime

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
    /// Whether the server reports drawing (DAMAGE), so undamaged captures skip the read.
    public private(set) var watchesDamage = false
    /// The longest a screen goes unread while DAMAGE says nothing was drawn.
    static let fullReadInterval = MediaDuration.seconds(1)
    private var nextFullRead: MediaTime
    /// Captures that read the screen, and those that did not because nothing was drawn.
    public private(set) var screenReads = 0
    public private(set) var readsSkipped = 0
    /// Whether the pointer is drawn into the picture (`--cursor`), and where it is.
    public let drawsCursor: Bool
    private var cursor = X11Cursor()

    /// Connects to `display` (`":1"`, `"host:0.1"`; nil takes $DISPLAY) and checks that its
    /// screen can be captured. Delivers the screen at its own size until `deliver(fitting:)`.
    public init(display: String? = nil, framesPerSecond: Int = 30, cursor: Bool = false) throws(SourceError) {
        connection = try X11Connection(display: display)
        drawsCursor = cursor
        if cursor, !X11Cursor.available(connection.connection) {
            throw SourceError("x11: \(connection.display) has no XFIXES extension, which --cursor needs")
        }
        self.display = connection.display
        name = "x11:\(connection.display)"
        screenWidth = connection.width
        screenHeight = connection.height
        self.framesPerSecond = max(framesPerSecond, 1)
        plan = X11StripPlan.make(screenWidth: connection.width, screenHeight: connection.height,
                                 frame: PictureSize(width: connection.width, height: connection.height))
        nextCapture = MonotonicClock.now()
        nextSizeCheck = nextCapture + Self.sizeCheckInterval
        nextFullRead = nextCapture
    }

    /// Makes the source deliver the screen shrunk (aspect kept) to fit `box`; a screen that
    /// already fits is delivered at its own size. Call before the share starts.
    public func deliver(fitting box: PictureSize) {
        precondition(!prepared, "the delivered size is fixed once the share has started")
        let size = X11StripPlan.fittedSize(screenWidth: screenWidth, screenHeight: screenHeight, into: box)
        plan = X11StripPlan.make(screenWidth: screenWidth, screenHeight: screenHeight, frame: size)
    }

    // MARK: memory

    /// The segment GetImage writes strips into: shared with the X server, so outside the budget.
    /// Room for the strips of any screen up to about 8000 pixels wide (`X11StripPlan` keeps a
    /// strip near `targetSegmentBytes`), so a screen that changes size mid-share fits it too;
    /// pages the server never writes are never resident.
    public var sharedMemoryBytes: Int { Self.pageAligned(max(plan.segmentBytes, X11StripPlan.targetSegmentBytes)) }

    /// The fused transform's scratch for one strip.
    public var budgetBytes: Int { Self.reservedScratchBytes(plan) + 4096 }

    /// The scratch reserved: the plan's, or that of a 4K-wide screen shrunk into the same frame
    /// if larger, so the screen may change size mid-share.
    static func reservedScratchBytes(_ plan: X11StripPlan) -> Int {
        let wide = X11StripPlan.make(screenWidth: 3840, screenHeight: 2160,
                                     frame: X11StripPlan.fittedSize(screenWidth: 3840, screenHeight: 2160,
                                                                    into: PictureSize(width: plan.frameWidth,
                                                                                      height: plan.frameHeight)))
        return max(transformScratchBytes(plan), transformScratchBytes(wide), 64)
    }

    static func pageAligned(_ bytes: Int) -> Int { (bytes + 4095) & ~4095 }

    static func transformScratchBytes(_ plan: X11StripPlan) -> Int {
        PixelConversion.transformScratchBytes(from: .bgrx, width: plan.screenWidth, height: plan.screenRows,
                                              toWidth: plan.frameWidth, height: max(plan.frameRows, 1))
    }

    public func prepare(budget: MemoryBudget) throws(SourceError) {
        do {
            let block = try BudgetBlock(budget: budget, byteCount: Self.reservedScratchBytes(plan))
            scratchBase = block.base
            scratchBytes = block.byteCount
            scratch = consume block
        } catch {
            throw SourceError("x11: reserving the conversion scratch: \(error)")
        }
        try connection.attachSegment(bytes: sharedMemoryBytes)
        watchesDamage = connection.watchDamage()
        stripHashes = [UInt64](repeating: 0, count: plan.stripCount)
        hasDelivered = false
        delivered = PictureSize(width: plan.frameWidth, height: plan.frameHeight)
        prepared = true
    }

    // MARK: capture

    /// How one pass over the strips ended.
    private enum Pass {
        case complete(changed: Bool)
        case reply(X11Connection.ImageReply, sequence: UInt32, stripY: Int)
        case conversionFailed(CoreError)
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
        if started >= nextSizeCheck {
            nextSizeCheck = started + Self.sizeCheckInterval
            if let now = connection.currentScreenSize(), now.width != screenWidth || now.height != screenHeight {
                try follow(now)
            }
        }
        let interval = MediaDuration.frameInterval(framesPerSecond: framesPerSecond)
        repeat { nextCapture += interval } while nextCapture <= started

        // Nothing drawn since the last read (and one was delivered): the screen is as delivered.
        let pointerChanged = drawsCursor && cursor.refresh(connection.connection)
        if !connection.takeDamage() && !pointerChanged && hasDelivered && started < nextFullRead {
            readsSkipped += 1
            return .unchanged
        }
        nextFullRead = started + Self.fullReadInterval
        screenReads += 1

        var frame: FrameSlot
        do {
            frame = try pool.acquire(format: .i420, width: frameWidth, height: frameHeight)
        } catch {
            return .unchanged  // every slot is busy downstream: this capture is skipped (alive)
        }
        let pass = frame.withMutablePixels { pixels in
            paintBorders(pixels)
            return readStrips(into: pixels)
        }
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
                    try follow(now)
                    return .nothingYet
                }
                throw SourceError("x11: the X server \(display) refused GetImage at row \(stripY) (X error \(code))")
            case .ready:
                preconditionFailure("a ready reply ends no pass")
            }
        case .conversionFailed(let error):
            throw SourceError("x11: converting the screen failed (\(error))")
        }
    }

    /// Reads every strip into `pixels` (a frame of the plan's size) and says whether any
    /// strip differs from the last delivered frame's.
    private func readStrips(into pixels: FramePixels) -> Pass {
        let segment = connection.segmentBase!.assumingMemoryBound(to: UInt8.self)
        var changed = false
        for index in 0..<plan.stripCount {
            let strip = plan.strip(index)
            let sequence = connection.requestImage(y: strip.screenY, rows: strip.screenRows, width: plan.screenWidth)
            let reply = connection.waitForImage(sequence, until: MonotonicClock.now() + Self.replyTimeout)
            guard reply == .ready else { return .reply(reply, sequence: sequence, stripY: strip.screenY) }
            if drawsCursor {
                cursor.draw(into: segment, rowY: strip.screenY, rows: strip.screenRows, screenWidth: plan.screenWidth,
                            stride: plan.screenWidth * 4)
            }
            do {
                try Self.convertStrip(index, of: plan, from: segment, stride: plan.screenWidth * 4,
                                      into: pixels, at: placement, scratch: scratchBase, scratchBytes: scratchBytes)
            } catch {
                return .conversionFailed(error)
            }
            // Hashed while the rows just written are still in cache.
            let hash = Self.hashStrip(index, of: plan, in: pixels, at: placement)
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
                             stride: Int, into pixels: FramePixels, at origin: (x: Int, y: Int) = (0, 0),
                             scratch: UnsafeMutableRawPointer?, scratchBytes: Int) throws(CoreError) {
        let strip = plan.strip(index)
        let source = FramePixels(packed: .bgrx, width: plan.screenWidth, height: strip.screenRows,
                                 base: screen, stride: stride)
        let rows = pixels.region(x: origin.x, y: origin.y + strip.frameY, width: plan.frameWidth, height: strip.frameRows)
        try PixelConversion.transform(source, into: rows, scratch: scratch, scratchBytes: scratchBytes)
    }

    /// The hash of strip `index`'s rows of the frame, all three planes.
    static func hashStrip(_ index: Int, of plan: X11StripPlan, in pixels: FramePixels,
                          at origin: (x: Int, y: Int) = (0, 0)) -> UInt64 {
        let strip = plan.strip(index)
        let y = pixels.plane(0), u = pixels.plane(1), v = pixels.plane(2)
        let frameY = origin.y + strip.frameY, chromaY = frameY / 2, chromaRows = (strip.frameRows + 1) / 2
        let chromaX = origin.x / 2, chromaWidth = (plan.frameWidth + 1) / 2
        var hash = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15
        hash = Self.hash(rows: y.row(frameY).baseAddress! + origin.x, stride: y.stride, width: plan.frameWidth,
                         count: strip.frameRows, into: hash)
        hash = Self.hash(rows: u.row(chromaY).baseAddress! + chromaX, stride: u.stride, width: chromaWidth,
                         count: chromaRows, into: hash)
        return Self.hash(rows: v.row(chromaY).baseAddress! + chromaX, stride: v.stride, width: chromaWidth,
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

    // MARK: a screen that changes size

    /// Plans the capture of a screen that is now `size`, fitted into the delivered frame size.
    private func follow(_ size: (width: Int, height: Int)) throws(SourceError) {
        guard let box = delivered else { return }
        let fitted = X11StripPlan.fittedSize(screenWidth: size.width, screenHeight: size.height, into: box)
        let next = X11StripPlan.make(screenWidth: size.width, screenHeight: size.height, frame: fitted)
        guard next.frameWidth <= box.width, next.frameHeight <= box.height,
              next.segmentBytes <= connection.segmentBytes,
              Self.transformScratchBytes(next) <= scratchBytes else {
            throw SourceError("x11: the screen of \(display) changed size from \(screenWidth)x\(screenHeight) to "
                              + "\(size.width)x\(size.height), more than this share reserved memory for; start the share again")
        }
        (screenWidth, screenHeight) = (size.width, size.height)
        plan = next
        placement = (((box.width - next.frameWidth) / 2) & ~1, ((box.height - next.frameHeight) / 2) & ~1)
        // A rare event: the one allocation of a capture is here, not per frame.
        stripHashes = [UInt64](repeating: 0, count: next.stripCount)
        hasDelivered = false
        screenChanges += 1
    }

    /// Black (limited range) around the plan's frame, when it does not fill the delivered size.
    private func paintBorders(_ pixels: FramePixels) {
        let box = delivered ?? PictureSize(width: plan.frameWidth, height: plan.frameHeight)
        guard plan.frameWidth != box.width || plan.frameHeight != box.height else { return }
        for index in 0..<3 {
            let plane = pixels.plane(index)
            let shift = index == 0 ? 0 : 1
            let x0 = placement.x >> shift, y0 = placement.y >> shift
            let w = (plan.frameWidth + shift) >> shift, h = (plan.frameHeight + shift) >> shift
            let value: UInt8 = index == 0 ? 16 : 128
            for y in 0..<plane.rows {
                let row = plane.row(y)
                if y < y0 || y >= y0 + h {
                    row.update(repeating: value)
                } else {
                    UnsafeMutableBufferPointer(rebasing: row[0..<min(x0, row.count)]).update(repeating: value)
                    UnsafeMutableBufferPointer(rebasing: row[min(x0 + w, row.count)...]).update(repeating: value)
                }
            }
        }
    }

    public func restart() throws(SourceError) {
        if let sequence = unanswered {
            // Still silent: a new connection would block in the handshake. Keep waiting.
            guard connection.waitForImage(sequence, until: MonotonicClock.now()) != .timedOut else { return }
            unanswered = nil
        }
        var fresh = try X11Connection(display: display)
        if drawsCursor { _ = X11Cursor.available(fresh.connection) }
        let size = (width: fresh.width, height: fresh.height)
        if prepared {
            try fresh.attachSegment(bytes: sharedMemoryBytes)
            watchesDamage = fresh.watchDamage()
        }
        connection = fresh
        if size.width != screenWidth || size.height != screenHeight {
            if prepared { try follow(size) } else {
                (screenWidth, screenHeight) = size
                plan = X11StripPlan.make(screenWidth: size.width, screenHeight: size.height,
                                         frame: PictureSize(width: size.width, height: size.height))
            }
        }
        hasDelivered = false
        nextCapture = MonotonicClock.now()
    }
}
