import Foundation
import TestSupport
import Testing

/// `rtcshare --whip` against a real WebRTC endpoint: aiortc behind the WHIP server of
/// `Tests/Peers/whip_server.py` on 127.0.0.1, which decodes what it receives and reads the
/// frame marker of every picture. ICE, DTLS-SRTP, RTP/RTCP and the WHIP exchange are all real.
@Suite(.serialized) struct WHIPInteropTests {
    /// The server process, one for the suite; it writes its JSON summary when stopped.
    final class Server {
        let process: BackgroundProcess
        let port: Int
        let dir: URL

        /// `port` 0: any free one.
        init(port wanted: Int = 0) throws {
            dir = try Tools.temporaryDirectory()
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Peers/whip_server.py").path
            let portFile = dir.appendingPathComponent("port").path
            let server = try BackgroundProcess(Tools.which("python3") ?? "/usr/bin/python3", [
                script, "--port-file", portFile, "--summary", dir.appendingPathComponent("summary.json").path,
                "--port", String(wanted),
            ], in: dir, name: "whip-server")
            process = server
            var found: Int?
            waitUntil(timeout: 30, interval: 0.05) {
                found = (try? String(contentsOfFile: portFile, encoding: .utf8))
                    .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                return found != nil || !server.isRunning
            }
            guard let found else {
                throw Tools.DecodeError(message: "whip_server.py did not start (scripts/setup installs aiortc): \(process.stderr.suffix(600))")
            }
            port = found
        }

        var base: String { "http://127.0.0.1:\(port)" }

        /// The summary so far, from GET /summary (python's urllib: no HTTP client of our own here).
        /// A fetch that fails is tried again until `timeout` passes (a busy machine only makes it
        /// slower); then the error says what the last one got.
        func summary(timeout: TimeInterval = 60) throws -> [String: Any] {
            var object: [String: Any]?
            var failure = ""
            try waitUntil(timeout: timeout, interval: 0.5) {
                let fetch = try Tools.run(Tools.which("python3") ?? "/usr/bin/python3", [
                    "-c", "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=15).read().decode())",
                    base + "/summary",
                ], timeout: 20)
                object = fetch.status == 0 ? (try? JSONSerialization.jsonObject(with: fetch.stdout)) as? [String: Any] : nil
                if object == nil {
                    failure = "status \(fetch.status), \(fetch.stdout.count) bytes: \(fetch.stderr.suffix(400))"
                }
                return object != nil
            }
            guard let object else { throw Tools.Failure(message: "GET /summary failed: \(failure)") }
            return object
        }

        /// The summary once session `id` is over: closed by its DELETE and every frame it received
        /// decoded and counted (aiortc's decoding lags on a busy machine, by a minute and more
        /// for a 720p share while others decode; the server lists the session under "finished"
        /// then, or "unfinished" after 300 s). The counts read before would be partial.
        func summary(finished id: String, timeout: TimeInterval = 320) throws -> [String: Any] {
            var summary: [String: Any] = [:]
            func listed(_ key: String) -> Bool { (summary[key] as? [String] ?? []).contains(id) }
            try waitUntil(timeout: timeout, interval: 0.5) {
                summary = try self.summary()
                return listed("finished") || listed("unfinished")
            }
            try #require(listed("finished"), "session \(id) did not finish decoding: \(summary["deletes"] ?? "")")
            return summary
        }

        deinit {
            process.stop(SIGTERM)
            try? FileManager.default.removeItem(at: dir)
        }
    }

    nonisolated(unsafe) static let server: Result<Server, Error> = Result { try Server() }

