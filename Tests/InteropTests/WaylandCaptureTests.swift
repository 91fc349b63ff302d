import Foundation
import TestSupport
import Testing

/// `rtcshare --source wayland` against a real wlroots compositor: headless sway (run as an
/// unprivileged user, which it insists on), with `wayland-test-client` covering its output with
/// a known picture and the frame marker, animated or held still on the test's signal.
@Suite(.serialized) struct WaylandCaptureTests {
    /// Studio-range luma of the client's colours (BT.601).
    static func luma(_ rgb: UInt32) -> Double {
        let r = Double(rgb >> 16 & 0xff), g = Double(rgb >> 8 & 0xff), b = Double(rgb & 0xff)
        return 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
    }
    static let background = luma(0x336699), white = luma(0xffffff), black = luma(0x000000)

    /// Mean luma of (x, y, w, h) of a `width`-wide luma plane, shrunk by a margin for codec edges.
    static func meanLuma(_ frame: Data, width: Int, _ x: Int, _ y: Int, _ w: Int, _ h: Int, margin: Int = 6) -> Double {
        var sum = 0, count = 0
        frame.withUnsafeBytes { raw in
            for row in (y + margin)..<(y + h - margin) {
                for column in (x + margin)..<(x + w - margin) {
                    sum += Int(raw[row * width + column])
                    count += 1
                }
            }
        }
        return Double(sum) / Double(max(count, 1))
    }

    /// The client's still boxes as they land in a `w` x `h` picture placed at `x`: the white one,
    /// the black one (unless `lower` is false: the client's moving box passes it), and
    /// background beside them.
    static func checkBoxes(_ frame: Data, width: Int, x: Int = 0, w: Int, h: Int, lower: Bool = true, _ what: String) {
        let white = meanLuma(frame, width: width, x + w / 10, h / 5, w * 3 / 10, h * 3 / 10)
        let ground = meanLuma(frame, width: width, x + w / 2, h / 6, w / 10, h / 4)
        #expect(abs(white - Self.white) <= 10, "\(what): white box luma \(white)")
        if lower {
            let black = meanLuma(frame, width: width, x + w * 6 / 10, h / 2, w / 5, h * 2 / 5)
            #expect(abs(black - Self.black) <= 10, "\(what): black box luma \(black)")
        }
        #expect(abs(ground - Self.background) <= 10, "\(what): background luma \(ground)")
    }

    /// The source's restarts on the summary line a share prints last ("… restarts N …"); nil
    /// without one.
    static func sourceRestarts(_ stderr: String) -> Int? {
        guard let line = stderr.split(separator: "\n").last(where: { $0.contains(" frames in ") }),
              let at = line.range(of: "restarts ") else { return nil }
        return Int(line[at.upperBound...].prefix { $0.isNumber })
    }

    /// CPU seconds (user + system) the process uses in the `span` seconds that begin `wait`
    /// seconds from now (nil: /proc unreadable): one phase of a test's timeline.
    static func cpuSeconds(_ pid: Int32, after wait: TimeInterval, over span: TimeInterval) -> Double? {
        Thread.sleep(forTimeInterval: wait)
        let start = cpuSeconds(pid)
        Thread.sleep(forTimeInterval: span)
        guard let start, let end = cpuSeconds(pid) else { return nil }
        return end - start
    }

    /// CPU seconds the process has used so far (user + system), from /proc.
    private static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A share of the output at 1280x720@20 into `rtcshare receive` while the client animates for
    /// 4 s, then holds still for 4 s: every frame arrives with a readable marker, the picture is
    /// the client's, the still stretch makes no copy and costs at most half the changing one's CPU.
    @Test func theOutputArrivesRightAndAStillOneCostsNoCopy() throws {
        let sway = try Sway(width: 1920, height: 1080)
        defer { sway.stop() }
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let client = try sway.startClient(in: dir, shareWidth: 1280)
        defer { client.kill() }
        try Self.shareMovingThenStill(client: client, dir: dir, source: "wayland") { arguments in
            try sway.background(Tools.rtcshare, arguments, in: dir, name: "sender")
        }
    }

