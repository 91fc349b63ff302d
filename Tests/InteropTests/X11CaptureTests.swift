import CXCB
import Foundation
import RTCShare
import RTCShareCore
import RTCShareIO
import TestSupport
import Testing

/// `rtcshare --source x11:DISPLAY` against a real X server (Xvfb) whose root window the test
/// paints with rectangles of known colours; ffmpeg decodes what was sent, and the rectangles
/// must be where they were drawn, at the luma BT.601 gives their colours.
@Suite(.serialized) struct X11CaptureTests {
    /// A filled rectangle of the picture, in screen pixels.
    struct Box: Sendable {
        var x: Int, y: Int, width: Int, height: Int
        var rgb: UInt32

        /// Studio-range BT.601 luma of the colour (what an I420 encoder input holds).
        var luma: Double {
            let r = Double(rgb >> 16 & 0xff), g = Double(rgb >> 8 & 0xff), b = Double(rgb & 0xff)
            return 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
        }
    }

    static let background: UInt32 = 0x3050c0
    /// On a 640x480 screen: white, black, yellow, green.
    static let boxes = [
        Box(x: 64, y: 64, width: 192, height: 128, rgb: 0xffffff),
        Box(x: 384, y: 96, width: 192, height: 192, rgb: 0x000000),
        Box(x: 96, y: 288, width: 224, height: 128, rgb: 0xe0c020),
        Box(x: 400, y: 352, width: 160, height: 96, rgb: 0x20a040),
    ]

    /// The whole screen, then the boxes.
    static func paintScreen(_ xvfb: Xvfb) throws {
        try xvfb.paint([Box(x: 0, y: 0, width: xvfb.width, height: xvfb.height, rgb: background)] + boxes)
    }

    /// Mean decoded luma of the screen rectangle (x, y, w, h), mapped to the output by
    /// `scale` and `offsetX` and shrunk by a margin so codec edges do not count.
    static func meanLuma(_ frame: Data, width: Int, x: Int, y: Int, w: Int, h: Int,
                         scale: Double = 1, offsetX: Int = 0, margin: Int = 6) -> Double {
        let x0 = Int(Double(x) * scale) + offsetX + margin, x1 = Int(Double(x + w) * scale) + offsetX - margin
        let y0 = Int(Double(y) * scale) + margin, y1 = Int(Double(y + h) * scale) - margin
        var sum = 0, count = 0
        frame.withUnsafeBytes { raw in
            for row in y0..<y1 {
                for column in x0..<x1 {
                    sum += Int(raw[row * width + column])
                    count += 1
                }
            }
        }
        return Double(sum) / Double(max(count, 1))
    }

