import Foundation
import TestSupport
import Testing

/// A 10 s outage in the middle of a share, with real processes in two network namespaces of the
/// test's own (`NetworkLab`: side a 10.9x.0.1 sends, side b 10.9x.0.2 receives; the cut drops
/// everything on the veth pair both ways). The share must go on through it, and the receiver's
/// longest freeze be the outage and at most 1.5 s more: video is held while the path is silent
/// (little is lost, and what is goes again within the budget), and a keyframe goes out when
/// feedback comes back, not when the receiver asks.
/// Needs root, `ip` and `nft` (and aiortc for the WHIP case); otherwise skipped, saying why.
@Suite(.serialized) struct OutageTests {
    static let unavailable = NetworkLab.unavailable.map { "OutageTests skipped: \($0)" }
    static let outage: TimeInterval = 10
    /// The share runs this long before the cut and after the path is back. The test source
    /// moves for 4 s and holds still for 2 s, from its start (`TestSource`): a still screen
    /// sends repeats of its last frame, with that frame's capture time, so the return (18 s
    /// in) is put where the picture moves and a new frame is due at once.
    static let before: TimeInterval = 8
    static let after: TimeInterval = 8
    static var duration: Int { Int(before + outage + after) + 2 }

    /// When the link was cut and when it came back: wall-clock, and CLOCK_MONOTONIC µs (low 32
    /// bits: the clock the test source stamps its frame markers with) of the return.
    struct Outage {
        var cut: Date
        var back: Date
        var backMonotonic: UInt32
        var milliseconds: Double { back.timeIntervalSince(cut) * 1000 }
    }

    /// Cuts the lab's link `before` seconds after `start` for `outage` seconds, or throws if
    /// `alive` fails first. The cut counts from when the drop rules are in, the return from
    /// when their removal starts.
    static func outage(in lab: NetworkLab, from start: Date, alive: () -> Bool) throws -> Outage {
        while Date().timeIntervalSince(start) < before {
            guard alive() else { throw Tools.Failure(message: "the share ended before the outage") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        try lab.cut()
        let cut = Date()
        Thread.sleep(forTimeInterval: outage)
        let back = Date(), backMonotonic = UInt32(truncatingIfNeeded: Tools.monotonicMicroseconds())
        try lab.restore()
        return Outage(cut: cut, back: back, backMonotonic: backMonotonic)
    }

    /// The aiortc WHIP server (`Tests/Peers/whip_server.py`) on side b of a lab; its summary is
    /// fetched from inside side b.
    struct LabWHIPServer {
        let lab: NetworkLab
        let process: BackgroundProcess
        let port: Int
        let python = Tools.which("python3") ?? "/usr/bin/python3"

        init(in lab: NetworkLab, dir: URL, arguments extra: [String] = []) throws {
            self.lab = lab
            let portFile = dir.appendingPathComponent("port").path
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Peers/whip_server.py").path
            let (exe, args) = lab.command(in: lab.b, python, [
                script, "--host", lab.b.address, "--port-file", portFile,
                "--summary", dir.appendingPathComponent("summary.json").path,
            ] + extra)
            let whip = try BackgroundProcess(exe, args, in: dir, name: "whip-server")
            process = whip
            try #require(Tools.waitForFile(portFile, timeout: 30) { whip.isRunning },
                         "whip_server.py did not start: \(whip.stderr.suffix(800))")
            port = try #require(Int((try String(contentsOfFile: portFile, encoding: .utf8))
                .trimmingCharacters(in: .whitespacesAndNewlines)))
        }

        var base: String { "http://\(lab.b.address):\(port)" }

        /// The summary now, or nil when the fetch failed.
        func summary() throws -> [String: Any]? {
            let (exe, args) = lab.command(in: lab.b, python, [
                "-c", "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=15).read().decode())",
                base + "/summary",
            ])
            let fetch = try Tools.run(exe, args, timeout: 20)
            guard fetch.status == 0 else { return nil }
            return (try? JSONSerialization.jsonObject(with: fetch.stdout)) as? [String: Any]
        }

        /// The summary once session `id` has been DELETEd and all it received decoded.
        func summary(finished id: String) throws -> [String: Any] {
            var summary: [String: Any] = [:]
            try waitUntil(timeout: 320, interval: 0.5) {
                guard let object = try self.summary() else { return false }
                summary = object
                func listed(_ key: String) -> Bool { (object[key] as? [String] ?? []).contains(id) }
                return listed("finished") || listed("unfinished")
            }
            return summary
        }

