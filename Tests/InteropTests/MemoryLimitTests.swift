import CXCB
import Foundation
import Glibc
import RTCShareCore
import RTCShareIO
import TestSupport
import Testing

/// The 50 MiB promise under the kernel's own limit: a 1280x720@20 share with audio runs for a
/// minute inside a memory cgroup capped at 50 MiB (v1 `memory.limit_in_bytes`, or v2
/// `memory.max`), once over `--peer` through `rtcshare-relay` losing 5 % of the video packets, once
/// over WHIP into aiortc; and 1920x1080@15 shares with audio: testsrc over `--peer` (VP8), an X11
/// screen of text over WHIP through a reconnect (H.264 and VP8). It must not be OOM-killed, and
/// the far end must decode ≥ 95 % of the frames. The cgroup's peak usage (which counts the page
/// cache the process faults in too) is printed. Skipped, saying why, where no memory cgroup can be made.
@Suite(.serialized) struct MemoryLimitTests {
    static let limitBytes = 50 << 20
    static let seconds = 60

    /// A memory cgroup made for one process tree, removed at the end.
    final class MemoryCgroup {
        let path: String
        let isV2: Bool

        /// nil when this machine cannot make one (not root, no memory controller).
        init?(limitBytes: Int) {
            let name = "rtcshare-test-\(UUID().uuidString.prefix(8))"
            let v1 = "/sys/fs/cgroup/memory"
            let v2Controllers = (try? String(contentsOfFile: "/sys/fs/cgroup/cgroup.controllers", encoding: .utf8)) ?? ""
            if FileManager.default.fileExists(atPath: v1 + "/memory.limit_in_bytes") {
                (path, isV2) = (v1 + "/" + name, false)
            } else if v2Controllers.split(separator: " ").contains(where: { $0.hasPrefix("memory") }) {
                (path, isV2) = ("/sys/fs/cgroup/" + name, true)
            } else {
                return nil
            }
            guard mkdir(path, 0o755) == 0 else { return nil }
            let limitFile = isV2 ? "memory.max" : "memory.limit_in_bytes"
            guard (try? "\(limitBytes)".write(toFile: path + "/" + limitFile, atomically: false, encoding: .utf8)) != nil
            else {
                rmdir(path)
                return nil
            }
        }

        deinit { rmdir(path) }

        /// `executable arguments…` run inside the cgroup: a shell joins it, then becomes the process.
        func wrap(_ executable: String, _ arguments: [String]) -> (String, [String]) {
            ("/bin/sh", ["-c", "echo $$ > '\(path)/cgroup.procs' && exec \"$0\" \"$@\"", executable] + arguments)
        }

        private func read(_ file: String) -> String {
            (try? String(contentsOfFile: path + "/" + file, encoding: .utf8)) ?? ""
        }

        /// The most the cgroup ever held (v2 without `memory.peak`: nil).
        var peakBytes: Int? {
            Int(read(isV2 ? "memory.peak" : "memory.max_usage_in_bytes").trimmingCharacters(in: .whitespacesAndNewlines))
        }

        /// Processes the kernel killed for memory in it.
        var oomKills: Int {
            let text = read(isV2 ? "memory.events" : "memory.oom_control")
            let line = text.split(separator: "\n").first { $0.hasPrefix("oom_kill ") }
            return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        }
    }

    private static func cgroup() -> MemoryCgroup? {
        let group = MemoryCgroup(limitBytes: limitBytes)
        if group == nil { print("MemoryLimitTests: skipped: no memory cgroup can be made here (root and a memory controller are needed)") }
        return group
    }