    /// The frames' luma planes as stored (studio range), decoded by ffmpeg to yuv420p.
    static func decodeY(_ path: String, width: Int, height: Int) throws -> [Data] {
        let ffmpeg = try #require(Tools.which("ffmpeg"), "ffmpeg is not installed (scripts/setup installs it)")
        let result = try Tools.run(ffmpeg, ["-v", "error", "-i", path, "-fps_mode", "passthrough",
                                            "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        #expect(result.status == 0, "ffmpeg: \(result.stderr)")
        let frameBytes = width * height * 3 / 2
        return stride(from: 0, to: result.stdout.count - frameBytes + 1, by: frameBytes).map {
            result.stdout.subdata(in: $0..<$0 + width * height)
        }
    }

    /// The "source N frames" figure of the summary line.
    static func sourceFrames(_ stderr: String) -> Int? {
        guard let range = stderr.range(of: "source ") else { return nil }
        return Int(stderr[range.upperBound...].prefix { $0.isNumber })
    }

    /// Output sizes from a 640x480 screen: its own size, half, and 16:9 (a 480x360 picture
    /// placed 80 px from the left between black bars).
    @Test(arguments: [(640, 480, 1.0, 0), (320, 240, 0.5, 0), (640, 360, 0.75, 80)])
    func theScreenArrivesWhereAndAsItWasDrawn(width: Int, height: Int, scale: Double, offsetX: Int) throws {
        let xvfb = try Xvfb(width: 640, height: 480)
        defer { xvfb.stop() }
        try Self.paintScreen(xvfb)
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("x.ivf").path
        let run = try Tools.run(Tools.rtcshare, ["--source", "x11:\(xvfb.display)", "--size", "\(width)x\(height)",
                                                 "--output", ivf, "--duration", "2"])
        #expect(run.status == 0, "rtcshare failed: \(run.stderr)")

        let frames = try Self.decodeY(ivf, width: width, height: height)
        // Where the boxes are is under test, in every frame; the filler repeating the one
        // source frame is judged by the gaps, not the count (a loaded machine misses ticks):
        // never more than 2 s at 20 fps allow (42), at least half of them (20), none over
        // 0.5 s apart.
        let times = try Tools.ivfFrameTimes(ivf)
        #expect(frames.count >= 20 && frames.count <= 42, "decoded \(frames.count) frames")
        #expect(times.count == frames.count && Tools.longestGap(times) < 0.5,
                "\(times.count) frames, longest gap \(Tools.longestGap(times)) s")
        for (n, frame) in frames.enumerated() {
            for box in Self.boxes + [Box(x: 280, y: 16, width: 80, height: 48, rgb: Self.background)] {
                let mean = Self.meanLuma(frame, width: width, x: box.x, y: box.y, w: box.width, h: box.height,
                                         scale: scale, offsetX: offsetX)
                #expect(abs(mean - box.luma) <= 8, "frame \(n), box at \(box.x),\(box.y): luma \(mean), want \(box.luma)")
            }
            if offsetX > 0 {
                let bar = Self.meanLuma(frame, width: width, x: 0, y: 0, w: offsetX, h: height, margin: 4)
                #expect(abs(bar - 16) <= 4, "frame \(n): bar luma \(bar)")
            }
        }
        // The screen did not change: one source frame, the rest repeats by the filler.
        let delivered = try #require(Self.sourceFrames(run.stderr), "\(run.stderr)")
        #expect(delivered >= 1 && delivered <= 2, "source delivered \(delivered) frames for a static screen")
    }

    @Test func aChangeOnTheScreenReachesTheReceiver() throws {
        let xvfb = try Xvfb(width: 640, height: 480)
        defer { xvfb.stop() }
        try Self.paintScreen(xvfb)
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("x.ivf").path
        // A white box appears 1.2 s into a 3 s share, where the background was.
        let late = Box(x: 288, y: 16, width: 64, height: 48, rgb: 0xffffff)
        let painter = Thread {
            // A fixed wait on purpose: when the screen changes is the scenario (the early frames
            // show the background, the late ones the box).
            Thread.sleep(forTimeInterval: 1.2)
            try? xvfb.paint([late])
        }
        painter.start()
        let run = try Tools.run(Tools.rtcshare, ["--source", "x11:\(xvfb.display)", "--size", "640x480",
                                                 "--output", ivf, "--duration", "3"])
        #expect(run.status == 0, "rtcshare failed: \(run.stderr)")
        let frames = try Self.decodeY(ivf, width: 640, height: 480)
        let times = try Tools.ivfFrameTimes(ivf)
        try #require(times.count == frames.count, "\(times.count) frames in the file, \(frames.count) decoded")
        // Frames are picked by when they went out, not by their number (a loaded machine misses
        // ticks, so there are fewer): those of the first half second show the background, those
        // of the last half second the box; at least half of 3 s at 20 fps (30), none over 0.5 s
        // apart.
        #expect(frames.count >= 30 && Tools.longestGap(times) < 0.5,
                "decoded \(frames.count) frames, longest gap \(Tools.longestGap(times)) s")
        let lumas = frames.map { Self.meanLuma($0, width: 640, x: late.x, y: late.y, w: late.width, h: late.height) }
        let background = Box(x: 0, y: 0, width: 1, height: 1, rgb: Self.background).luma
        let early = lumas.indices.filter { times[$0] - times[0] < 0.5 }.map { lumas[$0] }
        let last = lumas.indices.filter { times.last! - times[$0] < 0.5 }.map { lumas[$0] }
        #expect(!early.isEmpty && early.allSatisfy { abs($0 - background) <= 8 }, "early frames: \(early)")
        #expect(!last.isEmpty && last.allSatisfy { abs($0 - late.luma) <= 8 }, "late frames: \(last)")
        let delivered = try #require(Self.sourceFrames(run.stderr), "\(run.stderr)")
        #expect(delivered >= 2 && delivered <= 6, "source delivered \(delivered) frames for one change")
    }