    /// The phases of `theOutputArrivesRightAndAStillOneCostsNoCopy` for a source (`start` runs
    /// the sender; `extra` follows its `--source`).
    static func shareMovingThenStill(client: BackgroundProcess, dir: URL, source: String,
                                     extra: [String] = [],
                                     start: ([String]) throws -> BackgroundProcess) throws {
        kill(client.process.processIdentifier, SIGUSR1)
        // --idle-fps 2: a still screen is also sent at 2 fps, as a board sharing a still screen
        // would be run; the capture's own part (no copy while still) is checked from the counts.
        let started = try ReceivedShare.start(["--source", source] + extra + [
            "--size", "1280x720", "--fps", "20", "--idle-fps", "2", "--start-delay", "2", "--duration", "10",
        ], in: dir, name: "x", sdpTimeout: 30, y4m: true, sender: start)
        // A fixed timeline on purpose: when the picture moves and when it holds is the scenario.
        // The share starts sending 2 s in; it animates until 6 s, then holds still.
        let pid = started.sender.process.processIdentifier
        let changing = cpuSeconds(pid, after: 3, over: 3)
        kill(client.process.processIdentifier, SIGUSR2)
        let still = cpuSeconds(pid, after: 1, over: 3)
        // >= 95 % of the frames sent decoded, none unreadable: the marker the client drew at
        // 1.5 times its size came through the shrinking at 8x16 blocks.
        let share = try started.finish(senderTimeout: 30)
        #expect(share.int("width") == 1280 && share.int("height") == 720)
        #expect(share.int("frames_lost") == 0, "\(share.stats)")

        // The picture: the last decoded frame shows the client's boxes where it drew them.
        try checkBoxes(share.lastPicture(width: 1280, height: 720), width: 1280, w: 1280, h: 720, "last frame")

        // Copies (over the portal: buffers PipeWire brings, converted): many while changing, none
        // while still (source frames stop growing once the client holds still; a line a second
        // from the sender).
        let tx = share.senderStats
        let changingCopies = tx.counter("source_frames", at: 4) - tx.counter("source_frames", at: 1)
        let stillCopies = tx.counter("source_frames", at: 8) - tx.counter("source_frames", at: 5)
        // 60 at full rate; a debug build on a loaded machine copies far fewer, still many more than none.
        #expect(changingCopies >= 6, "\(changingCopies) source pictures in 3 s of animation\n\(started.sender.stderr)")
        #expect(stillCopies == 0, "\(stillCopies) source pictures in 3 s of a still screen")

        let changingCPU = try #require(changing), stillCPU = try #require(still)
        #expect(stillCPU <= 0.5 * changingCPU, "CPU s: still \(stillCPU), changing \(changingCPU)")
    }

    /// The client animates whole-picture changes (the box moving, the marker ticking: damage
    /// from the top row to the box's, about 1030 of 1080 rows), then from about 6 s only its
    /// marker ticks (a 384x48 rectangle damaged). Shared at 1280x720@20 into `rtcshare
    /// receive`: >= 95 % of the frames arrive with a readable marker and the client's picture,
    /// the small phase converts a few dozen rows a frame (and a whole picture a second) where
    /// the whole one converts about a thousand, and costs less CPU.
    @Test func aSmallChangeConvertsOnlyItsRows() throws {
        let sway = try Sway(width: 1920, height: 1080)
        defer { sway.stop() }
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let client = try sway.startClient(in: dir, shareWidth: 1280)
        defer { client.kill() }
        try Self.shareWholeThenSmallDamage(client: client, dir: dir, source: "wayland") { arguments in
            try sway.background(Tools.rtcshare, arguments, in: dir, name: "sender")
        }
    }