    /// Runs `rtcshare ARGS` to completion; (status, stderr, last stats line).
    static func share(_ arguments: [String], seconds: Double, in dir: URL) throws -> (Int32, String, [String: Any]) {
        let json = dir.appendingPathComponent("tx-\(UUID().uuidString).json").path
        let result = try Tools.run(Tools.rtcshare, arguments + ["--stats-json", json], timeout: seconds + 40)
        let last = ((try? String(contentsOfFile: json, encoding: .utf8)) ?? "").split(separator: "\n").last.map(String.init) ?? "{}"
        let stats = (try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]) ?? [:]
        return (result.status, result.stderr, stats)
    }

    /// Seconds between the capture times (marker row 2, 32-bit µs, taken modulo 2^32) of the
    /// first and last frames a session decoded with a readable marker.
    static func captureSpan(_ own: [String: Any]) -> Double {
        let times = (own["markers"] as? [[Int]] ?? []).map { $0[1] }
        guard let first = times.first, let last = times.last else { return 0 }
        return Double((last - first) & 0xFFFF_FFFF) / 1e6
    }

    /// The "audio N packets" figure of rtcshare's summary line.
    static func audioSent(_ stderr: String) -> Int? {
        guard let line = stderr.split(separator: "\n").last(where: { $0.contains(" frames in ") }),
              let range = line.range(of: "; audio ") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }

    static func framesSent(_ stderr: String) -> Int? {
        // The summary line: "rtcshare: N frames in S s (...)".
        guard let line = stderr.split(separator: "\n").last(where: { $0.contains(" frames in ") }) else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }

    /// libcurl (and its GnuTLS/Kerberos/LDAP/SSH chain) is needed for the POST and the DELETE
    /// only: between them it is not mapped in the process at all, and the DELETE still goes out.
    @Test func libcurlIsUnloadedBetweenThePostAndTheDelete() throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let share = try BackgroundProcess(Tools.rtcshare, [
            "--whip", server.base + "/whip/curlgone", "--whip-bind", "127.0.0.1:0",
            "--size", "640x360", "--fps", "20", "--duration", "4",
        ], in: dir, name: "rtcshare")
        let pid = share.process.processIdentifier
        // Read to the end of file: /proc files say they are empty, and one read gives a page.
        func maps() -> String {
            String(decoding: FileHandle(forReadingAtPath: "/proc/\(pid)/maps")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        }
        #expect(waitUntil(timeout: 20, interval: 0.05) { share.stderr.contains("WHIP: connected") || !share.isRunning },
                "\(share.stderr)")
        let during = maps()
        #expect(share.wait(timeout: 30) == 0, "\(share.stderr)")
        #expect(during.contains("libssl.so"), "DTLS keeps OpenSSL mapped: \(during.count) bytes of maps")
        #expect(!during.contains("libcurl.so"), "libcurl is still mapped while the share runs")
        #expect(!during.contains("libgnutls"), "libcurl's chain is still mapped while the share runs")
        let deletes = try server.summary()["deletes"] as? [String] ?? []
        #expect(deletes.contains("curlgone"), "the DELETE went out with libcurl loaded again: \(deletes)")
    }

    @Test func aTenSecondShareWithAudioIsDecodedUprightByAiortcAndDeletedAtTheEnd() throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let seconds = 10
        let (status, log, stats) = try Self.share([
            "--whip", server.base + "/whip/share10", "--whip-bind", "127.0.0.1:0",
            "--size", "1280x720", "--fps", "20", "--audio", "testtone", "--duration", "\(seconds)",
            "--simulate-orientation", "6", "--mem-cap", "64M",
        ], seconds: Double(seconds), in: dir)
        #expect(status == 0, "rtcshare: \(log)")
        #expect(log.contains("WHIP: connected"), "\(log)")
        // aiortc keeps the MID extension: every packet below carried its section's mid.
        #expect(log.contains("extensions: urn:ietf:params:rtp-hdrext:sdes:mid"), "\(log)")
        let summary = try server.summary(finished: "share10")
        let deletes = summary["deletes"] as? [String] ?? []
        #expect(deletes.contains("share10"), "the resource was DELETEd: \(summary["deletes"] ?? "")")
        let encoded = try #require(Self.framesSent(log), "\(log)")
        let notSent = stats["frames_dropped_connecting"] as? Int ?? 0
        // This session's figures: other tests share the server.
        let own = (summary["by_session"] as? [String: Any])?["share10"] as? [String: Any] ?? [:]
        let decoded = own["video_frames"] as? Int ?? 0
        let sizes = own["sizes"] as? [String: Int] ?? [:]
        // The frames of the connection's set-up are not encoded (nobody could receive them).
        let notEncoded = stats["not_encoded_connecting"] as? Int ?? 0
        let span = Self.captureSpan(own)
        let audioSent = Self.audioSent(log) ?? 0, audioDecoded = own["audio_frames"] as? Int ?? 0
        print("WHIP 720p: encoded \(encoded), \(notEncoded) not encoded connecting, \(notSent) not sent; aiortc decoded \(decoded), capture span \(span) s; audio \(audioDecoded) decoded of \(audioSent)")
        // aiortc hands a frame on when the next one starts: the last one stays with it.
        #expect(Double(decoded) >= 0.95 * Double(encoded - notSent), "aiortc decoded \(decoded) of \(encoded - notSent) sent")
        // The share ran its 10 s: the decoded frames' capture times span them, less the
        // connection's set-up (3 s allowed: aiortc's side is Python, slow on a busy machine).
        // The count is not a speed figure (720p beside other shares on a loaded machine encodes
        // 10 fps): at least a quarter of 10 s at 20 fps, counting those not encoded while
        // connecting — a moving share, not a few stills.
        #expect(span >= Double(seconds) - 3, "the decoded frames' capture times span \(span) s")
        #expect(encoded + notEncoded >= seconds * 20 / 4, "encoded \(encoded), \(notEncoded) before connecting")
        #expect(sizes == ["1280x720": decoded], "\(sizes)")
        // Turned at the source (orientation 6): every marker readable, counters in order (a
        // repeated frame, sent while the screen is static, carries the same counter).
        #expect(own["markers_read"] as? Int == decoded, "markers read \(own["markers_read"] ?? "") of \(decoded)")
        #expect(own["codec"] as? String == "video/VP8", "auto offers VP8 first and aiortc keeps it: \(own)")
        let counters = (own["markers"] as? [[Int]] ?? []).map { $0[0] }
        #expect(zip(counters, counters.dropFirst()).allSatisfy { $0 <= $1 }, "counters out of order")
        // The Opus packets sent were decoded (aiortc's jitter buffer may keep the last few), and
        // the tone went out all along: at least half its 50 packets a second (the audio pump
        // skips what can no longer be on time when the pipeline falls half a second behind).
        #expect(Double(audioDecoded) >= 0.9 * Double(audioSent), "Opus frames decoded: \(audioDecoded) of \(audioSent)")
        #expect(audioSent >= seconds * 50 / 2, "Opus packets sent: \(audioSent)")
    }

    /// H.264 over WHIP: `--codec h264` offers only H.264 to the usual endpoint; the default
    /// (`auto`) offers VP8 then H.264 to an endpoint that takes only H.264 (as Broadcast Box or a
    /// SIP gateway does) and goes with its answer. aiortc decodes every picture, markers upright.
    @Test(arguments: [("/whip/h264-asked", ["--codec", "h264"]), ("/whip-h264/h264-only-server", [])])
    func anH264ShareIsDecodedByAiortc(path: String, extra: [String]) throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let seconds = 10
        let (status, log, stats) = try Self.share([
            "--whip", server.base + path, "--whip-bind", "127.0.0.1:0",
            "--size", "640x360", "--fps", "20", "--duration", "\(seconds)", "--simulate-orientation", "6",
        ] + extra, seconds: Double(seconds), in: dir)
        #expect(status == 0, "rtcshare: \(log)")
        #expect(log.contains("WHIP: video H264/"), "\(log)")
        #expect(log.contains("-> H.264 640x360"), "\(log)")
        #expect(stats["codec"] as? String == "h264", "\(stats)")
        // This share's own offer (another test case may have posted since).
        let id = String(path.split(separator: "/").last!)
        let summary = try server.summary(finished: id)
        let offer = try #require((summary["offers_by_session"] as? [String: String])?[id])
        #expect(offer.contains("H264/90000") && offer.contains("packetization-mode=1"))
        #expect(offer.contains("VP8/90000") == extra.isEmpty, "auto offers VP8 too, h264 only H.264")
        let own = try #require((summary["by_session"] as? [String: Any])?[id] as? [String: Any], "\(summary["by_session"] ?? "")")
        #expect(own["codec"] as? String == "video/H264", "\(own)")
        let encoded = try #require(Self.framesSent(log), "\(log)")
        let notSent = stats["frames_dropped_connecting"] as? Int ?? 0
        let decoded = own["video_frames"] as? Int ?? 0
        // The frames of the connection's set-up are not encoded (nobody could receive them).
        let notEncoded = stats["not_encoded_connecting"] as? Int ?? 0
        let span = Self.captureSpan(own)
        print("WHIP H.264 \(id): encoded \(encoded), \(notEncoded) not encoded connecting, \(notSent) not sent; aiortc decoded \(decoded), capture span \(span) s")
        #expect(Double(decoded) >= 0.95 * Double(encoded - notSent), "aiortc decoded \(decoded) of \(encoded - notSent) sent")
        // As the VP8 share: it ran its 10 s (capture span, 3 s of set-up allowed), and the count
        // is at least a quarter of 10 s at 20 fps, not a speed figure.
        #expect(span >= Double(seconds) - 3, "the decoded frames' capture times span \(span) s")
        #expect(encoded + notEncoded >= seconds * 20 / 4, "encoded \(encoded), \(notEncoded) before connecting")
        #expect(own["sizes"] as? [String: Int] == ["640x360": decoded], "\(own)")
        #expect(own["markers_read"] as? Int == decoded, "markers read \(own["markers_read"] ?? "") of \(decoded)")
    }

    /// An endpoint that takes only H.264 refuses a VP8-only offer: one clear line, no share.
    @Test func aVP8OnlyOfferToAnH264OnlyServerFailsClearly() throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (status, log, _) = try Self.share([
            "--whip", server.base + "/whip-h264/vp8-refused", "--whip-bind", "127.0.0.1:0",
            "--size", "320x180", "--duration", "3", "--codec", "vp8",
        ], seconds: 3, in: dir)
        #expect(status != 0)
        let errors = log.split(separator: "\n").filter { $0.hasPrefix("rtcshare: error:") }
        #expect(errors.count == 1 && errors[0].contains("400"), "\(log)")
    }

    /// Through the C ABI, with the default codec (VP8 offered first, kept) and with
    /// `video_codec = RTCSHARE_CODEC_H264`.
    @Test(arguments: [("cabi", "auto", "vp8"), ("cabi-h264", "h264", "h264")])
    func aGatewayPublishesThroughTheCABI(id: String, codec: String, expected: String) throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let example = try CABIExampleTests.compileExample("whip_publish", into: dir)
        let run = try Tools.run(example, [server.base + "/whip/\(id)", "5", "127.0.0.1:0", codec], timeout: 40)
        let log = String(decoding: run.stdout, as: UTF8.self)
        #expect(run.status == 0, "\(log)\n\(run.stderr)")
        #expect(log.contains("codec \(expected)\n"), "\(log)")
        #expect(log.contains("event 8: WHIP: connected"), "\(log)")
        #expect(log.contains("event 9: duration reached"), "\(log)")
        let summary = try server.summary(finished: id)
        #expect((summary["deletes"] as? [String] ?? []).contains(id))
        let own = (summary["by_session"] as? [String: Any])?[id] as? [String: Any] ?? [:]
        #expect(own["codec"] as? String == (expected == "h264" ? "video/H264" : "video/VP8"), "\(own)")
        let encoded = log.split(separator: "\n").last { $0.hasPrefix("ok;") }
            .flatMap { line in line.split(separator: " ").firstIndex(of: "encoded").map { Int(line.split(separator: " ")[$0 + 1]) ?? 0 } } ?? 0
        let decoded = own["video_frames"] as? Int ?? 0
        print("WHIP C ABI \(id): encoded \(encoded); aiortc decoded \(decoded), capture span \(Self.captureSpan(own)) s")
        // What the session encoded reached the server (aiortc keeps the last frame), and it is a
        // moving share, not a few stills: at least a quarter of 5 s at 20 fps. Not a speed
        // figure: a loaded machine encodes fewer (the connection's set-up takes 2–6 frames on
        // an idle one).
        #expect(Double(decoded) >= 0.95 * Double(encoded), "aiortc decoded \(decoded) of \(encoded)")
        #expect(encoded >= 25, "\(log)")
    }

    /// `whip_stun` through the C ABI: the STUN server is asked before the offer (here one that
    /// never answers: a loopback port nobody reads), said so in a notice, and the publication
    /// goes on with host candidates.
    @Test func aGatewaySetsASTUNServerThroughTheCABI() throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let silent = try Tools.freeUDPPorts(count: 1)
        let example = try CABIExampleTests.compileExample("whip_publish", into: dir)
        let run = try Tools.run(example, [server.base + "/whip/cabi-stun", "3", "127.0.0.1:0", "vp8",
                                          "127.0.0.1:\(silent)"], timeout: 40)
        let log = String(decoding: run.stdout, as: UTF8.self)
        #expect(run.status == 0, "\(log)\n\(run.stderr)")
        let stunLine = log.split(separator: "\n").first { $0.hasPrefix("event 8: ") && $0.contains("127.0.0.1:\(silent)") }
        #expect(stunLine != nil, "the STUN server was asked and the notice names it: \(log)")
        #expect(log.contains("event 8: WHIP: connected"), "\(log)")
        #expect(log.contains("event 9: duration reached"), "\(log)")
        // A bad address is refused at create, with the detail.
        let bad = try Tools.run(example, [server.base + "/whip/cabi-stun-bad", "3", "127.0.0.1:0", "vp8", "no-port"],
                                timeout: 20)
        #expect(bad.status == 1, "\(String(decoding: bad.stdout, as: UTF8.self))\(bad.stderr)")
    }

    /// Each way a publication fails reaches a C caller as its own status code (here as the
    /// code's message, which whip_publish prints), the detail in the session's last error.
    /// (A refusal at create has no session to hold the detail: the code alone says it.)
    /// Each code says whether the failure may pass (`rtcshare_status_is_temporary`, which
    /// whip_publish prints as "temporary").
    @Test(arguments: [("/status/401", "the WHIP server refused the token (permanent)", nil),
                      ("/status/404", "the WHIP exchange with the server failed: it refused the configuration", nil),
                      ("/status/500", "the WHIP exchange with the server failed for now", nil),
                      ("/retry-after/503/9", "try again later (temporary", nil),
                      ("/whip-dead-ice/cabi-dead-ice", "no ICE path to the server", "ICE: no candidate pair"),
                      ("/whip-bad-fingerprint/cabi-bad-fp", "DTLS with the server failed and cannot work", "DTLS: ")])
    func eachFailureReachesTheCABIAsItsOwnCode(path: String, message: String, detail: String?) throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let example = try CABIExampleTests.compileExample("whip_publish", into: dir)
        // Longer than the 10 s ICE connect timeout: the share must end by failing, not by time
        // (whip_reconnect -1: the first failure ends it; retries have tests of their own).
        let run = try Tools.run(example, [server.base + path, "20", "127.0.0.1:0", "auto", "", "-1"], timeout: 60)
        let log = String(decoding: run.stdout, as: UTF8.self) + run.stderr
        #expect(run.status == 1, "\(log)")
        #expect(log.contains(message), "\(log)")
        if let detail { #expect(log.contains(": " + detail), "\(log)") }
        let temporary = path.contains("500") || path.contains("503") || path.contains("dead-ice")
        #expect(log.contains("temporary") == temporary, "\(log)")
    }

    @Test(arguments: [("/status/401", "401"), ("/status/404", "404"), ("/status/500", "500"),
                      ("/no-location", "Location")])
    func httpErrorsEndTheShareWithOneClearLine(path: String, expected: String) throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tokenFile = dir.appendingPathComponent("token").path
        let token = "sekrit-\(UUID().uuidString)"
        try (token + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let (status, log, _) = try Self.share([
            "--whip", server.base + path, "--token-file", tokenFile, "--size", "640x360", "--duration", "3",
            "--reconnect", "off",
        ], seconds: 3, in: dir)
        #expect(status != 0)
        let errors = log.split(separator: "\n").filter { $0.contains("error") }
        #expect(errors.count == 1 && errors[0].contains(expected), "\(log)")
        #expect(!log.contains(token), "the token never reaches the output")
    }

    @Test func theTokenIsSentButNeverPrinted() throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let token = "visible-\(UUID().uuidString)"
        // The server answers 401 with the Authorization header it got in its body.
        let (status, log, _) = try Self.share([
            "--whip", server.base + "/echo-auth", "--token", token, "--size", "640x360", "--duration", "3",
        ], seconds: 3, in: dir)
        #expect(status != 0)
        #expect(log.contains("401"), "\(log)")
        #expect(!log.contains(token), "a server echoing the token does not make us print it: \(log)")
    }

    @Test func aServerCertificateThatIsNotTheAnsweredOneIsRefused() throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (status, log, stats) = try Self.share([
            "--whip", server.base + "/whip-bad-fingerprint/badfp", "--whip-bind", "127.0.0.1:0",
            "--size", "640x360", "--duration", "8", "--reconnect", "off",
        ], seconds: 8, in: dir)
        #expect(status != 0)
        #expect(log.contains("DTLS") && log.lowercased().contains("fingerprint"), "\(log)")
        #expect((stats["packets"] as? Int ?? 0) == 0, "no media left unprotected or to the wrong peer: \(stats)")
        let deletes = try server.summary()["deletes"] as? [String] ?? []
        #expect(deletes.contains("badfp"), "the refused session is deleted")
    }

    /// With `--reconnect off`, a server that goes mid-share ends the share with one line: here
    /// at its next packet, as the host answers ICMP port unreachable for the closed port (a
    /// server whose packets are dropped instead loses consent: `OutageTests`).
    @Test func aServerThatDisappearsMidShareEndsItWhenNotReconnecting() throws {
        // A server of its own, killed while the share runs.
        let server = try Server()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let share = try BackgroundProcess(Tools.rtcshare, [
            "--whip", server.base + "/whip/gone", "--whip-bind", "127.0.0.1:0", "--size", "640x360",
            "--duration", "30", "--consent-timeout", "4", "--reconnect", "off",
        ], in: dir, name: "share")
        defer { share.kill() }
        try #require(share.waitForOutput(containing: "WHIP: connected", timeout: 15), "\(share.stderr)")
        // A fixed wait on purpose: the scenario is a server that goes while media flows, not
        // one that goes at the moment of connecting.
        usleep(1_000_000)
        server.process.kill()  // SIGKILL: no DELETE, no close_notify
        let killedAt = Date()
        let status = share.wait(timeout: 20)
        let took = Date().timeIntervalSince(killedAt)
        #expect(status != nil && status != 0, "\(share.stderr)")
        #expect(share.stderr.contains("port is closed"), "\(share.stderr)")
        #expect(!share.stderr.contains("reconnecting"), "\(share.stderr)")
        #expect(took < 9, "ended \(took) s after the server went")
    }

    @Test func aServerWhoseCandidatesNeverAnswerTimesOutClearly() throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let started = Date()
        let (status, log, _) = try Self.share([
            "--whip", server.base + "/whip-dead-ice/deadice", "--whip-bind", "127.0.0.1:0",
            "--size", "640x360", "--duration", "20", "--ice-timeout", "3", "--reconnect", "off",
        ], seconds: 20, in: dir)
        let took = Date().timeIntervalSince(started)
        #expect(status != 0)
        #expect(log.contains("ICE"), "\(log)")
        #expect(took < 8, "gave up after \(took) s with --ice-timeout 3")
        let deletes = try server.summary()["deletes"] as? [String] ?? []
        #expect(deletes.contains("deadice"), "the failed session is deleted")
    }

    /// The answer's Link headers name a STUN server (listed, not used: it came after the offer's
    /// candidates) and a TURN server with credentials (used: an allocation is tried on it; here
    /// nothing that takes these credentials answers there), and the share goes on directly.
    @Test func iceServersInTheLinkHeaderAreTriedOrListedAndTheShareGoesOn() throws {
        let server = try Self.server.get()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (status, log, _) = try Self.share([
            "--whip", server.base + "/whip-links/links", "--whip-bind", "127.0.0.1:0", "--size", "640x360", "--duration", "3",
        ], seconds: 3, in: dir)
        #expect(status == 0, "\(log)")
        #expect(log.contains("WHIP: connected"), "\(log)")
        let notices = log.split(separator: "\n").filter { $0.contains("WHIP: ICE server") }
        #expect(notices.count == 2, "\(log)")
        #expect(notices.first { $0.contains("stun:127.0.0.1:3478") }?.contains("not used") == true, "\(notices)")
        #expect(notices.first { $0.contains("turn:127.0.0.1:3478?transport=udp") }?
            .contains("(username user, credential <redacted>) — used") == true, "\(notices)")
        #expect(log.contains("WHIP: TURN in"), "the allocation was tried: \(log)")
        #expect(!log.contains("pass word"), "the TURN credential is never printed")
    }

    @Test(arguments: [
        (["--whip", "http://127.0.0.1:9/whip/x", "--stun", "stun.example.net:3478"], "numeric IPv4"),
        (["--whip", "http://127.0.0.1:9/whip/x", "--stun", "10.0.0.1:0"], "numeric IPv4"),
        (["--whip", "http://127.0.0.1:9/whip/x", "--stun", "[::1]:3478"], "numeric IPv4"),
        (["--stun", "10.0.0.1:3478", "--output", "/dev/null"], "--stun needs --whip URL"),
    ])
    func aBadStunOptionIsOneLineAndExitTwo(arguments: [String], expected: String) throws {
        // Refused while reading the command line: nothing is resolved, nothing is sent.
        let run = try Tools.run(Tools.rtcshare, arguments + ["--duration", "1"], timeout: 20)
        #expect(run.status == 2, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains(expected), "\(run.stderr)")
    }
}
