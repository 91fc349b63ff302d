import CPortal
import RTCShareCore
import RTCShareIO
import RTCShareMedia

/// `portal`: the screen a desktop hands out through the ScreenCast portal (GNOME, KDE, wlroots
/// with xdg-desktop-portal-wlr), over D-Bus, as a PipeWire stream of shared-memory buffers.
///
/// The session asks for one monitor, the pointer drawn in when `cursor`, persisted until
/// revoked: the restore token the portal gives is kept in `tokenFile`, and the next session
/// presents it, so a restarted share gets the same screen without the dialog again.
///
/// PipeWire's loop is driven from the capture thread, as the Wayland source drives its display:
/// a capture waits in the loop until a buffer arrives or the deadline passes. Only the newest
/// buffer is held; at each frame tick it is converted (CCore's fused convert-orient-scale, one
/// pass, into an I420 slot of the delivered size) and given back. A producer that copies with
/// damage (xdg-desktop-portal-wlr) sends nothing while the screen is still: captures then report
/// `.unchanged` while the stream and the session stand, so a still screen costs no conversion.
/// Where the producer says which part changed (SPA_META_VideoDamage; xdg-desktop-portal-wlr
/// passes on the compositor's screencopy damage), only those rows are converted, over the last
/// frame (`LastPicture`); the damage of buffers replaced before a tick is gathered (CPortal).
///
/// The buffers PipeWire maps (at most `PortalSession.maxBuffers`, the screen's size at 4 bytes
/// a pixel) are counted in the plan as shared memory; each leaves this process's resident set
/// when it is given back (CPortal), so while the share runs about one is resident. A size change is followed as the other
/// screens follow theirs; crop and transform metadata are applied. The portal or PipeWire going
/// away leaves captures reporting `.nothingYet`: the stall watchdog restarts the source with
/// back-off, and `restart()` opens a session again with the kept token.
public final class PortalSource: ScreenFitting, CountsConvertedRows {
    public let name = "portal"
    public let format = PixelFormat.i420
    public var frameWidth: Int { delivered.width }
    public var frameHeight: Int { delivered.height }
    public let isLive = true
    public let fixedOrientation: Orientation? = .up

    public let framesPerSecond: Int
    public let drawsCursor: Bool
    /// Where the restore token is kept (nil: not kept).
    public let tokenFile: PortalRestoreToken?
    /// The screen's buffer size and how it is stored now.
    public private(set) var bufferWidth: Int
    public private(set) var bufferHeight: Int
    private var orientation = Orientation.up

    private var session: PortalSession?
    private var delivered: PictureSize
    private var fitted: PictureSize
    private var placement = (x: 0, y: 0)
    private var prepared = false
    /// The picture size the shared memory and the scratch were planned for.
    private var plannedWidth: Int
    private var plannedHeight: Int
    private var scratch: PackedScreenPicture.Scratch?
    private let last = PackedScreenPicture.LastPicture()
    private var nextCapture: MediaTime
    private var hasDelivered = false

    /// Pictures converted, size changes followed, sessions opened again and attempts that failed.
    public private(set) var conversions = 0
    public private(set) var sizeChanges = 0
    public private(set) var reconnects = 0
    public private(set) var failedReconnects = 0
    /// Picture rows converted since the start (a whole picture is all its rows).
    public var rowsConverted: Int { last.rowsConverted.load(ordering: .relaxed) }

    /// What the portal's libraries make resident beside the picture, once loaded: libpipewire
    /// and the four modules its context loads (client-node, protocol-native, session-manager,
    /// adapter), libspa-support, libdbus-1 and its chain (libsystemd, libgcrypt, libgpg-error),
    /// and their heap. Measured by smaps on a release share of a 1920x1080 screen at 1280x720
    /// against the same share of the wayland source: 3.5 MiB besides the buffers.
    public static let libraryBytes = 3_584 << 10
    /// What of `libraryBytes` only the session's set-up touched (the D-Bus handshake, PipeWire's
    /// context, modules and format negotiation): an output that lets the start-up's pages go
    /// (`--peer`, `--whip`) lets these go with them. Measured (`bench/capture-cost.sh`, release,
    /// SRTP `--peer`): the portal share peaked at 41.7–42.9 MiB in 8 runs, 1.2–2.4 under a plan
    /// that kept them (44.1), while the X11 share of the same picture stood 0.0–0.6 over its own;
    /// into a file (nothing let go) it peaked 0.8–1.3 over, as testsrc's file shares do. smaps at
    /// the peaks: libpipewire, its modules, libdbus and libsystemd about 1 MiB smaller over
    /// `--peer` than into the file.
    public static let setupPagesBytes = (12 << 20) / 10