    /// A small change on a turned or flipped output: the compositor's damage names rows of
    /// the buffer as stored, which the band is cut from before the picture is turned upright.
    /// Only the marker ticks (SIGHUP): every picture must carry its new counter (a band in the
    /// wrong place would leave the marker as it was, and the receiver would count repeats), and
    /// a picture converts under half the buffer's rows (besides the whole picture a second).
    @Test(arguments: [("180", "1280x720", 1280), ("90", "720x1280", 720), ("flipped-270", "720x1280", 720)])
    func aSmallChangeOnATurnedOutputLandsWhereItWasDrawn(transform: String, size: String, shareWidth: Int) throws {
        let sway = try Sway(width: 1920, height: 1080)
        defer { sway.stop() }
        try sway.message(["output", "HEADLESS-1", "transform", transform])
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let client = try sway.startClient(in: dir, shareWidth: shareWidth)
        defer { client.kill() }
        kill(client.process.processIdentifier, SIGHUP)
        let started = try ReceivedShare.start([
            "--source", "wayland", "--size", size, "--output-orientation", "source", "--fps", "20",
            "--start-delay", "2", "--duration", "6",
        ], in: dir, name: "t", sdpTimeout: 20) { arguments in
            try sway.background(Tools.rtcshare, arguments, in: dir, name: "sender")
        }
        let share = try started.finish(senderTimeout: 30)
        let (sent, stats, int) = (share.sent, share.stats, share.int)
        let shape = size.split(separator: "x").compactMap { Int($0) }
        #expect(int("width") == shape.first && int("height") == shape.last, "the share's shape: \(stats)")

        let tx = share.senderStats
        let pictures = tx.counter("source_frames", at: 5) - tx.counter("source_frames", at: 1)
        let rows = (tx.counter("source_rows", at: 5) - tx.counter("source_rows", at: 1)) / max(pictures, 1)
        // Each new picture sent shows a counter of its own (see shareWholeThenSmallDamage).
        let distinct = int("frames") - int("frames_repeated")
        #expect(pictures >= 6 && Double(distinct) >= 0.9 * Double(sent.frames - sent.repeats),
                "\(distinct) distinct markers, \(sent.frames - sent.repeats) new pictures sent: \(stats)\n\(started.sender.stderr)")
        // Under half the buffer, and a whole picture a second (at most 5 in the 4 s).
        #expect(rows <= 540 + 1080 * 5 / pictures, "\(rows) rows a picture over \(pictures) pictures while only the marker changes")
    }

    /// The phases of `aSmallChangeConvertsOnlyItsRows` for a source (`start` runs the sender).
    static func shareWholeThenSmallDamage(client: BackgroundProcess, dir: URL, source: String,
                                          extra: [String] = [],
                                          start: ([String]) throws -> BackgroundProcess) throws {
        kill(client.process.processIdentifier, SIGUSR1)
        let started = try ReceivedShare.start(["--source", source] + extra + [
            "--size", "1280x720", "--fps", "20", "--start-delay", "2", "--duration", "10",
        ], in: dir, name: "d", sdpTimeout: 30, y4m: true, sender: start)
        // A fixed timeline, as the still-screen test's: whole changes until 6 s, then the marker alone.
        let pid = started.sender.process.processIdentifier
        let wholeCPU = cpuSeconds(pid, after: 3, over: 3)
        kill(client.process.processIdentifier, SIGHUP)
        let smallCPU = cpuSeconds(pid, after: 1, over: 3)
        let share = try started.finish(senderTimeout: 30)
        let (sent, stats, int) = (share.sent, share.stats, share.int)
        #expect(int("frames_lost") == 0, "\(stats)")
        // Every new picture sent carries its own counter: a band that missed the marker (or
        // damage lost between two pictures) would leave an old one, which the receiver counts
        // repeated where the sender counted no repeat.
        #expect(Double(int("frames") - int("frames_repeated")) >= 0.9 * Double(sent.frames - sent.repeats),
                "\(int("frames") - int("frames_repeated")) distinct markers, \(sent.frames - sent.repeats) new pictures sent: \(stats)")
        // The picture after the small phase: the still boxes, drawn over band by band, are right.
        try checkBoxes(share.lastPicture(width: 1280, height: 720), width: 1280, w: 1280, h: 720, "last frame")

        let tx = share.senderStats
        func rowsPerFrame(_ from: Double, _ to: Double) -> (rows: Double, frames: Double) {
            let frames = tx.counter("source_frames", at: to) - tx.counter("source_frames", at: from)
            return ((tx.counter("source_rows", at: to) - tx.counter("source_rows", at: from)) / max(frames, 1), frames)
        }
        let whole = rowsPerFrame(1, 4), small = rowsPerFrame(5, 8)
        #expect(whole.frames >= 6 && small.frames >= 6, "pictures: \(whole.frames) whole, \(small.frames) small\n\(started.sender.stderr)")
        #expect(whole.rows >= 900, "\(whole.rows) rows a picture while the whole picture changes")
        // The marker's 48 rows (a band of whole strips: up to 96), and a whole picture a second
        // (`LastPicture.wholeInterval`: at most 4 in the 3 s).
        #expect(small.rows <= 96 + 1080 * 4 / small.frames, "\(small.rows) rows a picture over \(small.frames) pictures while only the marker changes")
        let wholeSeconds = try #require(wholeCPU), smallSeconds = try #require(smallCPU)
        #expect(smallSeconds < wholeSeconds, "CPU s: small damage \(smallSeconds), whole \(wholeSeconds)")
    }

    /// The output changes to 1024x768 mid-share: the share goes on at 1280x720 with the new
    /// picture fitted in (960x720, bars of 160 beside it).
    @Test func anOutputThatChangesSizeIsFollowed() throws {
        let sway = try Sway(width: 1920, height: 1080)
        defer { sway.stop() }
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let client = try sway.startClient(in: dir, shareWidth: 1280)
        defer { client.kill() }
        let ivf = dir.appendingPathComponent("w.ivf").path
        let share = try sway.background(Tools.rtcshare, ["--source", "wayland:HEADLESS-1", "--size", "1280x720",
                                                         "--output", ivf, "--duration", "6"], in: dir, name: "share")
        Thread.sleep(forTimeInterval: 2)
        try sway.message(["output", "HEADLESS-1", "resolution", "1024x768"])
        #expect(client.waitForOutput(containing: "ready 1024x768", onStandardOutput: true, timeout: 10),
                "the client did not redraw at 1024x768: \(String(decoding: client.stdout, as: UTF8.self))")
        #expect(share.wait(timeout: 40) == 0, "rtcshare: \(share.stderr)")
        try Self.checkTheSizeChangeWasFollowed(ivf)
    }

    /// What a 1280x720 share of an output that went from 1920x1080 to 1024x768 about 2 s in
    /// wrote to `ivf`: at least 10 frames; the last of the first 1.5 s the client's picture (its
    /// boxes; the black one only if `lower`); the last three the new picture fitted in (960x720
    /// at x 160) between black bars of 160.
    static func checkTheSizeChangeWasFollowed(_ ivf: String, lower: Bool = true) throws {
        let frames = try X11CaptureTests.decodeY(ivf, width: 1280, height: 720)
        try #require(frames.count >= 10, "\(frames.count) frames")
        // Before the change (picked by time: the window may map a moment after the share starts).
        let times = try Tools.ivfFrameTimes(ivf)
        let before = try #require(frames.indices.last { times[$0] - times[0] < 1.5 }, "no frame in the first 1.5 s")
        checkBoxes(frames[before], width: 1280, w: 1280, h: 720, lower: lower, "frame before the change")
        for (n, frame) in frames.suffix(3).enumerated() {
            #expect(abs(meanLuma(frame, width: 1280, 0, 0, 160, 720, margin: 4) - 16) <= 4, "frame \(n): left bar")
            #expect(abs(meanLuma(frame, width: 1280, 1120, 0, 160, 720, margin: 4) - 16) <= 4, "frame \(n): right bar")
            checkBoxes(frame, width: 1280, x: 160, w: 960, h: 720, lower: lower, "frame \(n) after the change")
        }
    }

    /// Every wl_output transform but normal, the mirrored ones (4-7) too: the buffer is stored
    /// turned or flipped, and whatever way the panel is, the share sends the client's picture
    /// upright and unmirrored (the white box left of the black one, above it); a quarter-turned
    /// one's 720x1280 picture fitted into 1280x720 (404x720 at x 438, black bars), as grim shows it.
    @Test(arguments: ["90", "180", "270", "flipped", "flipped-90", "flipped-180", "flipped-270"])
    func aTurnedOrFlippedOutputIsSentUprightAndUnmirrored(transform: String) throws {
        let sway = try Sway(width: 1280, height: 720)
        defer { sway.stop() }
        try sway.message(["output", "HEADLESS-1", "transform", transform])
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let client = try sway.startClient(in: dir, shareWidth: 1280)
        defer { client.kill() }
        let quarter = transform.hasSuffix("90") || transform.hasSuffix("270")
        #expect(String(decoding: client.stdout, as: UTF8.self).contains(quarter ? "ready 720x1280" : "ready 1280x720"))
        let ivf = dir.appendingPathComponent("t.ivf").path
        let share = try sway.background(Tools.rtcshare, ["--source", "wayland", "--size", "1280x720",
                                                         "--output", ivf, "--duration", "1"], in: dir, name: "share")
        #expect(share.wait(timeout: 30) == 0, "rtcshare: \(share.stderr)")
        let frames = try X11CaptureTests.decodeY(ivf, width: 1280, height: 720)
        let last = try #require(frames.last)
        if quarter {
            Self.checkBoxes(last, width: 1280, x: 438, w: 404, h: 720, "transform \(transform)")
            #expect(abs(Self.meanLuma(last, width: 1280, 0, 0, 430, 720, margin: 4) - 16) <= 4, "transform \(transform): left bar")
        } else {
            Self.checkBoxes(last, width: 1280, w: 1280, h: 720, "transform \(transform)")
        }
    }

    /// sway killed mid-share: captures stall, the watchdog restarts the source with back-off,
    /// and once a compositor is back on the same socket the share shows its picture again.
    @Test func aCompositorThatGoesAwayIsRestartedAfter() throws {
        let sway = try Sway(width: 1280, height: 720)
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var client = try sway.startClient(in: dir, shareWidth: 1280)
        let ivf = dir.appendingPathComponent("w.ivf").path
        let share = try sway.background(Tools.rtcshare, ["--source", "wayland", "--size", "1280x720",
                                                         "--output", ivf, "--duration", "14"], in: dir, name: "share")
        defer { share.kill() }
        Thread.sleep(forTimeInterval: 2)
        sway.stop(keepDirectory: true)
        client.kill()
        Thread.sleep(forTimeInterval: 3)
        let again = try Sway(width: 1280, height: 720, reusing: sway)
        defer { again.stop() }
        client = try again.startClient(in: dir, shareWidth: 1280, name: "client2")
        defer { client.kill() }
        #expect(share.wait(timeout: 60) == 0, "rtcshare: \(share.stderr)")
        #expect((Self.sourceRestarts(share.stderr) ?? 0) >= 1, "no restart: \(share.stderr)")
        let frames = try X11CaptureTests.decodeY(ivf, width: 1280, height: 720)
        try #require(frames.count >= 10, "\(frames.count) frames")
        Self.checkBoxes(frames.last!, width: 1280, w: 1280, h: 720, "after the compositor came back")
    }

    /// `--cursor`: the client puts the pointer at (600, 400) and makes it a 24x24 red square; the
    /// share shows the square there. (Headless sway draws its pointer in software, so it is in
    /// the output's picture with or without screencopy's overlay_cursor: only its presence where
    /// the pointer is can be checked here, not its absence without the flag.)
    @Test func thePointerAppearsWhereItIs() throws {
        let sway = try Sway(width: 1280, height: 720)
        defer { sway.stop() }
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let client = try sway.startClient(in: dir, shareWidth: 1280, arguments: ["--pointer", "600,400,1280,720"])
        defer { client.kill() }
        // The pointer enters the window and the red cursor is set (late on a loaded machine).
        #expect(client.waitForOutput(containing: "cursor set", onStandardOutput: true, timeout: 30))
        let ivf = dir.appendingPathComponent("c.ivf").path
        let share = try sway.background(Tools.rtcshare, ["--source", "wayland", "--cursor", "--size", "1280x720",
                                                         "--output", ivf, "--duration", "2"], in: dir, name: "share")
        #expect(share.wait(timeout: 30) == 0, "rtcshare: \(share.stderr)")
        try Self.checkThePointerIsShown(ivf)
    }

    /// The pointer the client sets (`--pointer 600,400,…`: a 24x24 red square at (600, 400)) in
    /// the last picture a 1280x720 share wrote to `ivf`, and background beside it.
    static func checkThePointerIsShown(_ ivf: String) throws {
        let frames = try X11CaptureTests.decodeY(ivf, width: 1280, height: 720)
        let last = try #require(frames.last)
        let square = meanLuma(last, width: 1280, 600, 400, 24, 24, margin: 4)
        let beside = meanLuma(last, width: 1280, 640, 400, 40, 24, margin: 4)
        #expect(abs(square - luma(0xff0000)) <= 6, "pointer square luma \(square), want \(luma(0xff0000))")
        #expect(abs(beside - background) <= 6, "beside the pointer: luma \(beside)")
    }

    @Test func noCompositorIsOneClearLineAndAFailure() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = dir.appendingPathComponent("wayland-9").path
        let run = try Tools.run("/usr/bin/env", ["WAYLAND_DISPLAY=\(socket)", Tools.rtcshare, "--source", "wayland",
                                                 "--output", dir.appendingPathComponent("x.ivf").path, "--duration", "1"])
        #expect(run.status != 0)
        #expect(run.stderr == "rtcshare: error: wayland: cannot connect to the compositor \(socket): No such file or directory\n",
                "\(run.stderr)")
    }

    @Test func anUnknownOutputNamesTheOnesThereAre() throws {
        let sway = try Sway(width: 640, height: 480)
        defer { sway.stop() }
        let run = try Tools.run("/usr/bin/env", sway.environment + [Tools.rtcshare, "plan", "--source", "wayland:HDMI-A-9"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("wayland: the compositor \(sway.socket) has no output HDMI-A-9 (outputs: HEADLESS-1)"),
                "\(run.stderr)")
    }

    /// The plan counts the mapped buffer: 1920x1080 at 4 bytes a pixel.
    @Test func thePlanCountsTheSharedBuffer() throws {
        let sway = try Sway(width: 1920, height: 1080)
        defer { sway.stop() }
        let run = try Tools.run("/usr/bin/env", sway.environment + [Tools.rtcshare, "plan", "--source", "wayland", "--size", "1280x720"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(String(decoding: run.stdout, as: UTF8.self).contains("wayland:HEADLESS-1 shared memory                7.9 MiB"), "\(String(decoding: run.stdout, as: UTF8.self))")
        #expect(String(decoding: run.stdout, as: UTF8.self).contains("fits"), "\(String(decoding: run.stdout, as: UTF8.self))")
    }
}

/// A headless sway for one test, run as `nobody` (sway refuses root) in a runtime directory of
/// its own; root reaches its Wayland socket and IPC socket there. No input devices, the pixman
/// renderer, borders off so a window covers the output.
final class Sway: @unchecked Sendable {
    let dir: URL
    let process: BackgroundProcess
    private var stopped = false
    var runtime: String { dir.appendingPathComponent("run").path }
    var socket: String { runtime + "/wayland-1" }
    /// What a child needs to find this compositor (`env` arguments).
    var environment: [String] { ["WAYLAND_DISPLAY=\(socket)"] }

    /// Starts sway with HEADLESS-1 at `width` x `height`; `reusing` starts it in a stopped one's
    /// runtime directory, so it serves the same socket.
    init(width: Int, height: Int, reusing old: Sway? = nil) throws {
        let sway = try #require(Tools.which("sway"), "sway is not installed (scripts/setup installs it)")
        // setpriv execs sway as nobody in this very process (runuser would fork and leave sway
        // an orphan the test cannot reap).
        let setpriv = try #require(Tools.which("setpriv"), "setpriv is not installed (util-linux)")
        if let old {
            dir = old.dir
            // The killed one's sockets are left behind: gone first, so readiness below is the new one's.
            let run = old.runtime
            for name in (try? FileManager.default.contentsOfDirectory(atPath: run)) ?? [] {
                try? FileManager.default.removeItem(atPath: run + "/" + name)
            }
        } else {
            // World-readable, so nobody can read the config; the runtime directory nobody's, 0700.
            dir = URL(fileURLWithPath: "/tmp/rtcshare-sway-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o755])
            try FileManager.default.createDirectory(atPath: dir.appendingPathComponent("run").path,
                                                    withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            guard chown(dir.appendingPathComponent("run").path, 65534, 65534) == 0 else {
                throw Tools.DecodeError(message: "cannot give the runtime directory to nobody")
            }
        }
        let config = dir.appendingPathComponent("config")
        try """
        output HEADLESS-1 resolution \(width)x\(height) bg #336699 solid_color
        default_border none
        default_floating_border none
        """.write(to: config, atomically: true, encoding: .utf8)
        chmod(config.path, 0o644)
        process = try BackgroundProcess(setpriv, [
            "--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=\(dir.path)", "XDG_RUNTIME_DIR=\(dir.path)/run",
            "WLR_BACKENDS=headless", "WLR_LIBINPUT_NO_DEVICES=1", "WLR_RENDERER=pixman", sway, "-c", config.path,
        ], in: dir, name: "sway-\(UUID().uuidString.prefix(8))")
        let run = dir.appendingPathComponent("run").path
        let ready = waitUntil(timeout: 20) {
            (try? FileManager.default.contentsOfDirectory(atPath: run))?.contains { $0.hasPrefix("sway-ipc.") } == true
                && FileManager.default.fileExists(atPath: run + "/wayland-1")
        }
        guard ready else {
            process.kill()
            throw Tools.DecodeError(message: "sway did not start: \(process.stderr.suffix(2000))")
        }
    }

    deinit { stop() }

    /// The IPC socket (its name carries sway's pid).
    var ipcSocket: String? {
        (try? FileManager.default.contentsOfDirectory(atPath: runtime))?.first { $0.hasPrefix("sway-ipc.") }.map { runtime + "/" + $0 }
    }

    /// Sends `arguments` to sway over IPC (swaymsg).
    func message(_ arguments: [String]) throws {
        let swaymsg = try #require(Tools.which("swaymsg"))
        let ipc = try #require(ipcSocket, "no sway IPC socket")
        let result = try Tools.run(swaymsg, ["-s", ipc] + arguments)
        guard result.status == 0 else { throw Tools.DecodeError(message: "swaymsg \(arguments): \(result.stdout) \(result.stderr)") }
    }

    /// Runs `executable` with this compositor in its environment.
    func background(_ executable: String, _ arguments: [String], in dir: URL, name: String) throws -> BackgroundProcess {
        try BackgroundProcess("/usr/bin/env", environment + [executable] + arguments, in: dir, name: name)
    }

    /// Starts the test client and waits until its picture is on the output.
    func startClient(in dir: URL, shareWidth: Int, name: String = "client", arguments: [String] = []) throws -> BackgroundProcess {
        let here = URL(fileURLWithPath: Tools.rtcshare).deletingLastPathComponent()
        let client = try background(here.appendingPathComponent("wayland-test-client").path,
                                    ["--share-width", "\(shareWidth)"] + arguments, in: dir, name: name)
        guard client.waitForOutput(containing: "ready", onStandardOutput: true, timeout: 20) else {
            client.kill()
            throw Tools.DecodeError(message: "the test client did not draw: \(client.stderr)")
        }
        return client
    }

    /// Ends sway (SIGKILL: test threads block SIGTERM, and a child inherits that) and, unless
    /// it is to be reused (`keepDirectory`), its directory. Its swaybg ends with its connection.
    func stop(keepDirectory: Bool = false) {
        guard !stopped else { return }
        stopped = true
        process.kill()
        if !keepDirectory { try? FileManager.default.removeItem(at: dir) }
    }
}
