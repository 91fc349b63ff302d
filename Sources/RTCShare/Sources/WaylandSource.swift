import CWayland
import RTCShareCore
import RTCShareIO
import RTCShareMedia

/// `wayland` or `wayland:OUTPUT`: an output of a wlroots compositor (sway, labwc, wayfire, cage),
/// copied by the compositor into shared memory through the screencopy protocol.
///
/// A still screen costs nothing: each frame is asked with `copy_with_damage`, which the
/// compositor holds until something on the output is drawn, so while nothing is, no copy is made
/// and nothing is converted; the capture then only checks, twice a second, that the compositor
/// still answers (a wl_display.sync), and reports `.unchanged` while it does.
///
/// The buffer is the output's whole picture (wl_shm, 8-bit XRGB/ARGB/XBGR/ABGR; other formats
/// are refused with one line): it is mapped once, sized for the output at the start, and counted
/// in the plan as shared memory. Each copied frame goes through CCore's fused
/// convert-orient-scale in one pass into an I420 frame slot of the delivered size, upright
/// whatever the output's transform, so a 1080p output sent at 720p costs 720p frames. Only the
/// rows the compositor's damage covers are converted, over the last frame (`LastPicture`), where
/// such a band maps exactly onto the delivered frame; a copy without damage (screencopy version 1,
/// a y-inverted buffer, whose damage rows are not the stored ones) is converted whole.
///
/// An output that changes size or turns mid-share is followed as the X11 source follows its
/// screen: the delivered size stays, the new picture is fitted into it, aspect kept, centred on
/// black; one whose buffer exceeds what was mapped ends the share with that line.
///
/// A compositor that goes away (or stops answering) leaves captures reporting `.nothingYet`:
/// the stall watchdog restarts the source with back-off, and `restart()` connects again once the
/// compositor is back (until then it stays disconnected, so the share keeps its last picture).
public final class WaylandSource: ScreenFitting, CountsConvertedRows {
    public let name: String
    public let format = PixelFormat.i420
    public var frameWidth: Int { delivered.width }
    public var frameHeight: Int { delivered.height }
    public let isLive = true
    public let fixedOrientation: Orientation? = .up

    /// The socket as given or taken from $WAYLAND_DISPLAY, and the output asked for (nil: first).
    public let display: String
    public let outputName: String?
    /// The output's buffer size and upright size now (they may change mid-share).
    public private(set) var bufferWidth: Int
    public private(set) var bufferHeight: Int
    public let framesPerSecond: Int
    /// Whether the compositor draws the pointer into the copies (screencopy's overlay_cursor).
    public let drawsCursor: Bool

    private var connection: WaylandConnection?
    private var orientation: Orientation
    /// The size frames are delivered at; the picture's fitted size and where it sits in it.
    private var delivered: PictureSize
    private var fitted: PictureSize
    private var placement = (x: 0, y: 0)
    private var prepared = false
    private var mappedBytes = 0
    private var scratch: PackedScreenPicture.Scratch?
    private let last = PackedScreenPicture.LastPicture()
    private var nextCapture: MediaTime
    private var hasDelivered = false
    /// Liveness while a copy waits for damage: the pongs seen and when they last grew.
    private var pongsSeen: UInt64 = 0
    private var lastAnswer: MediaTime
    private var nextPing: MediaTime

    /// Frames the compositor copied, times the share followed a new output size, restarts that
    /// found the compositor and those that did not.
    public private(set) var copies = 0
    public private(set) var outputChanges = 0
    public private(set) var reconnects = 0
    public private(set) var failedReconnects = 0
    /// Buffer rows converted since the start (a whole picture is all its rows).
    public var rowsConverted: Int { last.rowsConverted.load(ordering: .relaxed) }

    static let pingInterval = MediaDuration.milliseconds(500)
    /// How long the compositor may leave a sync unanswered before captures count as stalled.
    static let answerTimeout = MediaDuration.milliseconds(1500)

    /// Connects to `display` (`"wayland-1"`, a path; nil takes $WAYLAND_DISPLAY) and picks
    /// `output` by name (nil: the first). Delivers the output at its own size until `fit`.
    public init(display: String? = nil, output: String? = nil, framesPerSecond: Int = 30,
                cursor: Bool = false) throws(SourceError) {
        let c = try WaylandConnection(display: display, output: output)
        let mode = c.mode
        guard mode.width > 0, mode.height > 0, mode.width <= 16384, mode.height <= 16384 else {
            throw SourceError("wayland: output \(c.output) of \(c.display) reports a mode of \(mode.width)x\(mode.height)")
        }
        self.display = c.display
        outputName = output
        name = "wayland:\(c.output.isEmpty ? c.display : c.output)"
        (bufferWidth, bufferHeight) = (mode.width, mode.height)
        orientation = WaylandOutputTransform.orientation(transform: mode.transform, yInverted: false)
        let upright = orientation.uprightSize(width: mode.width, height: mode.height)
        delivered = PictureSize(width: upright.width & ~1, height: upright.height & ~1)
        fitted = delivered
        self.framesPerSecond = max(framesPerSecond, 1)
        drawsCursor = cursor
        connection = c
        nextCapture = MonotonicClock.now()
        lastAnswer = nextCapture
        nextPing = nextCapture
    }