    /// How long a new session may take to agree on a format before it counts as failed.
    static let negotiationTimeout = MediaDuration.milliseconds(10_000)

    /// Opens a portal session (a dialog may ask the user, unless the kept token still holds)
    /// and waits until PipeWire agreed on the picture's format. Delivers it at its own size until `fit`.
    public init(framesPerSecond: Int = 30, cursor: Bool = false,
                tokenFile: PortalRestoreToken? = PortalRestoreToken.defaultPath.map(PortalRestoreToken.init)) throws(SourceError) {
        self.framesPerSecond = max(framesPerSecond, 1)
        drawsCursor = cursor
        self.tokenFile = tokenFile
        let s = try Self.open(cursor: cursor, tokenFile: tokenFile)
        let size = s.negotiatedSize
        guard size.width >= 2, size.height >= 2 else { throw SourceError("portal: the screen's size is \(size.width)x\(size.height)") }
        (bufferWidth, bufferHeight) = size
        (plannedWidth, plannedHeight) = size
        delivered = PictureSize(width: size.width & ~1, height: size.height & ~1)
        fitted = delivered
        session = s
        nextCapture = MonotonicClock.now()
    }

    /// A session with the stream's format agreed, the token it gave kept.
    private static func open(cursor: Bool, tokenFile: PortalRestoreToken?) throws(SourceError) -> PortalSession {
        let s = try PortalSession(restoreToken: tokenFile?.read() ?? "", cursor: cursor)
        if let tokenFile, !s.restoreToken.isEmpty, s.restoreToken != tokenFile.read() {
            try tokenFile.write(s.restoreToken)
        }
        let deadline = MonotonicClock.now() + negotiationTimeout
        while s.negotiatedSize.width == 0 {
            let now = MonotonicClock.now()
            guard now < deadline else {
                throw SourceError("portal: PipeWire agreed on no picture format with the screen's node \(s.node) within "
                                  + "\(negotiationTimeout.microseconds / 1_000_000) s")
            }
            try s.iterate(milliseconds: Int((deadline.microseconds - now.microseconds + 999) / 1000))
        }
        return s
    }

    public var uprightScreenSize: PictureSize {
        let s = orientation.uprightSize(width: bufferWidth, height: bufferHeight)
        return PictureSize(width: s.width, height: s.height)
    }

    public func deliver(fitting box: PictureSize) {
        precondition(!prepared, "the delivered size is fixed once the share has started")
        let upright = uprightScreenSize
        fitted = X11StripPlan.fittedSize(screenWidth: upright.width & ~1, screenHeight: upright.height & ~1, into: box)
        delivered = fitted
    }

    // MARK: memory

    /// The buffers PipeWire maps from the producer: the screen at 4 bytes a pixel, each.
    public var sharedMemoryBytes: Int {
        PortalSession.maxBuffers * PackedScreenPicture.bufferBytes(width: plannedWidth, height: plannedHeight)
    }

    public var budgetBytes: Int { reservedScratchBytes + 4096 }

    private var reservedScratchBytes: Int {
        PackedScreenPicture.reservedScratchBytes(width: plannedWidth, height: plannedHeight, orientation: orientation, fitted: fitted,
                                                 delivered: delivered)
    }

    public func prepare(budget: MemoryBudget) throws(SourceError) {
        scratch = try PackedScreenPicture.Scratch(budget: budget, bytes: reservedScratchBytes, source: "portal")
        prepared = true
    }

    // MARK: capture

