import Foundation
import TestSupport
import Testing

/// A share that outlives its server: `rtcshare --whip` against aiortc behind
/// `Tests/Peers/whip_server.py` on 127.0.0.1, the server killed and started again, or closing
/// each session it made. What counts is what the server decodes, and what the share leaves
/// behind (memory, descriptors, sessions).
@Suite(.serialized) struct ReconnectTests {
    typealias Server = WHIPInteropTests.Server

    /// A TCP port nothing listens on now, for a server that must come back on the same one.
    static func freeTCPPort() throws -> Int {
        let probe = try Tools.run(Tools.which("python3") ?? "/usr/bin/python3", [
            "-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])",
        ], timeout: 10)
        guard let port = Int(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw Tools.Failure(message: "no free TCP port: \(probe.stderr)") }
        return port
    }

    /// The video frames the server decoded so far for session `id`.
    static func decoded(_ server: Server, _ id: String) throws -> Int {
        let own = (try server.summary()["by_session"] as? [String: Any])?[id] as? [String: Any]
        return own?["video_frames"] as? Int ?? 0
    }

    /// Resident set and open descriptors of a process, from /proc.
    static func residentAndDescriptors(_ pid: Int32) -> (rssKiB: Int, fds: Int) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } } ?? 0
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
        return (rss, fds)
    }

    /// The server killed (SIGKILL: no DELETE, no close_notify) 1 s into the share and started
    /// again on the same address 5 s later: the share finds the old session gone (the host
    /// answers ICMP port unreachable), POSTs again with back-off while nothing listens, and the
    /// new server decodes its media within 10 s of coming back.
    @Test func aServerKilledAndStartedAgainIsPublishedToAgain() throws {
        let port = try Self.freeTCPPort()
        let first = try Server(port: port)
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let share = try BackgroundProcess(Tools.rtcshare, [
            "--whip", first.base + "/whip/restart", "--whip-bind", "127.0.0.1:0", "--size", "640x360",
            "--duration", "60",
        ], in: dir, name: "share")
        defer { share.kill() }
        try #require(share.waitForOutput(containing: "WHIP: connected", timeout: 20), "\(share.stderr)")
        usleep(1_000_000)
        first.process.kill()
        usleep(5_000_000)
        let second = try Server(port: port)
        let back = Date()
        var decodedAgain = 0
        waitUntil(timeout: 30, interval: 0.25) {
            decodedAgain = (try? Self.decoded(second, "restart")) ?? 0
            return decodedAgain > 0
        }
        let took = Date().timeIntervalSince(back)
        print("reconnect after a server restart (aiortc): media decoded \(String(format: "%.1f", took)) s after the server was back")
        #expect(decodedAgain > 0, "\(share.stderr)")
        #expect(took <= 10, "decoded again \(took) s after the server came back: \(share.stderr)")
        #expect(share.stderr.contains("rtcshare: reconnecting"), "\(share.stderr)")
        #expect(share.stderr.contains("rtcshare: reconnected"), "\(share.stderr)")
        // Stopped: exit 0, and the new session is DELETEd.
        let status = share.stop(SIGINT, timeout: 10)
        #expect(status == 0, "\(share.stderr)")
        let deletes = try second.summary()["deletes"] as? [String] ?? []
        #expect(deletes.contains("restart"), "the session on the new server is deleted")
    }

    /// A server that closes each session 1.5 s after it connected, 20 times in one share: the
    /// share publishes again every time (a new POST, the old resource DELETEd); memory and
    /// open descriptors after the 20th reconnect are those after the 1st.
    @Test func twentyReconnectsLeaveNothingBehind() throws {
        let server = try Server()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let share = try BackgroundProcess(Tools.rtcshare, [
            "--whip", server.base + "/whip-closing/1500/twenty", "--whip-bind", "127.0.0.1:0", "--size", "640x360",
            "--duration", "300", "--reconnect-stable-after", "0",
        ], in: dir, name: "share")
        defer { share.kill() }
        func reconnects() -> Int { share.stderr.components(separatedBy: "rtcshare: reconnected").count - 1 }
        func sampleAfter(_ count: Int) throws -> (rssKiB: Int, fds: Int) {
            try #require(waitUntil(timeout: 120, interval: 0.1) { reconnects() >= count || !share.isRunning },
                         "\(reconnects()) reconnects: \(share.stderr.suffix(2000))")
            // Once the new connection has settled (libcurl is unloaded after the POST, the first
            // frames are out): well inside the 1.5 s before the server closes it again.
            usleep(700_000)
            return Self.residentAndDescriptors(share.process.processIdentifier)
        }
        let afterFirst = try sampleAfter(1)
        let afterTwentieth = try sampleAfter(20)
        print("20 reconnects: RSS \(afterFirst.rssKiB) KiB after the 1st, \(afterTwentieth.rssKiB) KiB after the 20th; "
              + "descriptors \(afterFirst.fds) and \(afterTwentieth.fds)")
        #expect(afterTwentieth.rssKiB - afterFirst.rssKiB <= 1024, "RSS grew \(afterTwentieth.rssKiB - afterFirst.rssKiB) KiB")
        #expect(afterTwentieth.fds == afterFirst.fds, "descriptors \(afterFirst.fds) → \(afterTwentieth.fds)")
        let status = share.stop(SIGINT, timeout: 10)
        #expect(status == 0, "\(share.stderr.suffix(2000))")
        let summary = try server.summary()
        let deletes = (summary["deletes"] as? [String] ?? []).filter { $0 == "twenty" }.count
        let posts = (summary["offers_by_session"] as? [String: Any])?["twenty"] != nil
        #expect(posts)
        #expect((summary["server_closed"] as? Int ?? 0) >= 20)
        // Every session it made was DELETEd: one per reconnect and the last at the end.
        #expect(deletes >= 21, "\(deletes) DELETEs for \(reconnects()) reconnects")
    }
}
