import Foundation
import TestSupport
import Testing

/// A share into Janus (VideoRoom behind simple-whip-server, in a network namespace of the
/// test's own: see `JanusWHIPTests`) that outlives the server and the path: Janus killed and
/// started again, and rtcshare's UDP port cut off with nftables for a while. Janus takes ICE
/// restarts by PATCH, so a lost path comes back that way while the session lasts.
@Suite(.serialized) struct JanusReconnectTests {
    typealias Janus = JanusWHIPTests
    static let unavailable = JanusWHIPTests.unavailable
    static var endpoint: String { "http://\(Janus.janusAddress):7080/whip/endpoint/rtcshare" }

    /// Drops every UDP datagram to or from `port` inside the namespace (both ends live there:
    /// the input hook sees each direction once) until `restore` deletes the table.
    struct PortCut {
        let ns: JanusWHIPTests.Namespace
        let nft: String

        init(_ ns: JanusWHIPTests.Namespace, port: Int) throws {
            self.ns = ns
            nft = try #require(Tools.which("nft"), "nft is not installed (scripts/setup installs nftables)")
            let rules = """
                table inet rtcs_cut {
                \tchain in {
                \t\ttype filter hook input priority 0; policy accept;
                \t\tudp dport \(port) drop
                \t\tudp sport \(port) drop
                \t}
                }

                """
            let (exe, args) = ns.exec(nft, ["-f", "-"])
            let made = try Tools.run(exe, args, input: Data(rules.utf8), timeout: 10)
            try #require(made.status == 0, "nft: \(made.stderr)")
        }

        func restore() throws {
            let (exe, args) = ns.exec(nft, ["delete", "table", "inet", "rtcs_cut"])
            let deleted = try Tools.run(exe, args, timeout: 10)
            try #require(deleted.status == 0, "the cut stays: nft: \(deleted.stderr)")
        }
    }

    /// When `text` is first in the process's standard error after `count` earlier ones, polled
    /// every 50 ms (monotonic µs), or nil after `timeout`.
    static func when(_ share: BackgroundProcess, says text: String, beyond count: Int, timeout: TimeInterval) -> UInt64? {
        var at: UInt64?
        waitUntil(timeout: timeout, interval: 0.05) {
            if share.stderr.components(separatedBy: text).count - 1 > count { at = Tools.monotonicMicroseconds() }
            return at != nil || !share.isRunning
        }
        return at
    }