    @Test func a720pShareWithAudioOverPeerLivesInside50MiBThroughFivePercentLoss() throws {
        guard let group = Self.cgroup() else { return }
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 8)
        let (receiverPort, relayFront) = (port, port + 4)
        let key = Data((0..<30).map { UInt8(truncatingIfNeeded: $0 &* 53 &+ 7) }).base64EncodedString()
        let json = dir.appendingPathComponent("rx.json").path
        let receiver = try BackgroundProcess(Tools.rtcshare, [
            "receive", "--listen", "127.0.0.1:\(receiverPort)", "--srtp-key", key, "--stats-json", json,
            "--idle-timeout", "5",
        ], in: dir, name: "receiver")
        let relay = try ImpairmentRelay(front: relayFront, receiverPort: receiverPort,
                                        options: ["--loss", "5", "--seed", "5"], in: dir)
        defer { relay.stop() }
        let (exe, args) = group.wrap(Tools.rtcshare, [
            "--source", "testsrc", "--size", "1280x720", "--fps", "20", "--audio", "testtone",
            "--peer", "127.0.0.1:\(relayFront)", "--audio-peer", "127.0.0.1:\(receiverPort + 2)",
            "--srtp-key", key, "--duration", "\(Self.seconds)",
        ])
        let sender = try BackgroundProcess(exe, args, in: dir, name: "sender")
        let status = sender.wait(timeout: Double(Self.seconds) + 30)
        let peak = group.peakBytes
        relay.stop()
        let dropped = relay.toReceiver.int("lost")
        print("MemoryLimitTests --peer: cgroup peak \(peak.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "n/a") of 50 MiB; \(dropped) packets dropped by the relay")
        #expect(group.oomKills == 0, "OOM-killed inside 50 MiB: \(sender.stderr.suffix(600))")
        #expect(status == 0, "sender: \(sender.stderr.suffix(600))")
        if let peak { #expect(peak <= Self.limitBytes) }
        #expect(receiver.wait(timeout: 20) == 0, "receiver: \(receiver.stderr.suffix(600))")
        let sent = try #require(BuiltInReceiverTests.SenderSummary(sender.stderr), "\(sender.stderr.suffix(600))")
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json)))
        let stats = try #require(object as? [String: Any])
        let frames = (stats["frames"] as? NSNumber)?.intValue ?? 0
        print("MemoryLimitTests --peer: sent \(sent.frames), decoded \(frames)")
        #expect(dropped >= 50, "the relay lost \(dropped)")
        #expect(Double(frames) >= 0.95 * Double(sent.frames), "decoded \(frames) of \(sent.frames) through 5 % loss")
        // A moving 720p share all the minute: at least a quarter of 60 s at 20 fps. Not a speed
        // figure (720p beside other shares on a loaded machine encodes 10-13 fps); the memory is
        // what is under test.
        #expect(sent.frames >= Self.seconds * 20 / 4, "sent \(sent.frames)")
    }

    @Test func a720pShareWithAudioOverWHIPLivesInside50MiB() throws {
        guard let group = Self.cgroup() else { return }
        // A server of its own: one Python process decodes every session of a server, and a
        // minute of 720p would hold up the WHIP tests' sessions on the shared one.
        let server = try WHIPInteropTests.Server()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let txJSON = dir.appendingPathComponent("tx.json").path
        let (exe, args) = group.wrap(Tools.rtcshare, [
            "--whip", server.base + "/whip/cgroup50", "--whip-bind", "127.0.0.1:0",
            "--size", "1280x720", "--fps", "20", "--audio", "testtone", "--duration", "\(Self.seconds)",
            "--stats-json", txJSON,
        ])
        let run = try Tools.run(exe, args, timeout: Double(Self.seconds) + 40)
        let peak = group.peakBytes
        print("MemoryLimitTests --whip: cgroup peak \(peak.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "n/a") of 50 MiB")
        #expect(group.oomKills == 0, "OOM-killed inside 50 MiB: \(run.stderr.suffix(600))")
        #expect(run.status == 0, "rtcshare: \(run.stderr.suffix(600))")
        if let peak { #expect(peak <= Self.limitBytes) }
        let encoded = try #require(WHIPInteropTests.framesSent(run.stderr), "\(run.stderr.suffix(600))")
        let last = ((try? String(contentsOfFile: txJSON, encoding: .utf8)) ?? "").split(separator: "\n").last.map(String.init) ?? "{}"
        let stats = (try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]) ?? [:]
        let notSent = stats["frames_dropped_connecting"] as? Int ?? 0
        let own = (try server.summary(finished: "cgroup50")["by_session"] as? [String: Any])?["cgroup50"] as? [String: Any] ?? [:]
        let decoded = own["video_frames"] as? Int ?? 0
        let span = WHIPInteropTests.captureSpan(own)
        print("MemoryLimitTests --whip: encoded \(encoded), \(notSent) not sent, aiortc decoded \(decoded), capture span \(span) s")
        #expect(Double(decoded) >= 0.95 * Double(encoded - notSent), "aiortc decoded \(decoded) of \(encoded - notSent)")
        // It ran the minute (the decoded frames' capture times span it, less the connection's
        // set-up: 5 s allowed), a moving share, not a few stills: at least a quarter of 60 s at
        // 20 fps. Not a speed figure (720p beside other shares on a loaded machine encodes
        // 10-13 fps); the memory is what is under test.
        #expect(span >= Double(Self.seconds) - 5, "the decoded frames' capture times span \(span) s")
        #expect(encoded >= Self.seconds * 20 / 4, "encoded \(encoded)")
    }

    /// The most common screen at its own size: 1920x1080@15 with audio over `--peer`, for a
    /// minute inside 50 MiB (planned 40.4 MiB at 20 fps, its start-up no longer the peak now that
    /// libvpx's zero-fill of its 48 MiB token buffer is left out, and its keyframes progressive).
    @Test func a1080pShareWithAudioOverPeerLivesInside50MiB() throws {
        guard let group = Self.cgroup() else { return }
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 4)
        let key = Data((0..<30).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) }).base64EncodedString()
        let json = dir.appendingPathComponent("rx.json").path
        let receiver = try BackgroundProcess(Tools.rtcshare, [
            "receive", "--listen", "127.0.0.1:\(port)", "--srtp-key", key, "--stats-json", json,
            "--idle-timeout", "5",
        ], in: dir, name: "receiver")
        let (exe, args) = group.wrap(Tools.rtcshare, [
            "--source", "testsrc", "--size", "1920x1080", "--fps", "15", "--audio", "testtone",
            "--peer", "127.0.0.1:\(port)", "--audio-peer", "127.0.0.1:\(port + 2)",
            "--srtp-key", key, "--duration", "\(Self.seconds)",
        ])
        let sender = try BackgroundProcess(exe, args, in: dir, name: "sender")
        let status = sender.wait(timeout: Double(Self.seconds) + 30)
        let peak = group.peakBytes
        print("MemoryLimitTests 1080p: cgroup peak \(peak.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "n/a") of 50 MiB")
        #expect(group.oomKills == 0, "OOM-killed inside 50 MiB: \(sender.stderr.suffix(600))")
        #expect(status == 0, "sender: \(sender.stderr.suffix(600))")
        #expect(sender.stderr.contains("1920x1080"), "shared at its own size: \(sender.stderr.prefix(400))")
        if let peak { #expect(peak <= Self.limitBytes) }
        #expect(receiver.wait(timeout: 20) == 0, "receiver: \(receiver.stderr.suffix(600))")
        let sent = try #require(BuiltInReceiverTests.SenderSummary(sender.stderr), "\(sender.stderr.suffix(600))")
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json)))
        let stats = try #require(object as? [String: Any])
        let frames = (stats["frames"] as? NSNumber)?.intValue ?? 0
        // Less the frames of the keyframes' sweeps, which a decoder takes in and shows nothing for.
        let shown = ProgressiveKeyframeInteropTests.Sent(sender.stderr)?.shown ?? sent.frames
        print("MemoryLimitTests 1080p: sent \(sent.frames), \(sent.frames - shown) hidden, decoded \(frames)")
        #expect(Double(frames) >= 0.95 * Double(shown), "decoded \(frames) of \(shown) shown")
        // A moving 1080p share all the minute: at least a frame a second (not a speed figure: a
        // debug build coding 1080p beside the whole suite makes ~4 a second; the memory is under test).
        #expect(sent.frames >= Self.seconds, "sent \(sent.frames)")
    }

    /// The most common screen at its own size, showing what people share on it: Xvfb's
    /// 1920x1080 screen with a page of dense 11 px text (every macroblock detailed: the worst a
    /// screen of text gives an encoder), still for `stillSeconds`, then a different page every
    /// second (a full-screen change each time), shared with `--size auto` and audio over WHIP
    /// for a minute inside 50 MiB, aiortc decoding what it gets. The server drops the session
    /// once, 30 s in (`/whip-closing/`): the reconnect, where VP8 lets its encoder go, runs
    /// inside the cap too. Planned (VP8) 43.7 MiB with the screen's shared memory; H.264 42.2.
    @Test(arguments: ["h264", "vp8"])
    func a1080pScreenOfTextWithAudioOverWHIPLivesInside50MiB(codec: String) throws {
        guard let group = Self.cgroup() else { return }
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let xvfb = try Xvfb(width: 1920, height: 1080)
        defer { xvfb.stop() }
        let pages = try Self.textPages(width: 1920, height: 1080, count: 4, in: dir)
        try xvfb.put(bgrx: pages[0])
        let server = try WHIPInteropTests.Server()
        let txJSON = dir.appendingPathComponent("tx.json").path
        let (exe, args) = group.wrap(Tools.rtcshare, [
            "--whip", server.base + "/whip-closing/30000/cgroupx11", "--whip-bind", "127.0.0.1:0", "--codec", codec,
            "--source", "x11:\(xvfb.display)", "--size", "auto", "--fps", "15", "--audio", "testtone",
            "--duration", "\(Self.seconds)", "--stats-json", txJSON,
        ])
        let sender = try BackgroundProcess(exe, args, in: dir, name: "sender")
        defer { sender.kill() }
        let started = Date()
        var shown = 0
        while sender.isRunning {
            let due = Double(Self.stillSeconds + shown)
            if Date().timeIntervalSince(started) >= due {
                shown += 1
                try xvfb.put(bgrx: pages[shown % pages.count])
            }
            usleep(20_000)
        }
        let status = sender.wait(timeout: 30)
        let peak = group.peakBytes
        let stderr = sender.stderr
        print("MemoryLimitTests 1080p x11 --whip \(codec): cgroup peak \(peak.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "n/a") of 50 MiB; \(shown) full-screen changes")
        #expect(group.oomKills == 0, "OOM-killed inside 50 MiB: \(stderr.suffix(600))")
        #expect(status == 0, "rtcshare: \(stderr.suffix(600))")
        #expect(stderr.contains("1920x1080"), "--size auto shared the screen at its own size: \(stderr.prefix(400))")
        #expect(stderr.contains("rtcshare: reconnected"), "the server's close was bridged: \(stderr.suffix(600))")
        #expect(shown >= Self.seconds - Self.stillSeconds - 5, "\(shown) pages shown")
        if let peak { #expect(peak <= Self.limitBytes) }
        let encoded = try #require(WHIPInteropTests.framesSent(stderr), "\(stderr.suffix(600))")
        let last = ((try? String(contentsOfFile: txJSON, encoding: .utf8)) ?? "").split(separator: "\n").last.map(String.init) ?? "{}"
        let stats = (try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]) ?? [:]
        let notSent = stats["frames_dropped_connecting"] as? Int ?? 0
        // Each session's DELETE lists it as finished once all it received is decoded: the one
        // the server closed (DELETEd at the reconnect) and the last.
        var summary: [String: Any] = [:]
        try waitUntil(timeout: 320, interval: 0.5) {
            summary = try server.summary()
            let listed = ((summary["finished"] as? [String] ?? []) + (summary["unfinished"] as? [String] ?? []))
            return listed.filter { $0 == "cgroupx11" }.count >= 2
        }
        let own = (summary["by_session"] as? [String: Any])?["cgroupx11"] as? [String: Any] ?? [:]
        let decoded = own["video_frames"] as? Int ?? 0
        // Frames of a progressive keyframe's sweep are decoded and not shown (`VP8FrameTag`).
        let hidden = ProgressiveKeyframeInteropTests.Sent(stderr)?.hidden ?? 0
        print("MemoryLimitTests 1080p x11 --whip \(codec): encoded \(encoded), \(notSent) not sent, \(hidden) hidden, aiortc decoded \(decoded)")
        #expect((summary["unfinished"] as? [String] ?? []).isEmpty, "aiortc did not finish decoding")
        // A frame or two in flight when the server closed the first session is not decoded. With
        // H.264 too: no access unit is larger than the sender's history holds whole
        // (`H264Encoder.Configuration.maxFrameBytes`).
        #expect(Double(decoded) >= 0.95 * Double(encoded - notSent - hidden) - 2,
                "aiortc decoded \(decoded) of \(encoded - notSent - hidden)")
        // At least a frame a second all the minute (a still page is sent once a second; each
        // change is a new frame), as above.
        #expect(encoded >= Self.seconds, "encoded \(encoded)")
    }

    /// Seconds the first page of text stands still before the pages change every second.
    static let stillSeconds = 15

    /// `count` different pages of dense 11 px monospaced text (random words, the same ones each
    /// run), drawn by ffmpeg's drawtext as BGRX pictures of `width` x `height`
    /// (`bench/harness/fullhd_case.py` measures with the same kind of page).
    static func textPages(width: Int, height: Int, count: Int, in dir: URL) throws -> [Data] {
        let ffmpeg = try #require(Tools.which("ffmpeg"), "ffmpeg is not installed (scripts/setup installs it)")
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789(){}[];:.,=+-*/<>_")
        var random = SeededRandom(seed: 7)
        let font = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
        let face = FileManager.default.fileExists(atPath: font) ? "fontfile=\(font)" : "font=Monospace"
        return try (0..<count).map { page in
            var lines: [String] = []
            for i in 0..<(height / 11 + 2) {
                var line = ""
                while line.count < width / 6 {
                    line += String((0..<Int.random(in: 2...10, using: &random)).map { _ in alphabet.randomElement(using: &random)! }) + " "
                }
                lines.append(String(format: "%5d  ", i + page * 100) + line)
            }
            let text = dir.appendingPathComponent("page\(page).txt")
            try lines.joined(separator: "\n").write(to: text, atomically: true, encoding: .utf8)
            let run = try Tools.run(ffmpeg, [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=white:s=\(width)x\(height)",
                "-frames:v", "1", "-vf", "drawtext=\(face):textfile=\(text.path):fontsize=11:fontcolor=black:x=2:y=2:"
                    + "line_spacing=0:expansion=none", "-f", "rawvideo", "-pix_fmt", "bgr0", "-",
            ])
            try #require(run.status == 0 && run.stdout.count == width * height * 4, "ffmpeg drew no page: \(run.stderr)")
            return run.stdout
        }
    }
}