        func stop() { process.stop(SIGTERM, timeout: 10) }
    }

    /// A lab (`NetworkLab`) whose side b runs the aiortc WHIP server, with a folder of its own;
    /// the server, the namespaces and the folder go when it does.
    final class WHIPLab {
        let dir: URL
        let lab: NetworkLab
        let server: LabWHIPServer

        init(name: String, net: UInt8, serverArguments: (NetworkLab) -> [String] = { _ in [] }) throws {
            let dir = try Tools.temporaryDirectory()
            let lab: NetworkLab
            let server: LabWHIPServer
            do {
                lab = try NetworkLab(name: name, net: net)
                do { server = try LabWHIPServer(in: lab, dir: dir, arguments: serverArguments(lab)) } catch {
                    lab.remove()
                    throw error
                }
            } catch {
                try? FileManager.default.removeItem(at: dir)
                throw error
            }
            (self.dir, self.lab, self.server) = (dir, lab, server)
        }

        /// `rtcshare ARGS` started on side a.
        func share(_ arguments: [String]) throws -> BackgroundProcess {
            let (exe, args) = lab.command(in: lab.a, Tools.rtcshare, arguments)
            return try BackgroundProcess(exe, args, in: dir, name: "share")
        }

        deinit {
            server.stop()
            lab.remove()
            try? FileManager.default.removeItem(at: dir)
        }
    }

    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func afterATenSecondOutageThePeerReceiverFreezesForTheOutageOnly() throws {
        let dir = try Tools.temporaryDirectory()
        let lab = try NetworkLab(name: "outp", net: 97)
        defer {
            lab.remove()
            try? FileManager.default.removeItem(at: dir)
        }
        let key = Data((0..<30).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).base64EncodedString()
        let json = dir.appendingPathComponent("rx.json").path
        var (exe, args) = lab.command(in: lab.b, Tools.rtcshare, [
            "receive", "--listen", "\(lab.b.address):5004", "--srtp-key", key, "--stats-json", json,
            "--idle-timeout", "\(Int(Self.outage) + 6)", "--settle", "2",
        ])
        let receiver = try BackgroundProcess(exe, args, in: dir, name: "receiver")
        defer { receiver.stop(SIGTERM) }
        #expect(receiver.waitForOutput(containing: "listening on", timeout: 10), "receiver: \(receiver.stderr)")
        (exe, args) = lab.command(in: lab.a, Tools.rtcshare, [
            "--source", "testsrc", "--size", "640x360", "--fps", "20", "--bitrate", "1000",
            "--peer", "\(lab.b.address):5004", "--srtp-key", key, "--audio", "none", "--duration", "\(Self.duration)",
        ])
        let started = Date()
        let sender = try BackgroundProcess(exe, args, in: dir, name: "sender")
        defer { sender.stop(SIGTERM) }
        let outage = try Self.outage(in: lab, from: started) { sender.isRunning }
        #expect(sender.wait(timeout: Double(Self.duration) + 20) == 0, "sender: \(sender.stderr)")
        #expect(receiver.wait(timeout: 20) == 0, "receiver: \(receiver.stderr)")

        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json)))
        let rx = try #require(object as? [String: Any])
        let freeze = rx.double("longest_freeze_ms")
        let outageMs = outage.milliseconds
        let summary = "rtcshare receive: longest freeze \(Int(freeze)) ms after a \(Int(outageMs)) ms outage; "
            + "frames \(rx.int("frames")), packets lost \(rx.int("packets_lost")), plis \(rx.int("plis"))"
        print("OutageTests --peer: \(summary)")
        #expect(freeze >= outageMs - 1_000, "the outage froze the picture: \(summary)")
        #expect(freeze <= outageMs + 1_500, "\(summary)")
    }

    @Test(.enabled(if: unavailable == nil && Tools.which("python3") != nil, Comment(rawValue: unavailable ?? "no python3")))
    func afterATenSecondOutageAiortcFreezesForTheOutageOnly() throws {
        let whipLab = try WHIPLab(name: "outw", net: 96)
        let (lab, server) = (whipLab.lab, whipLab.server)
        let started = Date()
        let share = try whipLab.share([
            "--source", "testsrc", "--size", "640x360", "--fps", "20", "--bitrate", "1000", "--audio", "none",
            "--whip", server.base + "/whip/outage", "--whip-bind", "\(lab.a.address):0",
            "--duration", "\(Self.duration)",
        ])
        defer { share.stop(SIGTERM) }
        #expect(share.waitForOutput(containing: "WHIP: connected", timeout: 15), "rtcshare: \(share.stderr)")
        let outage = try Self.outage(in: lab, from: started) { share.isRunning }
        let status = share.wait(timeout: Double(Self.duration) + 30)
        #expect(status == 0, "rtcshare: \(share.stderr)")

        // The session's figures once aiortc has decoded all it received (listed "finished").
        let summary = try server.summary(finished: "outage")
        let own = try #require((summary["by_session"] as? [String: Any])?["outage"] as? [String: Any], "\(summary)")
        // The freeze as a viewer sees it: the longest wait between two frames coming out of
        // aiortc's decoder. A loaded machine's decoding lags, and a backlog decoded during the
        // outage shortens that wait, so the frame markers' capture times (the sender's clock)
        // are read too: the longest jump between consecutive decoded frames (frames of the
        // outage's first second, resent after it, shorten that one), and how long after the
        // path came back the first frame decoded after it was captured (the return noticed and
        // video let go again: the sender's part, whatever aiortc's lag).
        let freeze = own.double("longest_gap_ms")
        let captures = (own["markers"] as? [[Int]] ?? []).compactMap { $0.count == 2 ? UInt32(truncatingIfNeeded: $0[1]) : nil }
        var captureGap: Double = 0
        for (x, y) in zip(captures, captures.dropFirst()) {
            captureGap = max(captureGap, Double(Int32(bitPattern: y &- x)) / 1000)
        }
        let sinceBack = captures.map { Double(Int32(bitPattern: $0 &- outage.backMonotonic)) / 1000 }
        let recovery = sinceBack.filter { $0 >= 0 }.min()
        let outageMs = outage.milliseconds
        let text = "aiortc: longest freeze \(Int(freeze)) ms after a \(Int(outageMs)) ms outage, longest jump in "
            + "capture time \(Int(captureGap)) ms, first frame decoded after it captured \(recovery.map { "\(Int($0)) ms" } ?? "never") "
            + "after the path came back; \(own.int("video_frames")) frames decoded; "
            + (share.stderr.split(separator: "\n").last { $0.contains(" frames in ") }.map(String.init) ?? "")
        print("OutageTests WHIP: \(text)")
        #expect(share.stderr.contains("reporting again after"), "the share saw the outage: \(share.stderr)")
        #expect(freeze <= outageMs + 1_500, "\(text)")
        #expect(captureGap <= outageMs + 1_500, "\(text)")
        #expect((recovery ?? .infinity) <= 1_500, "\(text)")
    }
}
