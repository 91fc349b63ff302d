import CXCB
import Glibc
import RTCShareCore
import RTCShareIO
import RTCShareMedia

/// One connection to an X server, set up for capture: the screen checked for what the
/// converter reads (TrueColor with 8-bit channels in 32-bit little-endian pixels, B G R X in
/// memory) and MIT-SHM present; later one SysV shared segment, attached here and in the server,
/// that GetImage writes strips into. Owns the connection and the segment; `deinit` lets both go
/// (the server drops a client's segments when it disconnects).
///
/// Replies are awaited with a time limit (`waitForImage`), never by a blocking call, so a
/// server that stops answering cannot pin the capture thread: the share can still be stopped.
///
/// Where the server has the DAMAGE extension (`watchDamage`), it says when anything on the
/// screen was drawn: one DamageNotify each time the damaged region goes from empty to not
/// empty (level NonEmpty), emptied again by `takeDamage`. Events are read wherever the
/// connection reads (while waiting for an image too), so none is lost between two captures.
struct X11Connection: ~Copyable {
    let connection: OpaquePointer
    /// The display name as given or taken from $DISPLAY, for messages.
    let display: String
    let root: xcb_window_t
    let width: Int
    let height: Int
    private(set) var segment: xcb_shm_seg_t = 0
    private(set) var segmentBase: UnsafeMutableRawPointer?
    private(set) var segmentBytes = 0
    /// The root window's damage object (0: DAMAGE not in use) and the extension's first event.
    private(set) var damage: xcb_damage_damage_t = 0
    private var damageEvent: UInt8 = 0
    /// A DamageNotify arrived since the last `takeDamage`.
    private var damageReported = false

    /// Connects to `display` (nil: $DISPLAY) and checks the screen and MIT-SHM. Every throw comes
    /// before the non-throwing init it delegates to (Swift 6.0's compiler crashes on a throw out
    /// of a ~Copyable init whose stored defaults are in place).
    init(display name: String?) throws(SourceError) {
        let env = getenv("DISPLAY").map { String(cString: $0) }
        guard let display = name ?? env, !display.isEmpty else {
            throw SourceError("x11: no display given and DISPLAY is not set (use --source x11:DISPLAY)")
        }
        var screenNumber: Int32 = 0
        // xcb_connect never returns NULL: a failed connection is an object in an error state.
        guard let c = xcb_connect(display, &screenNumber) else {
            throw SourceError("x11: cannot open display \(display)")
        }
        let failure = xcb_connection_has_error(c)
        if failure != 0 {
            xcb_disconnect(c)
            switch failure {
            case XCB_CONN_CLOSED_PARSE_ERR: throw SourceError("x11: cannot open display '\(display)': not a display name")
            case XCB_CONN_CLOSED_INVALID_SCREEN: throw SourceError("x11: cannot open display \(display): no such screen")
            default: throw SourceError("x11: cannot open display \(display)")
            }
        }
        let screen: (root: xcb_window_t, width: Int, height: Int)
        do throws(SourceError) {
            screen = try Self.checkScreen(c, number: Int(screenNumber), display: display)
            guard Self.queryExtension(c, "MIT-SHM") != nil else {
                throw SourceError("x11: MIT-SHM not available on \(display)")
            }
        } catch {
            xcb_disconnect(c)
            throw error
        }
        self.init(connection: c, display: display, screen: screen)
    }

    private init(connection: OpaquePointer, display: String, screen: (root: xcb_window_t, width: Int, height: Int)) {
        self.connection = connection
        self.display = display
        (root, width, height) = screen
    }

    deinit {
        xcb_disconnect(connection)
        if let segmentBase { shmdt(segmentBase) }
    }