    /// The screen changes size mid-share (RandR, on a resizable Xephyr): the share goes on at the
    /// size it started with, each new screen fitted into it, aspect kept and centred on black —
    /// a smaller screen at its own size, a larger one shrunk.
    @Test func aScreenThatChangesSizeIsFollowedAndTheShareGoesOn() throws {
        let host = try Xvfb(width: 1600, height: 1200)
        defer { host.stop() }
        let screen = try Xvfb(width: 1024, height: 768, nestedIn: host)
        defer { screen.stop() }
        let mark = Box(x: 64, y: 64, width: 192, height: 128, rgb: 0xffffff)
        func repaint() throws {
            try screen.paint([Box(x: 0, y: 0, width: screen.width, height: screen.height, rgb: Self.background), mark])
        }
        try repaint()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("x.ivf").path
        let share = try BackgroundProcess(Tools.rtcshare, ["--source", "x11:\(screen.display)", "--size", "1024x768",
                                                           "--output", ivf, "--duration", "6"], in: dir, name: "rtcshare")
        // A fixed timeline on purpose: when the screen changes is the scenario. 640x400 fits the
        // 1024x768 share as it is (bars above, below and beside it); 1280x1024 is shrunk to 960x768
        // (bars beside it), and is larger than the screen the share started on.
        Thread.sleep(forTimeInterval: 1.5)
        try screen.resize(width: 640, height: 400)
        try repaint()
        Thread.sleep(forTimeInterval: 2)
        try screen.resize(width: 1280, height: 1024)
        try repaint()
        let status = share.wait(timeout: 30)
        #expect(status == 0, "rtcshare: \(share.stderr)")
        let frames = try Self.decodeY(ivf, width: 1024, height: 768)
        // The fitting of each screen is under test, not the rate (a loaded machine misses ticks):
        // at least half of 6 s at 20 fps (60), none over 1.5 s apart (a screen still for 2 s is
        // encoded once a second: zero-hertz).
        let times = try Tools.ivfFrameTimes(ivf)
        #expect(frames.count >= 60 && Tools.longestGap(times) < 1.5,
                "decoded \(frames.count) frames of 6 s at 20 fps, longest gap \(Tools.longestGap(times)) s")
        let black = 16.0, white = mark.luma
        func luma(_ frame: Data, _ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Double {
            Self.meanLuma(frame, width: 1024, x: x, y: y, w: w, h: h, margin: 4)
        }
        // Before (the first second, picked by time): the mark where it was drawn.
        let before = frames.indices.filter { times[$0] - times[0] < 1 }.map { frames[$0] }
        #expect(!before.isEmpty && before.allSatisfy { abs(luma($0, 64, 64, 192, 128) - white) <= 8 })
        // 640x400 centred at (192, 184): black above it, the mark at (256, 248).
        let small = frames.filter { abs(luma($0, 0, 0, 1024, 180) - black) <= 4 && abs(luma($0, 256, 248, 192, 128) - white) <= 8 }
        #expect(small.count >= 10, "frames showing the 640x400 screen letterboxed: \(small.count) of \(frames.count)")
        // 1280x1024 shrunk to 960x768 at (32, 0): bars 32 wide, the mark at (80, 48), 144x96.
        for frame in frames.suffix(5) {
            #expect(abs(luma(frame, 0, 0, 32, 768) - black) <= 4, "left bar")
            #expect(abs(luma(frame, 992, 0, 32, 768) - black) <= 4, "right bar")
            #expect(abs(luma(frame, 80, 48, 144, 96) - white) <= 8, "the mark on the shrunk screen")
            #expect(abs(luma(frame, 600, 400, 200, 200) - Box(x: 0, y: 0, width: 1, height: 1, rgb: Self.background).luma) <= 8)
        }
    }

    /// DAMAGE: the source itself against Xvfb. A still screen is read once and then not again
    /// (bar the once-a-second full read) while captures go on at 30 a second; a box drawn on it
    /// is in the next frame.
    @Test func aStillScreenIsNotReadUntilSomethingIsDrawn() throws {
        let xvfb = try Xvfb(width: 640, height: 480)
        try Self.paintScreen(xvfb)
        let source = try X11Source(display: xvfb.display, framesPerSecond: 30)
        let budget = try MemoryBudget(capBytes: 16 << 20, prefault: false)
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: source.frameWidth,
                                 maxHeight: source.frameHeight, count: 2)
        try source.prepare(budget: budget)
        #expect(source.watchesDamage, "Xvfb has DAMAGE")