    public func capture(from pool: FramePool, until deadline: MediaTime) throws(SourceError) -> CaptureOutcome {
        precondition(prepared, "prepare(budget:) must run before the first capture")
        guard let s = session else {
            // Gone: nothing to do until the watchdog's restart opens a session again.
            MonotonicClock.sleep(until: deadline)
            return .nothingYet
        }
        while true {
            guard s.portalAlive else { return lost() }
            let now = MonotonicClock.now()
            // A buffer that cannot be read (a DMA-BUF, a chunk outside its mapping) ends the share with its line.
            var frame: rtcs_pw_frame? = nil
            if now >= nextCapture { frame = try s.take() }
            if let frame {
                let interval = MediaDuration.frameInterval(framesPerSecond: framesPerSecond)
                repeat { nextCapture += interval } while nextCapture <= now
                defer { s.release() }
                guard let slot = try convert(frame, pool: pool, at: now) else { return .unchanged }
                return .frame(slot)
            }
            // Nothing new by the deadline: a still screen while the stream stands.
            if now >= deadline { return hasDelivered ? .unchanged : .nothingYet }
            // Wait in PipeWire's loop: until the frame tick (buffers arriving meanwhile replace
            // the one held), or past it until a buffer arrives or the deadline.
            let until = now < nextCapture ? min(nextCapture, deadline) : deadline
            do {
                try s.iterate(milliseconds: Int((until.microseconds - now.microseconds + 999) / 1000))
            } catch {
                return lost()
            }
        }
    }

    /// The portal or PipeWire went away: dropped, so the watchdog's restart opens a new session.
    private func lost() -> CaptureOutcome {
        session = nil
        hasDelivered = false
        last.forget()
        return .nothingYet
    }

    /// The buffer's picture, converted into a frame of the delivered size; nil when every slot
    /// is busy downstream (the capture is skipped, alive).
    private func convert(_ frame: rtcs_pw_frame, pool: FramePool, at time: MediaTime) throws(SourceError) -> FrameSlot? {
        // Noted first: once the buffer is given back, what it changed is known nowhere else.
        last.noteDamage(rows: frame.damaged != 0 ? Int(frame.damage_y)..<Int(frame.damage_y + frame.damage_height) : nil)
        guard let base = frame.data else { return nil }
        let width = Int(frame.width), height = Int(frame.height), stride = Int(frame.stride)
        let turned = WaylandOutputTransform.orientation(transform: Int(frame.transform), yInverted: false)
        if width != bufferWidth || height != bufferHeight || turned != orientation {
            try follow(width: width, height: height, orientation: turned)
        }
        let redFirst = frame.format == RTCS_PW_RGBX.rawValue || frame.format == RTCS_PW_RGBA.rawValue
        // The converter reads B G R X; PipeWire maps the producer's buffer read-only unless it says otherwise.
        guard !redFirst || frame.writable != 0 else {
            throw SourceError("portal: the screen comes as RGBx in read-only buffers; rtcshare reads BGRx/BGRA, "
                              + "or RGBx/RGBA it may swap in place")
        }
        guard var slot = try PackedScreenPicture.convert(base, width: width, height: height, stride: stride,
                                                         redFirst: redFirst, orientation: orientation, delivered: delivered,
                                                         fitted: fitted, placement: placement, scratch: scratch!, last: last,
                                                         at: time, pool: pool, what: "portal: converting the screen")
        else { return nil }
        hasDelivered = true
        conversions += 1
        slot.ptsMicroseconds = time.microseconds
        return slot
    }

    /// Plans the conversion of a picture that is now `width` x `height` stored as `orientation`.
    private func follow(width: Int, height: Int, orientation turned: Orientation) throws(SourceError) {
        guard width * height <= plannedWidth * plannedHeight else {
            throw SourceError("portal: the screen grew to \(width)x\(height), more than this share planned memory for "
                              + "(\(plannedWidth)x\(plannedHeight)); start the share again")
        }
        let upright = turned.uprightSize(width: width, height: height)
        let next = X11StripPlan.fittedSize(screenWidth: max(upright.width & ~1, 2), screenHeight: max(upright.height & ~1, 2),
                                           into: delivered)
        guard scratch?.fits(width: width, height: height, into: next, orientation: turned) == true else {
            throw SourceError("portal: the screen changed to \(width)x\(height), more than this share reserved memory for; "
                              + "start the share again")
        }
        (bufferWidth, bufferHeight, orientation) = (width, height, turned)
        fitted = next
        placement = (((delivered.width - next.width) / 2) & ~1, ((delivered.height - next.height) / 2) & ~1)
        last.forget()
        sizeChanges += 1
    }

    public func restart() throws(SourceError) {
        session = nil
        // The portal or PipeWire not back yet: stay without a session; the watchdog tries again
        // with back-off.
        guard let fresh = try? Self.open(cursor: drawsCursor, tokenFile: tokenFile) else {
            failedReconnects += 1
            return
        }
        session = fresh
        reconnects += 1
        hasDelivered = false
        last.forget()
        nextCapture = MonotonicClock.now()
    }
}
