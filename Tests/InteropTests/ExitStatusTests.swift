import Foundation
import TestSupport
import Testing

/// What a supervisor sees of `rtcshare --whip`: the exit status of each kind of failure, from
/// the real WHIP test server's fixed replies (and aiortc's answers, altered); one error line
/// each; a stop at any moment; a share starved of address space.
@Suite(.serialized) struct ExitStatusTests {
    nonisolated(unsafe) static let server: Result<WHIPInteropTests.Server, Error> = Result { try WHIPInteropTests.Server() }

    /// Runs a share to its end; (status, stderr).
    static func share(_ arguments: [String], timeout: Double = 40) throws -> (Int32, String) {
        let run = try Tools.run(Tools.rtcshare, arguments + ["--size", "320x180", "--duration", "3"], timeout: timeout)
        return (run.status, run.stderr)
    }

    static func errorLines(_ log: String) -> [Substring] {
        log.split(separator: "\n").filter { $0.hasPrefix("rtcshare: error:") }
    }

    @Test(arguments: [
        ("/status/401", 77, "HTTP 401"), ("/status/403", 77, "HTTP 403"), ("/echo-auth", 77, "HTTP 401"),
        ("/status/400", 78, "HTTP 400"), ("/status/404", 78, "HTTP 404"), ("/status/415", 78, "HTTP 415"),
        ("/status/422", 78, "HTTP 422"), ("/answer-200/x200", 78, "HTTP 200: expected 201 Created"),
        ("/answer-html/xhtml", 78, "'text/html'"), ("/answer-truncated/xcut", 78, "WHIP answer: sdp line 5"),
        ("/no-location", 78, "without a Location"), ("/whip-no-codec/xcodec", 78, "none of the video codecs"),
        ("/whip-video-rejected/xvideo", 78, "WHIP answer"),
        ("/status/500", 75, "HTTP 500"), ("/status/503", 75, "HTTP 503"), ("/status/408", 75, "HTTP 408"),
        ("/status/429", 75, "HTTP 429"), ("/retry-after/503/9", 75, "HTTP 503: status 503 from the test server (Retry-After: 9 s)"),
    ] as [(String, Int32, String)])
    func eachAnswerOfTheServerHasItsExitStatus(path: String, status: Int32, expected: String) throws {
        let server = try Self.server.get()
        // --reconnect off: the first answer decides (retries have their tests below).
        let (code, log) = try Self.share(["--whip", server.base + path, "--whip-bind", "127.0.0.1:0", "--reconnect", "off"])
        let errors = Self.errorLines(log)
        #expect(code == status, "\(log)")
        #expect(errors.count == 1 && errors[0].contains(expected), "\(log)")
        #expect(log.split(separator: "\n").count == 1, "one line and nothing else: \(log)")
    }

    /// Refused answers that came with a Location leave nothing on the server.
    @Test func aRefusedAnswerWithALocationIsDeleted() throws {
        let server = try Self.server.get()
        for id in ["del200", "delhtml"] {
            let path = id == "del200" ? "/answer-200/\(id)" : "/answer-html/\(id)"
            let (code, log) = try Self.share(["--whip", server.base + path])
            #expect(code == 78, "\(log)")
        }
        let deletes = try server.summary()["deletes"] as? [String] ?? []
        #expect(deletes.contains("del200") && deletes.contains("delhtml"), "\(deletes)")
    }

    @Test func aRefusedConnectionIsTemporary() throws {
        // Port 1 on loopback: nothing listens there.
        let (code, log) = try Self.share(["--whip", "http://127.0.0.1:1/whip/x"])
        #expect(code == 75, "\(log)")
        #expect(Self.errorLines(log).count == 1, "\(log)")
    }

    /// A temporary answer is tried again: after the server's Retry-After when it is longer than
    /// the back-off (2 s against 1 s here), until `--reconnect 2` attempts have failed; then
    /// 75, one error line, each wait said in a line.
    @Test func aTemporaryAnswerIsTriedAgainAfterItsRetryAfterUntilTheAttemptsRunOut() throws {
        let server = try Self.server.get()
        let before = try server.summary()["requests"] as? [[String: Any]] ?? []
        let started = Date()
        let run = try Tools.run(Tools.rtcshare, ["--whip", server.base + "/retry-after/503/2", "--size", "320x180",
                                                 "--duration", "60", "--reconnect", "2"], timeout: 60)
        let took = Date().timeIntervalSince(started)
        let after = try server.summary()["requests"] as? [[String: Any]] ?? []
        let posts = after.dropFirst(before.count).filter { $0["path"] as? String == "/retry-after/503/2" }.count
        #expect(run.status == 75, "\(run.stderr)")
        #expect(posts == 3, "the first POST and two attempts: \(posts)")
        #expect(took >= 4 && took < 30, "two waits of the 2 s Retry-After: \(took) s")
        #expect(run.stderr.components(separatedBy: "rtcshare: reconnecting").count - 1 == 2, "\(run.stderr)")
        #expect(Self.errorLines(run.stderr).count == 1, "\(run.stderr)")
    }

    /// By default a temporary failure is tried again for as long as the share runs: a server
    /// that answers 503 for the whole `--duration` ends it with 75 once the next attempt would
    /// come after the duration.
    @Test func byDefaultAServerThatStaysAwayIsTriedUntilTheDurationPasses() throws {
        let server = try Self.server.get()
        let started = Date()
        let (code, log) = try Self.share(["--whip", server.base + "/status/503"])
        let took = Date().timeIntervalSince(started)
        #expect(code == 75, "\(log)")
        #expect(log.contains("rtcshare: reconnecting"), "\(log)")
        #expect(took < 20, "tried within the 3 s duration: \(took) s")
    }