        /// Captures until `seconds` have passed or (if `untilFrame`) a frame came; the frames' luma at (x, y).
        func captures(for seconds: Double, untilFrame: Bool = false, lumaAt x: Int, _ y: Int) throws -> [UInt8] {
            var lumas: [UInt8] = []
            let end = MonotonicClock.now() + .milliseconds(Int64(seconds * 1000))
            while MonotonicClock.now() < end {
                let outcome = try source.capture(from: pool, until: end)
                if case .frame(let frame) = consume outcome {
                    lumas.append(frame.withPixels { $0.plane(0).row(y)[x] })
                    if untilFrame { break }
                }
            }
            return lumas
        }
        // A box of the picture: white at (100, 100).
        let first = try captures(for: 0.9, lumaAt: 100, 100)
        #expect(first.count == 1, "one frame of a still screen, got \(first.count)")
        #expect((first.first ?? 0) > 200)
        #expect(source.screenReads <= 2, "reads \(source.screenReads)")
        // Enough captures for the skipping to show: ~27 in 0.9 s at 30 a second, fewer on a
        // loaded machine; the reads above are what is under test.
        #expect(source.readsSkipped >= 10, "skipped \(source.readsSkipped) of ~27 captures")

        try xvfb.paint([Box(x: 64, y: 64, width: 192, height: 128, rgb: 0x000000)])
        let readsBefore = source.screenReads
        // The next capture has it (a second is only the wait's limit, for a loaded machine).
        let after = try captures(for: 1, untilFrame: true, lumaAt: 100, 100)
        #expect(after.count == 1, "the drawing was delivered")
        #expect((after.first ?? 255) < 40, "the box is black now: luma \(after.first ?? 0)")
        #expect(source.screenReads == readsBefore + 1)
    }

    /// A 1080p screen over WHIP with VP8 and audio under a 43 MiB cap (planned 43.7 MiB with
    /// the screen's shared memory): `plan --size 1920x1080` shows that line in the table it
    /// prints, totals it, and says the same as its refusal (once the table said "fits" above it).
    @Test func aPlanThatDoesNotFitShowsTheScreensLinesAndSaysSoOnce() throws {
        let xvfb = try Xvfb(width: 1920, height: 1080)
        defer { xvfb.stop() }
        let run = try Tools.run(Tools.rtcshare, ["plan", "--source", "x11:\(xvfb.display)", "--whip", "http://127.0.0.1:9/whip/x",
                                                 "--codec", "vp8", "--audio", "testtone", "--size", "1920x1080",
                                                 "--mem-cap", "43M"])
        let printed = String(decoding: run.stdout, as: UTF8.self)
        let lines = printed.split(separator: "\n")
        #expect(run.status == 1, "\(printed)\(run.stderr)")
        #expect(lines.contains { $0.contains("x11:\(xvfb.display) shared memory") }, "\(printed)")
        let total = lines.first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("total ") }
        #expect(total?.hasSuffix("DOES NOT FIT") == true, "\(printed)")
        let refusal = lines.last { $0.hasPrefix("does not fit:") }
        let amount = total.flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first }
        #expect(amount.map { refusal?.contains("needs \($0) MiB") == true } == true, "\(printed)")
    }

    @Test func aMissingDisplayIsOneClearLineAndAFailure() throws {
        // A display number nobody serves.
        let number = try #require((400..<500).first {
            !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
        })
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Tools.run(Tools.rtcshare, ["--source", "x11::\(number)", "--output",
                                                 dir.appendingPathComponent("x.ivf").path, "--duration", "1"])
        #expect(run.status != 0)
        #expect(run.stderr == "rtcshare: error: x11: cannot open display :\(number)\n", "\(run.stderr)")
    }

    @Test func theServerGoingAwayEndsTheShareWithOneLine() throws {
        let xvfb = try Xvfb(width: 640, height: 480)
        defer { xvfb.stop() }
        try Self.paintScreen(xvfb)
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let killer = Thread {
            // A fixed wait on purpose: the server goes while the share runs, and the share under
            // test is `--quiet` (its one line is the assertion), so it announces no start.
            Thread.sleep(forTimeInterval: 1)
            xvfb.stop()
        }
        killer.start()
        let started = Date()
        let run = try Tools.run(Tools.rtcshare, ["--source", "x11:\(xvfb.display)", "--size", "320x240", "--output",
                                                 dir.appendingPathComponent("x.ivf").path, "--duration", "8", "--quiet"])
        #expect(run.status == 1)
        #expect(run.stderr == "rtcshare: error: x11: lost the connection to the X server \(xvfb.display)\n",
                "\(run.stderr)")
        #expect(Date().timeIntervalSince(started) < 4, "the share went on after its screen was gone")
    }
}

