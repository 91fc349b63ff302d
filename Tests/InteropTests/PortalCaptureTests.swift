import Foundation
import TestSupport
import Testing

/// `rtcshare --source portal` over the real chain, all from Debian: a private session bus
/// (dbus-daemon), PipeWire and WirePlumber, headless sway with `wayland-test-client` drawing the
/// known picture and the frame marker, xdg-desktop-portal-wlr (its chooser a script the test
/// controls) and xdg-desktop-portal; everything, rtcshare too, as `nobody`, since the portal
/// reads its caller's /proc entries. The one thing not as shipped: a small library preloaded
/// into xdg-desktop-portal-wlr (Tests/PortalTestShim) so that 0.7 casts from a compositor with
/// no GPU (its issue #289); the cast it starts is its own shared-memory one.
@Suite(.serialized) struct PortalCaptureTests {
    /// A share at 1280x720@20 of the 1920x1080 output into `rtcshare receive` while the client
    /// animates, then holds still (the wayland source's phases, `shareMovingThenStill`): >= 95 %
    /// of the frames arrive with a readable marker, the picture is the client's, a still screen
    /// brings no conversions (PipeWire brings no buffer) and at most half the CPU, and the
    /// portal's restore token is kept in the file asked for.
    @Test func theScreenArrivesRightAndAStillOneCostsNoConversion() throws {
        let desktop = try PortalDesktop()
        defer { desktop.stop() }
        let client = try desktop.sway.startClient(in: desktop.dir, shareWidth: 1280)
        defer { client.kill() }
        try WaylandCaptureTests.shareMovingThenStill(client: client, dir: desktop.work, source: "portal",
                                                     extra: ["--portal-token-file", desktop.tokenFile]) { arguments in
            try desktop.asUser(Tools.rtcshare, arguments, name: "sender")
        }

        let kept = try String(contentsOfFile: desktop.tokenFile, encoding: .utf8)
        #expect(kept.count > 10 && kept.hasSuffix("\n"), "token file: \(kept)")
        let mode = try FileManager.default.attributesOfItem(atPath: desktop.tokenFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// xdg-desktop-portal-wlr passes the compositor's damage on (SPA_META_VideoDamage): the
    /// checks of the wayland source's `aSmallChangeConvertsOnlyItsRows` hold over the portal.
    @Test func aSmallChangeConvertsOnlyItsRows() throws {
        let desktop = try PortalDesktop()
        defer { desktop.stop() }
        let client = try desktop.sway.startClient(in: desktop.dir, shareWidth: 1280)
        defer { client.kill() }
        try WaylandCaptureTests.shareWholeThenSmallDamage(client: client, dir: desktop.work, source: "portal",
                                                          extra: ["--portal-token-file", desktop.tokenFile]) { arguments in
            try desktop.asUser(Tools.rtcshare, arguments, name: "sender")
        }
    }

    /// Shared at 5 fps while the client draws 20 a second, most buffers PipeWire hands over are
    /// replaced before a tick and given back unread; the client's frames take turns damaging
    /// the marker and a block at the bottom, so the buffer read often carries only the bottom's
    /// damage. The marker must still be converted (the damage of the buffers skipped joins the
    /// one read): every new picture sent carries a new counter.
    @Test func theDamageOfBuffersSkippedBetweenTicksIsKept() throws {
        let desktop = try PortalDesktop()
        defer { desktop.stop() }
        let client = try desktop.sway.startClient(in: desktop.dir, shareWidth: 1280, arguments: ["--alternate"])
        defer { client.kill() }
        kill(client.process.processIdentifier, SIGHUP)
        let started = try ReceivedShare.start([
            "--source", "portal", "--portal-token-file", desktop.tokenFile, "--size", "1280x720",
            "--fps", "5", "--start-delay", "2", "--duration", "8",
        ], in: desktop.work, name: "k", sdpTimeout: 30) { arguments in
            try desktop.asUser(Tools.rtcshare, arguments, name: "sender")
        }
        let share = try started.finish(senderTimeout: 40)
        let (sent, stats, int) = (share.sent, share.stats, share.int)
        let fresh = sent.frames - sent.repeats
        #expect(fresh >= 10, "\(fresh) new pictures sent\n\(started.sender.stderr)")
        #expect(Double(int("frames") - int("frames_repeated")) >= 0.9 * Double(fresh),
                "\(int("frames") - int("frames_repeated")) distinct markers, \(fresh) new pictures sent: \(stats)")
    }

    /// The first share asks the chooser (the portal's dialog); the second presents the kept
    /// token and gets the same screen without asking.
    @Test func theRestoreTokenSkipsTheDialogNextTime() throws {
        let desktop = try PortalDesktop()
        defer { desktop.stop() }
        let client = try desktop.sway.startClient(in: desktop.dir, shareWidth: 1280)
        defer { client.kill() }
        // Moving: xdg-desktop-portal-wlr copies with damage over one connection for all its casts,
        // so a second cast started on a still screen gets its first picture at the first change.
        kill(client.process.processIdentifier, SIGUSR1)
        let token = desktop.work.appendingPathComponent("state/token").path
        func share(_ name: String) throws -> String {
            let ivf = desktop.work.appendingPathComponent("\(name).ivf").path
            let run = try desktop.asUser(Tools.rtcshare, ["--source", "portal", "--portal-token-file", token,
                                                          "--size", "1280x720", "--output", ivf, "--duration", "2"], name: name)
            #expect(run.wait(timeout: 40) == 0, "\(name): \(run.stderr)")
            let frames = try X11CaptureTests.decodeY(ivf, width: 1280, height: 720)
            let last = try #require(frames.last, "\(name): no frame")
            WaylandCaptureTests.checkBoxes(last, width: 1280, w: 1280, h: 720, "\(name) (\(frames.count) frames; \(run.stderr))")
            return try String(contentsOfFile: token, encoding: .utf8)
        }
        let first = try share("first")
        #expect(desktop.chooserRuns == 1, "the chooser ran \(desktop.chooserRuns) times for the first share")
        let second = try share("second")
        #expect(desktop.chooserRuns == 1, "the chooser ran again with the token: \(desktop.chooserRuns) times")
        #expect(!first.isEmpty && !second.isEmpty)
    }

    /// The portal and its backend killed mid-share: captures stall, the watchdog restarts the
    /// source with back-off, and once they are back a new session (with the kept token, so no
    /// dialog) shows the picture again.
    @Test func aPortalThatGoesAwayIsRestartedAfter() throws {
        let desktop = try PortalDesktop()
        defer { desktop.stop() }
        let client = try desktop.sway.startClient(in: desktop.dir, shareWidth: 1280)
        defer { client.kill() }
        let ivf = desktop.work.appendingPathComponent("r.ivf").path
        let share = try desktop.asUser(Tools.rtcshare, ["--source", "portal", "--portal-token-file", desktop.tokenFile,
                                                        "--size", "1280x720", "--output", ivf, "--duration", "16"], name: "share")
        defer { share.kill() }
        Thread.sleep(forTimeInterval: 3)
        desktop.stopPortal()
        Thread.sleep(forTimeInterval: 3)
        try desktop.startPortal()
        #expect(share.wait(timeout: 60) == 0, "rtcshare: \(share.stderr)")
        #expect((WaylandCaptureTests.sourceRestarts(share.stderr) ?? 0) >= 1, "no restart: \(share.stderr)")
        let frames = try X11CaptureTests.decodeY(ivf, width: 1280, height: 720)
        try #require(frames.count >= 10, "\(frames.count) frames")
        WaylandCaptureTests.checkBoxes(frames.last!, width: 1280, w: 1280, h: 720, "after the portal came back")
        #expect(desktop.chooserRuns == 1, "the restart asked the chooser again (\(desktop.chooserRuns) runs)")
    }

    /// The output changes to 1024x768 mid-share: PipeWire agrees on the new size, and the share
    /// goes on at 1280x720 with the new picture fitted in (960x720, bars of 160 beside it). The
    /// client animates (a picture the backend's damage-driven copies bring at once after the new
    /// size), then holds; only its upper boxes are compared (its moving box passes the lower one).
    @Test func aScreenThatChangesSizeIsFollowed() throws {
        let desktop = try PortalDesktop()
        defer { desktop.stop() }
        let client = try desktop.sway.startClient(in: desktop.dir, shareWidth: 1280)
        defer { client.kill() }
        kill(client.process.processIdentifier, SIGUSR1)
        let ivf = desktop.work.appendingPathComponent("s.ivf").path
        let share = try desktop.asUser(Tools.rtcshare, ["--source", "portal", "--portal-token-file", desktop.tokenFile,
                                                        "--size", "1280x720", "--output", ivf, "--duration", "6"], name: "share")
        Thread.sleep(forTimeInterval: 2)
        try desktop.sway.message(["output", "HEADLESS-1", "resolution", "1024x768"])
        #expect(client.waitForOutput(containing: "ready 1024x768", onStandardOutput: true, timeout: 10),
                "the client did not redraw at 1024x768: \(String(decoding: client.stdout, as: UTF8.self))")
        Thread.sleep(forTimeInterval: 1.5)
        kill(client.process.processIdentifier, SIGUSR2)
        #expect(share.wait(timeout: 40) == 0, "rtcshare: \(share.stderr)")
        try WaylandCaptureTests.checkTheSizeChangeWasFollowed(ivf, lower: false)
    }