    /// The upright picture's size now.
    public var uprightScreenSize: PictureSize {
        let s = orientation.uprightSize(width: bufferWidth, height: bufferHeight)
        return PictureSize(width: s.width, height: s.height)
    }

    /// Makes the source deliver the output shrunk (aspect kept) to fit `box`. Before the start.
    public func deliver(fitting box: PictureSize) {
        precondition(!prepared, "the delivered size is fixed once the share has started")
        let upright = uprightScreenSize
        fitted = X11StripPlan.fittedSize(screenWidth: upright.width & ~1, screenHeight: upright.height & ~1, into: box)
        delivered = fitted
    }

    // MARK: memory

    /// The buffer the compositor copies into: the output's picture at 4 bytes a pixel, rows
    /// padded to 256 bytes (room for a compositor that pads its stride). Shared with the
    /// compositor, so beside the budget; every page is written by the first copy.
    public var sharedMemoryBytes: Int { PackedScreenPicture.bufferBytes(width: bufferWidth, height: bufferHeight) }

    /// What a wayland share holds beside its buffer and scratch: libwayland-client's and libffi's
    /// pages (0.12 MiB by smaps), and anonymous memory the X11 source's share of the same picture
    /// does not reach (0.4–0.9 MiB at the peak, not attributed further by smaps). Measured
    /// (`bench/capture-cost.sh`, release) as how far the wayland share's peak stood over its plan
    /// beside how far the X11 share's stood: over SRTP `--peer` 0.5–0.8 MiB over its plan in 7
    /// runs (X11 0.0–0.5), into a file 1.5–1.8 (testsrc 0.9–1.1); the window of the tests
    /// (`MemoryPlannerAccuracyTests`) 0.2–0.8.
    public static let libraryBytes = (9 << 20) / 10

    /// The fused transform's scratch for the whole picture.
    public var budgetBytes: Int { reservedScratchBytes + 4096 }

    private var reservedScratchBytes: Int {
        PackedScreenPicture.reservedScratchBytes(width: bufferWidth, height: bufferHeight, orientation: orientation, fitted: fitted,
                                                 delivered: delivered)
    }

    public func prepare(budget: MemoryBudget) throws(SourceError) {
        scratch = try PackedScreenPicture.Scratch(budget: budget, bytes: reservedScratchBytes, source: "wayland")
        mappedBytes = sharedMemoryBytes
        try connection?.mapBuffer(bytes: mappedBytes)
        prepared = true
    }

    // MARK: capture

    public func capture(from pool: FramePool, until deadline: MediaTime) throws(SourceError) -> CaptureOutcome {
        precondition(prepared, "prepare(budget:) must run before the first capture")
        guard connection != nil else {
            // Gone: nothing to do until the watchdog's restart finds the compositor again.
            MonotonicClock.sleep(until: deadline)
            return .nothingYet
        }
        while true {
            let now = MonotonicClock.now()
            switch connection!.state {
            case RTCS_WL_FRAME_IDLE:
                if nextCapture > deadline {
                    MonotonicClock.sleep(until: deadline)
                    return .nothingYet
                }
                MonotonicClock.sleep(until: nextCapture)
                let interval = MediaDuration.frameInterval(framesPerSecond: framesPerSecond)
                let started = MonotonicClock.now()
                repeat { nextCapture += interval } while nextCapture <= started
                connection!.requestFrame(cursor: drawsCursor)
            case RTCS_WL_FRAME_ASKED, RTCS_WL_FRAME_COPYING:
                if now >= nextPing {
                    connection!.ping()
                    nextPing = now + Self.pingInterval
                }
                if now >= deadline { return stillOrStalled(now) }
                do {
                    try connection!.dispatch(milliseconds: Int((deadline.microseconds - now.microseconds + 999) / 1000))
                } catch {
                    // The compositor is gone: the watchdog's restarts look for it again.
                    connection = nil
                    return .nothingYet
                }
                let pongs = connection!.pongs
                if pongs != pongsSeen {
                    pongsSeen = pongs
                    lastAnswer = MonotonicClock.now()
                }
            case RTCS_WL_FRAME_DESCRIBED:
                try checkDescription(connection!.info)
                guard connection!.copy() else {
                    throw SourceError("wayland: the compositor's buffer does not fit the one mapped for it")
                }
            case RTCS_WL_FRAME_READY:
                let info = connection!.info
                connection!.releaseFrame()
                lastAnswer = now
                copies += 1
                let damage = info.damaged != 0 && info.y_invert == 0
                    ? Int(info.damage_y)..<Int(info.damage_y + info.damage_height) : nil
                last.noteDamage(rows: damage)
                guard let frame = try convert(info, pool: pool, at: now) else { return .unchanged }
                return .frame(frame)
            default:  // RTCS_WL_FRAME_FAILED
                connection!.releaseFrame()
                // Damage the compositor sent for the failed copy is not sent again.
                last.noteDamage(rows: nil)
                if !connection!.outputPresent {
                    throw SourceError("wayland: the output \(name.dropFirst("wayland:".count)) of \(display) is gone")
                }
                return .nothingYet  // asked again at the next tick
            }
        }
    }