    /// The root window and size of screen `number`, after checking its pixels are what
    /// `ccore_bgra_to_i420` reads as BGRX.
    private static func checkScreen(_ c: OpaquePointer, number: Int,
                                    display: String) throws(SourceError) -> (xcb_window_t, Int, Int) {
        let setup = xcb_get_setup(c)!
        var screens = xcb_setup_roots_iterator(setup)
        var index = 0
        while screens.rem > 0 && index < number {
            xcb_screen_next(&screens)
            index += 1
        }
        guard screens.rem > 0, let screen = screens.data?.pointee else {
            throw SourceError("x11: display \(display) has no screen \(number)")
        }
        let depth = screen.root_depth
        let unsupported = "x11: the screen of \(display) is not a 24/32-bit TrueColor little-endian ZPixmap"
        guard depth == 24 || depth == 32 else { throw SourceError("\(unsupported) (depth \(depth))") }
        guard setup.pointee.image_byte_order == UInt8(XCB_IMAGE_ORDER_LSB_FIRST.rawValue) else {
            throw SourceError("\(unsupported) (big-endian pixels)")
        }
        // The pixmap format of the root depth must store a pixel in 32 bits.
        let formats = xcb_setup_pixmap_formats(setup)
        let formatCount = Int(xcb_setup_pixmap_formats_length(setup))
        var bitsPerPixel = 0
        for i in 0..<formatCount where formats![i].depth == depth {
            bitsPerPixel = Int(formats![i].bits_per_pixel)
        }
        guard bitsPerPixel == 32 else { throw SourceError("\(unsupported) (\(bitsPerPixel) bits per pixel)") }
        // The root visual must put red, green and blue in bytes 2, 1, 0.
        var visualOK = false
        var depths = xcb_screen_allowed_depths_iterator(screens.data)
        while depths.rem > 0 {
            var visuals = xcb_depth_visuals_iterator(depths.data)
            while visuals.rem > 0 {
                if let v = visuals.data?.pointee, v.visual_id == screen.root_visual {
                    visualOK = v._class == UInt8(XCB_VISUAL_CLASS_TRUE_COLOR.rawValue)
                        && v.red_mask == 0xff0000 && v.green_mask == 0x00ff00 && v.blue_mask == 0x0000ff
                }
                xcb_visualtype_next(&visuals)
            }
            xcb_depth_next(&depths)
        }
        guard visualOK else { throw SourceError("\(unsupported) (root visual)") }
        return (screen.root, Int(screen.width_in_pixels), Int(screen.height_in_pixels))
    }