    /// `--cursor` (the portal's embedded cursor mode): the client puts the pointer at (600, 400)
    /// as a 24x24 red square; the share shows it there. (Headless sway draws its pointer in
    /// software, so only its presence is checked, as for the wayland source.)
    @Test func thePointerAppearsWhereItIs() throws {
        let desktop = try PortalDesktop(width: 1280, height: 720)
        defer { desktop.stop() }
        let client = try desktop.sway.startClient(in: desktop.dir, shareWidth: 1280, arguments: ["--pointer", "600,400,1280,720"])
        defer { client.kill() }
        // The pointer enters the window and the red cursor is set (late on a loaded machine).
        #expect(client.waitForOutput(containing: "cursor set", onStandardOutput: true, timeout: 30))
        let ivf = desktop.work.appendingPathComponent("c.ivf").path
        let share = try desktop.asUser(Tools.rtcshare, ["--source", "portal", "--cursor", "--portal-token-file", desktop.tokenFile,
                                                        "--size", "1280x720", "--output", ivf, "--duration", "2"], name: "share")
        #expect(share.wait(timeout: 30) == 0, "rtcshare: \(share.stderr)")
        try WaylandCaptureTests.checkThePointerIsShown(ivf)
        #expect(desktop.backendLog.contains("option cursor_mode:2"), "the portal was not asked for the embedded pointer")
    }