extension Xvfb {
    /// Puts a picture of the screen's size (BGRX, rows packed) on the root window in strips a
    /// core request carries (at most 256 KiB), and waits until the server has drawn it.
    func put(bgrx picture: Data) throws {
        var screenNumber: Int32 = 0
        let c = try #require(xcb_connect(display, &screenNumber))
        defer { xcb_disconnect(c) }
        guard xcb_connection_has_error(c) == 0, let screen = xcb_setup_roots_iterator(xcb_get_setup(c)).data else {
            throw XvfbError(message: "cannot connect to \(display) to draw")
        }
        let root = screen.pointee.root
        let gc = xcb_generate_id(c)
        xcb_create_gc(c, gc, root, 0, nil)
        let rowBytes = width * 4
        let rowsPerRequest = max(1, (240 << 10) / rowBytes)
        picture.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var y = 0
            while y < height {
                let rows = min(rowsPerRequest, height - y)
                xcb_put_image(c, UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), root, gc, UInt16(width), UInt16(rows), 0,
                              Int16(y), 0, 24, UInt32(rows * rowBytes), bytes.baseAddress! + y * rowBytes)
                y += rows
            }
        }
        xcb_free_gc(c, gc)
        // A round trip: every request before it has been carried out.
        free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), nil))
    }
}