    @Test func anUnreadableTokenFileIsNoPermission() throws {
        let server = try Self.server.get()
        let (code, log) = try Self.share(["--whip", server.base + "/whip/never", "--token-file", "/nonexistent/token"])
        #expect(code == 77, "\(log)")
        #expect(Self.errorLines(log).count == 1 && log.contains("--token-file"), "\(log)")
    }

    @Test func iceThatNeverConnectsIsTemporaryAndAWrongCertificatePermanent() throws {
        let server = try Self.server.get()
        let (ice, iceLog) = try Self.share(["--whip", server.base + "/whip-dead-ice/xdeadice", "--whip-bind", "127.0.0.1:0",
                                            "--ice-timeout", "2", "--reconnect", "off"])
        #expect(ice == 75 && iceLog.contains("ICE"), "\(iceLog)")
        let (dtls, dtlsLog) = try Self.share(["--whip", server.base + "/whip-bad-fingerprint/xbadfp", "--whip-bind", "127.0.0.1:0"])
        #expect(dtls == 78 && dtlsLog.contains("fingerprint"), "\(dtlsLog)")
    }

    /// SIGTERM while the POST waits on a server that never answers: the documented stop, exit
    /// 0 with one line, within 2 s (the POST is given up at once once WHIPSink hands it the
    /// stop; until then the CLI ends it after its 1 s grace).
    @Test func sigtermDuringThePostIsAStopWithOneLine() throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let share = try BackgroundProcess(Tools.rtcshare, ["--whip", server.base + "/hang", "--size", "320x180",
                                                           "--duration", "30"], in: dir, name: "hang")
        defer { share.kill() }
        // The POST is pending once the server has recorded it.
        #expect(waitUntil(timeout: 20, interval: 0.05) {
            ((try? server.summary()["requests"]) as? [[String: Any]] ?? []).contains { $0["path"] as? String == "/hang" }
        })
        let signalled = Date()
        let status = share.stop(SIGTERM, timeout: 10)
        let took = Date().timeIntervalSince(signalled)
        #expect(share.process.terminationReason == .exit && status == 0, "status \(String(describing: status)): \(share.stderr)")
        #expect(share.stderr == "rtcshare: finished: stopped before the share started\n", "\(share.stderr)")
        #expect(took < 2, "stopped \(took) s after SIGTERM")
    }

    /// SIGTERM once media flows: exit 0, and the server sees the DELETE.
    @Test func sigtermMidShareDeletesTheSessionAndExitsZero() throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let share = try BackgroundProcess(Tools.rtcshare, ["--whip", server.base + "/whip/xsigterm", "--whip-bind", "127.0.0.1:0",
                                                           "--size", "320x180", "--duration", "30"], in: dir, name: "mid")
        defer { share.kill() }
        try #require(share.waitForOutput(containing: "WHIP: connected", timeout: 20), "\(share.stderr)")
        let signalled = Date()
        let status = share.stop(SIGTERM, timeout: 10)
        let took = Date().timeIntervalSince(signalled)
        #expect(status == 0, "\(share.stderr)")
        #expect(share.stderr.contains("rtcshare: finished: stopped"), "\(share.stderr)")
        #expect(took < 2, "stopped \(took) s after SIGTERM, DELETE included")
        let deletes = try server.summary()["deletes"] as? [String] ?? []
        #expect(deletes.contains("xsigterm"), "\(deletes)")
    }

    /// Address space too short at every step of a WHIP share (the encoder, the budget, OpenSSL's
    /// certificate, libcurl's chain, the run): each limit gives a clean run or one error line
    /// and a documented status, never a trap (SIGABRT, "Fatal error"). The sweep spans the
    /// limits where each step gives out in both the debug and the release build.
    @Test func aShareShortOfAddressSpaceFailsWithOneLineNeverATrap() throws {
        let server = try Self.server.get()
        var outcomes: [Int: Int32] = [:]
        for kib in stride(from: 30_000, through: 80_000, by: 2_500) {
            let command = "ulimit -v \(kib); exec \"$0\" \"$@\""
            let run = try Tools.run("/bin/sh", ["-c", command, Tools.rtcshare, "--whip", server.base + "/whip/xas\(kib)",
                                                "--size", "640x360", "--audio", "testtone", "--duration", "1", "--quiet"],
                                    timeout: 60)
            // Below some limit the dynamic loader cannot map the binary's libraries: rtcshare never
            // ran (the loader's own status 127), which says nothing of how it fails.
            if run.status == 127 && run.stderr.contains("error while loading shared libraries") {
                outcomes[kib] = -1
                continue
            }
            outcomes[kib] = run.status
            #expect([0, 1, 71, 75, 78].contains(run.status), "ulimit -v \(kib): status \(run.status): \(run.stderr)")
            #expect(!run.stderr.contains("Fatal error") && !run.stderr.contains("GnuTLS"), "ulimit -v \(kib): \(run.stderr)")
            let lines = run.stderr.split(separator: "\n")
            #expect(run.status == 0 ? lines.isEmpty : lines.count == 1 && lines[0].hasPrefix("rtcshare: error:"),
                    "ulimit -v \(kib): \(run.stderr)")
        }
        print("ulimit -v sweep (KiB: status): \(outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))")
        #expect(outcomes.values.filter { $0 >= 0 }.count >= 12, "rtcshare ran at most limits of the sweep: \(outcomes)")
        #expect(outcomes.values.contains(71), "libcurl's chain gave out somewhere in the sweep: \(outcomes)")
        #expect(outcomes.values.contains(0), "the largest limits run the share: \(outcomes)")
    }
}