    /// No session bus, or one without a portal: one line naming what is missing, exit 1.
    @Test func noPortalIsOneClearLineAndAFailure() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bus = dir.appendingPathComponent("bus").path
        let run = try Tools.run("/usr/bin/env", ["DBUS_SESSION_BUS_ADDRESS=unix:path=\(bus)", Tools.rtcshare, "--source", "portal",
                                                 "--portal-token-file", dir.appendingPathComponent("t").path,
                                                 "--output", dir.appendingPathComponent("x.ivf").path, "--duration", "1"])
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("rtcshare: error: portal: cannot connect to the session bus: ")
                && run.stderr.filter { $0 == "\n" }.count == 1, "\(run.stderr)")

        let desktop = try PortalDesktop(portal: false)
        defer { desktop.stop() }
        let bare = try desktop.asUser(Tools.rtcshare, ["plan", "--source", "portal"], name: "plan")
        #expect(bare.wait(timeout: 30) == 1)
        #expect(bare.stderr.hasPrefix("rtcshare: error: portal: no desktop portal on the session bus (")
                && bare.stderr.filter { $0 == "\n" }.count == 1, "\(bare.stderr)")
    }

    /// CPortal declares the few types and calls of libdbus-1 and libpipewire-0.3 it uses itself
    /// (so it need not link them): compiled beside the real headers, every layout, value and
    /// call type agrees (the check fails to compile, or exits non-zero, on any difference).
    @Test func theDeclaredLibrariesMatchTheirHeaders() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let root = tests.deletingLastPathComponent()
        let flags = try Tools.run("/usr/bin/pkg-config", ["--cflags", "--libs", "dbus-1", "libpipewire-0.3"])
        try #require(flags.status == 0, "\(flags.stderr)")
        let words = String(decoding: flags.stdout, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        let binary = dir.appendingPathComponent("abi-check").path
        let cc = try Tools.run("/usr/bin/cc", ["-Werror", "-Wall", "-std=gnu11", "-I", root.appendingPathComponent("Sources/CPortal").path,
                                               tests.appendingPathComponent("PortalTestShim/abi-check.c").path, "-o", binary] + words)
        #expect(cc.status == 0, "\(cc.stderr)")
        let run = try Tools.run(binary, [])
        #expect(run.status == 0 && String(decoding: run.stdout, as: UTF8.self) == "31 D-Bus calls, 15 PipeWire calls, 0 differences\n",
                "\(String(decoding: run.stdout, as: UTF8.self)) \(run.stderr)")
    }

    /// The plan counts the buffers PipeWire maps: two of 1920x1080 at 4 bytes a pixel.
    @Test func thePlanCountsTheMappedBuffers() throws {
        let desktop = try PortalDesktop()
        defer { desktop.stop() }
        let run = try desktop.asUser(Tools.rtcshare, ["plan", "--source", "portal", "--size", "1280x720", "--portal-token-file",
                                                      desktop.tokenFile], name: "plan")
        #expect(run.wait(timeout: 40) == 0, "\(run.stderr)")
        let out = String(decoding: run.stdout, as: UTF8.self)
        let line = out.split(separator: "\n").first { $0.contains("portal shared memory") }
        #expect(line?.hasSuffix(" 15.8 MiB") == true, "\(out)")
        #expect(out.contains("fits"), "\(out)")
    }
}