    /// Creates a shared segment of `bytes`, attaches it here and in the server, and marks it
    /// for removal at once, so it disappears with the last detach, however the process ends.
    mutating func attachSegment(bytes: Int) throws(SourceError) {
        precondition(segmentBase == nil, "segment attached twice")
        let id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0o600)
        guard id >= 0 else {
            throw SourceError("x11: cannot create a \(bytes >> 10) KiB shared memory segment: \(String(cString: strerror(errno)))")
        }
        let base = shmat(id, nil, 0)
        guard let base, base != UnsafeMutableRawPointer(bitPattern: -1) else {
            let reason = String(cString: strerror(errno))
            shmctl(id, IPC_RMID, nil)
            throw SourceError("x11: cannot map a shared memory segment: \(reason)")
        }
        let seg = xcb_generate_id(connection)
        // Checked: the reply says the server has attached it, after which removal is safe.
        let error = xcb_request_check(connection, xcb_shm_attach_checked(connection, seg, UInt32(id), 0))
        shmctl(id, IPC_RMID, nil)
        if let error {
            free(error)
            shmdt(base)
            throw SourceError("x11: the X server \(display) cannot attach shared memory (MIT-SHM needs the server on this host)")
        }
        guard xcb_connection_has_error(connection) == 0 else {
            shmdt(base)
            throw lostConnection
        }
        segment = seg
        segmentBase = base
        segmentBytes = bytes
    }

    /// Asks the server to write screen rows [y, y + rows), `width` pixels wide (the screen's
    /// width now, which may differ from the one the connection started with), into the
    /// segment; returns the
    /// request's sequence number for `waitForImage`.
    func requestImage(y: Int, rows: Int, width: Int) -> UInt32 {
        let cookie = xcb_shm_get_image(connection, root, 0, Int16(y), UInt16(width), UInt16(rows),
                                       ~0, UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), segment, 0)
        return cookie.sequence
    }

    /// What waiting for a GetImage gave.
    enum ImageReply: Equatable {
        /// The rows are in the segment.
        case ready
        /// The server refused the request (an X error code: the screen shrank, for example).
        case refused(UInt8)
        /// No answer before the deadline; the request is still outstanding.
        case timedOut
        /// The connection is gone (the server exited or closed it).
        case lost
    }

    /// Asks the server to report drawing on the root window (DAMAGE 1.1, level NonEmpty).
    /// False where the server has no DAMAGE extension: captures then read the whole screen
    /// each time.
    mutating func watchDamage() -> Bool {
        guard let ext = Self.queryExtension(connection, "DAMAGE") else { return false }
        // The version must be asked before any other request of the extension.
        guard let version = xcb_damage_query_version_reply(connection, xcb_damage_query_version(connection, 1, 1), nil) else {
            return false
        }
        free(version)
        let id = xcb_generate_id(connection)
        let error = xcb_request_check(connection, xcb_damage_create_checked(
            connection, id, root, UInt8(XCB_DAMAGE_REPORT_LEVEL_NON_EMPTY.rawValue)))
        if let error {
            free(error)
            return false
        }
        damage = id
        damageEvent = ext.first_event &+ UInt8(XCB_DAMAGE_NOTIFY)
        damageReported = true  // whatever the screen holds now has not been read yet
        return true
    }

    /// Whether anything was drawn since the last call (always true without DAMAGE). Empties
    /// the damaged region first, so drawing during the read that follows is reported again.
    mutating func takeDamage() -> Bool {
        guard damage != 0 else { return true }
        readEvents()
        guard damageReported else { return false }
        damageReported = false
        xcb_damage_subtract(connection, damage, xcb_xfixes_region_t(XCB_NONE), xcb_xfixes_region_t(XCB_NONE))
        _ = xcb_flush(connection)
        return true
    }

    /// Reads every event the connection has queued, noting damage; the rest are dropped (none
    /// other is selected; the server may still send mapping notices).
    private mutating func readEvents() {
        while let event = xcb_poll_for_event(connection) { take(event) }
    }

    /// Notes a DamageNotify, frees the event.
    private mutating func take(_ event: UnsafeMutablePointer<xcb_generic_event_t>) {
        if damage != 0 && event.pointee.response_type & 0x7f == damageEvent { damageReported = true }
        free(event)
    }

    /// Extension `name`'s record on `c` if the server has it (asked by name: libxcb's own
    /// extension records are C globals Swift 6 will not touch).
    private static func queryExtension(_ c: OpaquePointer, _ name: String) -> xcb_query_extension_reply_t? {
        guard let reply = xcb_query_extension_reply(c, xcb_query_extension(c, UInt16(name.utf8.count), name), nil) else {
            return nil
        }
        defer { free(reply) }
        return reply.pointee.present != 0 ? reply.pointee : nil
    }

    /// Waits until `deadline` for the reply to request `sequence`.
    mutating func waitForImage(_ sequence: UInt32, until deadline: MediaTime) -> ImageReply {
        guard xcb_flush(connection) > 0 else { return .lost }
        while true {
            var reply: UnsafeMutableRawPointer?
            var error: UnsafeMutablePointer<xcb_generic_error_t>?
            if xcb_poll_for_reply(connection, sequence, &reply, &error) != 0 {
                if let reply {
                    free(reply)
                    return .ready
                }
                if let error {
                    let code = error.pointee.error_code
                    free(error)
                    return .refused(code)
                }
                return .lost
            }
            // Older libxcb only reads the socket when asked for an event: ask (damage is noted).
            if let event = xcb_poll_for_event(connection) {
                take(event)
                continue
            }
            if xcb_connection_has_error(connection) != 0 { return .lost }
            let left = deadline.microseconds - MonotonicClock.now().microseconds
            if left <= 0 { return .timedOut }
            var pfd = pollfd(fd: xcb_get_file_descriptor(connection), events: Int16(POLLIN), revents: 0)
            _ = poll(&pfd, 1, Int32(min((left + 999) / 1000, 1000)))
        }
    }

    /// The current size of the root window, or nil if the server does not say.
    func currentScreenSize() -> (width: Int, height: Int)? {
        let cookie = xcb_get_geometry(connection, root)
        guard let reply = xcb_get_geometry_reply(connection, cookie, nil) else { return nil }
        defer { free(reply) }
        return (Int(reply.pointee.width), Int(reply.pointee.height))
    }

    var lostConnection: SourceError { SourceError("x11: lost the connection to the X server \(display)") }
}