    static func summary(_ path: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]) ?? [:]
    }

    /// Janus and simple-whip-server killed (SIGKILL) 1 s into a share, started again 5 s later on
    /// the same address: rtcshare learns at once that the session is gone (ICMP port unreachable
    /// from Janus's media port), POSTs again with back-off, and a new subscriber decodes its
    /// media, captured within 10 s of the server being back.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func janusKilledAndStartedAgainIsPublishedToAgain() throws {
        let dir = try Tools.temporaryDirectory()
        let ns = try JanusWHIPTests.Namespace()
        var processes: [BackgroundProcess] = []
        defer { Janus.tearDown(processes, ns, dir) }
        let first = dir.appendingPathComponent("first"), second = dir.appendingPathComponent("second")
        for d in [first, second] { try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true) }
        var room: [BackgroundProcess] = []
        _ = try Janus.startRoom(in: ns, dir: first, processes: &room)
        let (exe, args) = ns.exec(Tools.rtcshare, [
            "--whip", Self.endpoint, "--whip-bind", "\(Janus.janusAddress):0", "--size", "640x360", "--duration", "90",
        ])
        let share = try BackgroundProcess(exe, args, in: dir, name: "share")
        processes.append(share)
        try #require(share.waitForOutput(containing: "WHIP: connected", timeout: 20), "\(share.stderr)")
        usleep(1_000_000)
        for process in room.reversed() { process.kill() }
        usleep(5_000_000)
        let (subscriber, summaryPath) = try Janus.startRoom(in: ns, dir: second, idle: 5, processes: &processes)
        let back = Tools.monotonicMicroseconds()
        let reconnected = Self.when(share, says: "rtcshare: reconnected", beyond: 0, timeout: 30)
        #expect(reconnected != nil, "\(share.stderr)")
        usleep(4_000_000)  // the subscriber joins and decodes
        #expect(share.stop(SIGINT, timeout: 10) == 0, "\(share.stderr)")
        Janus.finish(subscriber)
        let summary = Self.summary(summaryPath)
        let times = summary["times"] as? [Int] ?? []
        let firstCaptured = times.first.map { Double(($0 - Int(back & 0xFFFF_FFFF)) & 0xFFFF_FFFF) / 1e6 }
        print("reconnect after a server restart (Janus): reconnected \(reconnected.map { String(format: "%.1f", Double($0 - back) / 1e6) } ?? "-") s "
              + "after the server was back; the new subscriber decoded \(summary["video_frames"] ?? 0) frames, the first "
              + "captured \(firstCaptured.map { String(format: "%.1f", $0) } ?? "-") s after")
        #expect((summary["video_frames"] as? Int ?? 0) > 0, "subscriber: \(summary["error"] ?? "")")
        #expect(firstCaptured.map { $0 <= 10 } == true, "media captured \(firstCaptured ?? -1) s after Janus was back")
    }

    /// What an outage left: when rtcshare said it was connected again, from the path's return
    /// (s); its log; the transport-wide feedback Janus sent for the media it received, counted
    /// by the share when the path came back and at its end.
    struct Outage {
        var reconnectedAfter: Double?
        var log: String
        var feedbackAtReturn: Int
        var feedbackAtEnd: Int
        /// The subscriber's summary (it watches through the outage when `watch` was asked).
        var subscriber: [String: Any]
    }

    /// The transport-wide feedback messages counted in the newest `--stats-json` line.
    static func feedback(_ statsPath: String) -> Int {
        let last = ((try? String(contentsOfFile: statsPath, encoding: .utf8)) ?? "").split(separator: "\n").last
        let object = last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return object?["transport_feedback"] as? Int ?? 0
    }

    /// rtcshare's port cut off for `outage` seconds. `consentTimeout` decides what the share does
    /// meanwhile. (Janus's VideoRoom answers a publisher's ICE restart with a renegotiation of
    /// its subscribers that the test's aiortc subscriber does not follow, so what Janus received
    /// is read from its transport-wide feedback, which acknowledges every packet that came.)
    /// With `watch`, the subscriber waits through the outage instead of leaving 3 s into it.
    static func outage(seconds outage: Double, consentTimeout: Int, sharePort: Int, watch: Bool = false) throws -> Outage {
        let dir = try Tools.temporaryDirectory()
        let ns = try JanusWHIPTests.Namespace()
        var processes: [BackgroundProcess] = []
        defer { Janus.tearDown(processes, ns, dir) }
        let (subscriber, summaryPath) = try Janus.startRoom(in: ns, dir: dir, idle: watch ? Int(outage) + 10 : 3,
                                                            processes: &processes)
        let statsPath = dir.appendingPathComponent("tx.jsonl").path
        let (exe, args) = ns.exec(Tools.rtcshare, [
            "--whip", Self.endpoint, "--whip-bind", "\(Janus.janusAddress):\(sharePort)", "--size", "640x360",
            "--duration", "\(Int(outage) + 90)", "--consent-timeout", "\(consentTimeout)", "--stats-json", statsPath,
        ])
        let share = try BackgroundProcess(exe, args, in: dir, name: "share")
        processes.append(share)
        try #require(share.waitForOutput(containing: "WHIP: connected", timeout: 20), "\(share.stderr)")
        usleep(3_000_000)  // the subscriber joins and decodes before the cut
        let cut = try PortCut(ns, port: sharePort)
        usleep(UInt32(outage * 1_000_000))
        try cut.restore()
        let restored = Tools.monotonicMicroseconds()
        let atReturn = Self.feedback(statsPath)
        // A cut shorter than the consent timeout is no reconnect: nothing to wait for.
        let reconnected = outage < Double(consentTimeout) ? nil
            : Self.when(share, says: "rtcshare: reconnected", beyond: 0, timeout: 40)
        usleep(5_000_000)
        let atEnd = Self.feedback(statsPath)
        #expect(share.stop(SIGINT, timeout: 10) == 0, "\(share.stderr)")
        Janus.finish(subscriber)
        return Outage(reconnectedAfter: reconnected.map { Double(Int64($0) - Int64(restored)) / 1e6 }, log: share.stderr,
                      feedbackAtReturn: atReturn, feedbackAtEnd: atEnd, subscriber: Self.summary(summaryPath))
    }

    /// A 14 s cut with an 8 s consent timeout: consent is lost, ICE is restarted by PATCH
    /// (Janus takes it) while the path is still down, and its checks get through once it is
    /// back. DTLS and the RTP session go on (the same transport: its feedback count goes on
    /// growing), and Janus acknowledges media again.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func aLostPathComesBackByAnICERestart() throws {
        let o = try Self.outage(seconds: 14, consentTimeout: 8, sharePort: 21_200)
        print("ICE restart into Janus after a 14 s cut: reconnected \(o.reconnectedAfter.map { String(format: "%.1f", $0) } ?? "-") s "
              + "after the path came back; Janus's transport-wide feedback \(o.feedbackAtReturn) → \(o.feedbackAtEnd)")
        #expect(o.log.contains("WHIP: ICE restarted"), "\(o.log)")
        #expect(!o.log.contains("published again"), "no new session was needed: \(o.log)")
        #expect(o.reconnectedAfter.map { $0 <= 5 } == true, "\(o.log)")
        #expect(o.feedbackAtEnd >= o.feedbackAtReturn + 10, "Janus acknowledged media after the restart")
    }

    /// A 10 s cut: consent holds (30 s), and when Janus's feedback comes back a keyframe goes
    /// out at once, so the subscriber that watched before sees the picture move again at once:
    /// its longest freeze is the cut and at most 1.5 s more.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func aTenSecondOutageFreezesTheSubscriberNoLongerThanItself() throws {
        let o = try Self.outage(seconds: 10, consentTimeout: 30, sharePort: 21_400, watch: true)
        let gap = (o.subscriber["longest_gap_ms"] as? Double).map { $0 / 1000 }
        print("10 s outage into Janus: the subscriber's longest freeze \(gap.map { String(format: "%.2f", $0) } ?? "-") s, "
              + "\(o.subscriber["video_frames"] ?? 0) frames decoded")
        #expect(!o.log.contains("rtcshare: reconnecting"), "consent held through 10 s: \(o.log)")
        #expect(gap.map { $0 <= 10 + 1.5 } == true, "longest freeze \(gap ?? -1) s: \(o.subscriber["error"] ?? "")")
        #expect(gap.map { $0 >= 9 } == true, "the subscriber watched through the cut: \(o.subscriber)")
    }

    /// A 45 s cut with the default 30 s consent timeout: rtcshare publishes again within 5 s of
    /// the path's return (an ICE restart tried while the path is down does not come up within
    /// its 10 s, so a new POST follows, the old session DELETEd).
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func aFortyFiveSecondOutageIsBridged() throws {
        let o = try Self.outage(seconds: 45, consentTimeout: 30, sharePort: 21_300)
        print("45 s outage into Janus: reconnected \(o.reconnectedAfter.map { String(format: "%.1f", $0) } ?? "-") s after "
              + "the path came back; Janus's transport-wide feedback at the end \(o.feedbackAtEnd)")
        #expect(o.log.contains("rtcshare: reconnecting"), "\(o.log)")
        #expect(o.reconnectedAfter.map { $0 <= 5 } == true, "\(o.log)")
        #expect(!o.log.contains("WHIP DELETE"), "the old session is DELETEd (no DELETE failed): \(o.log)")
        #expect(o.feedbackAtEnd >= 10, "Janus acknowledged media of the new connection")
    }
}