/// A desktop for one test: headless sway (`Sway`), and in its runtime directory, as `nobody`, a
/// session bus, PipeWire, WirePlumber, xdg-permission-store, xdg-desktop-portal-wlr and
/// xdg-desktop-portal. The bus activates nothing (its services are started here), so a portal
/// killed stays away until the test starts it again; root may connect to it (the test's probe).
final class PortalDesktop: @unchecked Sendable {
    let sway: Sway
    var dir: URL { sway.dir }
    /// A folder `nobody` writes in (rtcshare's files).
    let work: URL
    /// Where a share keeps the portal's restore token (`--portal-token-file`) unless a test
    /// asks for another place.
    var tokenFile: String { work.appendingPathComponent("token").path }
    private var daemons: [BackgroundProcess] = []
    private var portals: [BackgroundProcess] = []
    private let shim: String
    private var bus: String { sway.runtime + "/bus" }

    /// Starts it all; `portal: false` leaves the portal out (the bus, PipeWire and sway only).
    init(portal: Bool = true, width: Int = 1920, height: Int = 1080) throws {
        sway = try Sway(width: width, height: height)
        work = sway.dir.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        chown(work.path, 65534, 65534)
        let home = sway.dir.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        chown(home.path, 65534, 65534)

        // The preloaded library, built from its source for this machine.
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PortalTestShim/screencopy-shm.c").path
        shim = sway.dir.appendingPathComponent("screencopy-shm.so").path
        let cc = try Tools.run("/usr/bin/cc", ["-shared", "-fPIC", "-O2", "-o", shim, source, "-ldl"])
        guard cc.status == 0 else { throw Tools.DecodeError(message: "building the portal test shim: \(cc.stderr)") }
        chmod(shim, 0o755)

        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(bus)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(to: dir.appendingPathComponent("bus.conf"), atomically: true, encoding: .utf8)
        // The chooser the portal runs as its dialog: counts its runs, picks the first output.
        let chooser = dir.appendingPathComponent("chooser")
        try "#!/bin/sh\necho chosen >> \(work.path)/chooser.log\nhead -n 1\n".write(to: chooser, atomically: true, encoding: .utf8)
        chmod(chooser.path, 0o755)
        try """
        [screencast]
        chooser_type=dmenu
        chooser_cmd=\(chooser.path)
        max_fps=30
        """.write(to: dir.appendingPathComponent("xdpw.conf"), atomically: true, encoding: .utf8)
        for name in ["bus.conf", "xdpw.conf"] { chmod(dir.appendingPathComponent(name).path, 0o644) }

        do {
            daemons.append(try asUser("/usr/bin/dbus-daemon", ["--config-file=\(dir.path)/bus.conf", "--nofork"], name: "dbus"))
            guard waitUntil(timeout: 10, { FileManager.default.fileExists(atPath: self.bus) }) else {
                throw Tools.DecodeError(message: "dbus-daemon did not start: \(daemons[0].stderr)")
            }
            daemons.append(try asUser("/usr/bin/pipewire", [], name: "pipewire"))
            guard waitUntil(timeout: 10, { FileManager.default.fileExists(atPath: self.sway.runtime + "/pipewire-0") }) else {
                throw Tools.DecodeError(message: "pipewire did not start: \(daemons[1].stderr)")
            }
            daemons.append(try asUser("/usr/bin/wireplumber", [], name: "wireplumber"))
            daemons.append(try asUser("/usr/libexec/xdg-permission-store", [], name: "permission-store"))
            if portal { try startPortal() }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// What a process of this desktop gets: nobody's environment, pointed at the bus and sway.
    private var environment: [String] {
        ["PATH=/usr/bin:/bin", "HOME=\(dir.path)/home", "XDG_RUNTIME_DIR=\(sway.runtime)",
         "DBUS_SESSION_BUS_ADDRESS=unix:path=\(bus)", "XDG_CURRENT_DESKTOP=sway", "WAYLAND_DISPLAY=wayland-1"]
    }

    /// Runs `executable` as nobody in this desktop.
    func asUser(_ executable: String, _ arguments: [String], name: String, extra: [String] = []) throws -> BackgroundProcess {
        try BackgroundProcess("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--",
                                                   "/usr/bin/env", "-i"] + environment + extra + [executable] + arguments,
                              in: work, name: "\(name)-\(UUID().uuidString.prefix(8))")
    }

    /// Starts xdg-desktop-portal-wlr and xdg-desktop-portal, and waits until the ScreenCast
    /// interface answers on the bus.
    func startPortal() throws {
        let backend = try asUser("/usr/libexec/xdg-desktop-portal-wlr", ["-c", "\(dir.path)/xdpw.conf", "-l", "DEBUG"],
                                 name: "xdpw", extra: ["LD_PRELOAD=\(shim)"])
        portals.append(backend)
        logs.append(backend)
        Thread.sleep(forTimeInterval: 0.5)
        portals.append(try asUser("/usr/libexec/xdg-desktop-portal", ["-r"], name: "xdp"))
        let answers = waitUntil(timeout: 20, interval: 0.2) {
            let probe = try? Tools.run("/usr/bin/env", ["DBUS_SESSION_BUS_ADDRESS=unix:path=\(self.bus)", "/usr/bin/busctl", "--user",
                                                        "get-property", "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                                                        "org.freedesktop.portal.ScreenCast", "AvailableSourceTypes"])
            return probe?.status == 0
        }
        guard answers else {
            throw Tools.DecodeError(message: "the portal did not come up: \(portals.map { $0.stderr.suffix(1500) })")
        }
    }

    /// Kills the portal and its backend (SIGKILL: no goodbye on the bus beyond their names going).
    func stopPortal() {
        for p in portals { p.kill() }
        portals.removeAll()
    }

    /// What xdg-desktop-portal-wlr logged (the options each session asked for).
    var backendLog: String { logs.map(\.stderr).joined() }
    private var logs: [BackgroundProcess] = []

    /// Runs of the portal's chooser so far.
    var chooserRuns: Int {
        ((try? String(contentsOfFile: work.path + "/chooser.log", encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    func stop() {
        stopPortal()
        for d in daemons.reversed() { d.kill() }
        daemons.removeAll()
        sway.stop()
    }
}