    /// A copy still waiting: alive and unchanged while the compositor answers syncs, else stalled.
    private func stillOrStalled(_ now: MediaTime) -> CaptureOutcome {
        hasDelivered && now - lastAnswer < Self.answerTimeout ? .unchanged : .nothingYet
    }

    /// Checks what the compositor wants copied, following a new size or transform.
    private func checkDescription(_ info: rtcs_wl_frame_info) throws(SourceError) {
        guard info.shm_format != RTCS_WL_NO_FORMAT else {
            throw SourceError("wayland: the compositor offers no shared-memory format rtcshare reads (last offered "
                              + "\(Self.formatName(info.offered_format)); 8-bit XRGB, ARGB, XBGR or ABGR are read)")
        }
        let width = Int(info.width), height = Int(info.height), stride = Int(info.stride)
        guard width > 0, height > 0, width <= 16384, height <= 16384, stride >= width * 4, stride % 4 == 0 else {
            throw SourceError("wayland: the compositor describes an unusable buffer (\(width)x\(height), stride \(stride))")
        }
        let transform = connection!.mode.transform
        let turned = WaylandOutputTransform.orientation(transform: transform, yInverted: info.y_invert != 0)
        if width != bufferWidth || height != bufferHeight || turned != orientation {
            try follow(width: width, height: height, orientation: turned)
        }
        guard stride * height <= mappedBytes else {
            throw SourceError("wayland: the output of \(display) grew to \(width)x\(height), more than this share "
                              + "mapped memory for; start the share again")
        }
    }

    /// Plans the conversion of a picture that is now `width` x `height` stored as `orientation`.
    private func follow(width: Int, height: Int, orientation turned: Orientation) throws(SourceError) {
        let upright = turned.uprightSize(width: width, height: height)
        let next = X11StripPlan.fittedSize(screenWidth: max(upright.width & ~1, 2), screenHeight: max(upright.height & ~1, 2),
                                           into: delivered)
        guard scratch?.fits(width: width, height: height, into: next, orientation: turned) == true else {
            throw SourceError("wayland: the output of \(display) changed to \(width)x\(height), more than this share "
                              + "reserved memory for; start the share again")
        }
        (bufferWidth, bufferHeight, orientation) = (width, height, turned)
        fitted = next
        placement = (((delivered.width - next.width) / 2) & ~1, ((delivered.height - next.height) / 2) & ~1)
        hasDelivered = false
        last.forget()
        outputChanges += 1
    }

    /// The copied picture, converted into a frame of the delivered size; nil when every slot
    /// is busy downstream (the capture is skipped, alive).
    private func convert(_ info: rtcs_wl_frame_info, pool: FramePool, at time: MediaTime) throws(SourceError) -> FrameSlot? {
        guard let base = connection!.bufferBase else { return nil }
        let width = Int(info.width), height = Int(info.height), stride = Int(info.stride)
        guard var frame = try PackedScreenPicture.convert(base, width: width, height: height, stride: stride,
                                                         redFirst: info.red_first != 0, orientation: orientation, delivered: delivered, fitted: fitted,
                                                         placement: placement, scratch: scratch!, last: last, at: time, pool: pool,
                                                         what: "wayland: converting the output")
        else { return nil }
        hasDelivered = true
        frame.ptsMicroseconds = time.microseconds
        return frame
    }

    /// A wl_shm format code as its four letters (DRM fourcc) or its number (0 and 1 are ARGB/XRGB).
    static func formatName(_ code: UInt32) -> String {
        if code == RTCS_WL_NO_FORMAT { return "none" }
        if code == 0 { return "ARGB8888" }
        if code == 1 { return "XRGB8888" }
        let letters = (0..<4).map { UInt8(truncatingIfNeeded: code >> ($0 * 8)) }
        guard letters.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else { return "format \(code)" }
        return String(decoding: letters, as: UTF8.self)
    }

    public func restart() throws(SourceError) {
        connection = nil
        // Not there yet (or not answering the set-up): stay disconnected; the watchdog tries
        // again with back-off. A compositor that is back but no longer fits ends the share.
        guard let fresh = try? WaylandConnection(display: display, output: outputName) else {
            failedReconnects += 1
            return
        }
        let mode = fresh.mode
        if prepared { try fresh.mapBuffer(bytes: mappedBytes) }
        connection = fresh
        let turned = WaylandOutputTransform.orientation(transform: mode.transform, yInverted: false)
        if prepared, mode.width != bufferWidth || mode.height != bufferHeight || turned != orientation {
            try follow(width: mode.width, height: mode.height, orientation: turned)
        }
        reconnects += 1
        hasDelivered = false
        last.forget()
        pongsSeen = 0
        lastAnswer = MonotonicClock.now()
        nextCapture = lastAnswer
    }
}