/// An Xvfb server for one test. Xvfb chooses a free display itself and writes its number to
/// -displayfd once it accepts connections, so parallel runs never race for a number and the
/// test never polls for the socket. -noreset keeps the painted root window when the painting
/// client disconnects. Started with posix_spawn and a clean signal mask: a child inherits the
/// mask of the thread that starts it, and test threads block SIGTERM, which would leave Xvfb
/// deaf to the polite stop (and a SIGKILLed Xvfb leaves its socket behind).
///
/// `Xvfb(nestedIn:)` starts Xephyr instead, a server whose screen lives in a window of the host
/// one and can change size (RandR, `xrandr -s`), which Xvfb's cannot.
final class Xvfb: @unchecked Sendable {
    // Sendable: `stop` may come from another thread; it is idempotent under its lock.
    private(set) var width: Int, height: Int
    let number: Int
    private let pid: pid_t
    private let lock = NSLock()
    private var running = true
    var display: String { ":\(number)" }

    init(width: Int, height: Int, nestedIn host: Xvfb? = nil) throws {
        self.width = width
        self.height = height
        let server = host == nil ? "Xvfb" : "Xephyr"
        let path = try #require(Tools.which(server), "\(server) is not installed (scripts/setup installs it)")
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw XvfbError(message: "pipe: \(errno)") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }  // only Xvfb's fd 1 should hold it
        defer { close(fds[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let arguments = host == nil
            ? [path, "-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp", "-noreset"]
            : [path, "-displayfd", "1", "-screen", "\(width)x\(height)x24", "-resizeable", "-nolisten", "tcp", "-noreset"]
        var environment = ProcessInfo.processInfo.environment
        if let host { environment["DISPLAY"] = host.display }
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, path, &actions, &attributes, &argv, &envp)
        close(fds[1])
        guard spawned == 0 else { throw XvfbError(message: "cannot start \(server): error \(spawned)") }
        pid = child
        // Its display number, a line on the pipe, within 10 s.
        var text = [UInt8]()
        let deadline = Date().addingTimeInterval(10)
        while !text.contains(UInt8(ascii: "\n")) && Date() < deadline {
            var pfd = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            var byte: UInt8 = 0
            guard read(fds[0], &byte, 1) == 1 else { break }  // end of file: Xvfb exited
            text.append(byte)
        }
        guard let n = Int(String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            number = -1
            stop()
            throw XvfbError(message: "\(server) did not announce a display")
        }
        number = n
    }

    deinit { stop() }

    /// Terminates the server (SIGTERM, so it removes its socket; SIGKILL after 5 s) and reaps it.
    func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard running else { return }
        running = false
        kill(pid, SIGTERM)
        var status: Int32 = 0
        if !waitUntil(timeout: 5, { waitpid(pid, &status, WNOHANG) != 0 }) {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
        }
    }

    /// Changes the screen's size with RandR (Xephyr only; one of the sizes `xrandr` lists).
    func resize(width: Int, height: Int) throws {
        let xrandr = try #require(Tools.which("xrandr"), "xrandr is not installed (scripts/setup installs x11-xserver-utils)")
        let result = try Tools.run(xrandr, ["-d", display, "-s", "\(width)x\(height)"])
        guard result.status == 0 else { throw XvfbError(message: "xrandr -s \(width)x\(height): \(result.stderr)") }
        lock.lock()
        (self.width, self.height) = (width, height)
        lock.unlock()
    }

    /// Fills each box on the root window, in order, and waits until the server has drawn them.
    func paint(_ boxes: [X11CaptureTests.Box]) throws {
        var screenNumber: Int32 = 0
        let c = try #require(xcb_connect(display, &screenNumber))
        defer { xcb_disconnect(c) }
        guard xcb_connection_has_error(c) == 0, let screen = xcb_setup_roots_iterator(xcb_get_setup(c)).data else {
            throw XvfbError(message: "cannot connect to \(display) to paint")
        }
        let root = screen.pointee.root
        let gc = xcb_generate_id(c)
        var colour: UInt32 = 0
        xcb_create_gc(c, gc, root, XCB_GC_FOREGROUND.rawValue, &colour)
        for box in boxes {
            colour = box.rgb  // TrueColor 24-bit: the pixel value is 0xRRGGBB
            xcb_change_gc(c, gc, XCB_GC_FOREGROUND.rawValue, &colour)
            var rect = xcb_rectangle_t(x: Int16(box.x), y: Int16(box.y), width: UInt16(box.width),
                                       height: UInt16(box.height))
            xcb_poly_fill_rectangle(c, root, gc, 1, &rect)
        }
        xcb_free_gc(c, gc)
        // A round trip: every request before it has been carried out.
        free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), nil))
    }

    struct XvfbError: Error { let message: String }
}
