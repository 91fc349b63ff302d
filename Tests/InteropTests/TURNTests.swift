import Foundation
import TestSupport
import Testing

/// `--whip` through a TURN relay (coturn from Debian) when the network lets only some of it out:
/// rtcshare on side a of a `NetworkLab`, aiortc's WHIP server and coturn on side b, nftables on
/// side a deciding what leaves it. Each share must reach the server through the relay the
/// firewall leaves (the selected pair says which) with at least 95 % of the frames it sent after
/// connecting decoded by aiortc. Needs root, `ip`, `nft`, `turnserver` and aiortc.
@Suite(.serialized) struct TURNTests {
    static let unavailable: String? = {
        if let why = NetworkLab.unavailable { return "TURNTests skipped: \(why)" }
        if Tools.which("turnserver") == nil { return "TURNTests skipped: turnserver is not on PATH (scripts/setup installs coturn)" }
        return nil
    }()
    static let user = "alice", password = "relay-secret-1"

    /// A lab with aiortc and coturn on side b (coturn: long-term credentials, UDP and TCP on
    /// 3478, relaying on side b's address).
    final class TURNLab {
        let whip: OutageTests.WHIPLab
        private(set) var coturn: BackgroundProcess
        private let coturnArguments: [String]
        let credentialFile: String
        /// The CA a TLS lab's certificate is signed by.
        let caFile: String
        var lab: NetworkLab { whip.lab }
        var turn: String { whip.lab.b.address }

        /// With `tlsNamed`, coturn also takes TLS on TCP 443 with a certificate for that IP address,
        /// signed by a CA the test makes (`caFile`).
        init(name: String, net: UInt8, nonceLifetime: Int? = nil, tlsNamed: ((NetworkLab) -> String)? = nil,
             serverArguments: (NetworkLab) -> [String] = { _ in [] }) throws {
            whip = try OutageTests.WHIPLab(name: name, net: net, serverArguments: serverArguments)
            let dir = whip.dir
            caFile = dir.appendingPathComponent("ca.pem").path
            var tls = ["--no-tls"]
            if let tlsNamed {
                let (cert, key) = try TURNTests.makeCertificate(in: dir, ip: tlsNamed(whip.lab))
                tls = ["--tls-listening-port", "443", "--cert", cert, "--pkey", key]
            }
            var arguments = [
                "-n", "-v", "--no-cli", "--no-dtls", "-L", whip.lab.b.address, "--relay-ip", whip.lab.b.address,
                "-p", "3478", "--lt-cred-mech", "--user", "\(TURNTests.user):\(TURNTests.password)", "--realm", "rtcshare.test",
                "--log-file", "stdout", "--simple-log", "--pidfile", dir.appendingPathComponent("turnserver.pid").path,
                "--userdb", dir.appendingPathComponent("turndb").path,
            ] + tls
            if let nonceLifetime { arguments += ["--stale-nonce=\(nonceLifetime)"] }
            coturnArguments = arguments
            coturn = try Self.startCoturn(whip, arguments)
            credentialFile = dir.appendingPathComponent("turn-credential").path
            try (TURNTests.password + "\n").write(toFile: credentialFile, atomically: true, encoding: .utf8)
        }

        /// coturn started on side b, once it listens on TCP 3478 (it opens UDP at the same time).
        static func startCoturn(_ whip: OutageTests.WHIPLab, _ arguments: [String]) throws -> BackgroundProcess {
            let (exe, args) = whip.lab.command(in: whip.lab.b, Tools.which("turnserver")!, arguments)
            let coturn = try BackgroundProcess(exe, args, in: whip.dir, name: "coturn")
            var up = false
            try waitUntil(timeout: 10, interval: 0.1) {
                let (e, a) = whip.lab.command(in: whip.lab.b, "/bin/sh", ["-c", "ss -ltn | grep -q '\(whip.lab.b.address):3478 '"])
                up = (try? Tools.run(e, a, timeout: 5))?.status == 0
                return up || !coturn.isRunning
            }
            try #require(up, "coturn did not start: \(String(decoding: coturn.stdout, as: UTF8.self).suffix(1500))")
            return coturn
        }

        /// coturn killed (every allocation gone with it) and started again.
        func restartCoturn(after seconds: Double) throws {
            coturn.kill()
            _ = coturn.wait(timeout: 5)
            Thread.sleep(forTimeInterval: seconds)
            coturn = try Self.startCoturn(whip, coturnArguments)
        }

        deinit { coturn.stop(SIGTERM, timeout: 5) }

        /// nftables on side a: what may leave toward side b (`rules`, then everything else to b
        /// dropped when `dropRest`).
        func firewall(_ rules: [String], dropRest: Bool = true) throws {
            let nft = Tools.which("nft") ?? "/usr/sbin/nft"
            var script = "add table inet turnfw\nadd chain inet turnfw out { type filter hook output priority 0 ; policy accept ; }\n"
            for rule in rules { script += "add rule inet turnfw out \(rule)\n" }
            if dropRest { script += "add rule inet turnfw out ip daddr \(lab.b.address) drop\n" }
            let (exe, args) = lab.command(in: lab.a, nft, ["-f", "-"])
            let result = try Tools.run(exe, args, input: Data(script.utf8), timeout: 10)
            try #require(result.status == 0, "nft: \(result.stderr)")
        }

        /// The WHIP HTTP exchange may always go out (signalling is not what is blocked).
        var signalling: String { "ip daddr \(lab.b.address) tcp dport \(whip.server.port) accept" }

        func turnOptions(_ transports: [String]) -> [String] {
            transports.flatMap { ["--ice-server", "turn:\(turn):3478?transport=\($0)"] }
                + ["--ice-username", TURNTests.user, "--ice-credential-file", credentialFile]
        }

        /// Shares `seconds` of testsrc to session `id`; the exit status, stderr and the last stats.
        func share(_ id: String, seconds: Int, _ extra: [String]) throws -> (status: Int32?, log: String, frames: Int) {
            let stats = whip.dir.appendingPathComponent("\(id).json").path
            let process = try whip.share([
                "--whip", whip.server.base + "/whip/\(id)", "--size", "640x360", "--fps", "15", "--duration", "\(seconds)",
                "--stats-json", stats, "--audio", "none",
            ] + extra)
            defer { process.kill() }
            let status = process.wait(timeout: Double(seconds) + 40)
            // The closing line: "rtcshare: N frames in S s (…)".
            let line = process.stderr.split(separator: "\n").last { $0.hasPrefix("rtcshare: ") && $0.contains(" frames in ") }
            let frames = line.flatMap { Int($0.dropFirst("rtcshare: ".count).prefix { $0.isNumber }) } ?? 0
            return (status, process.stderr, frames)
        }

        /// Frames aiortc decoded of session `id`, once it is over.
        func decoded(_ id: String) throws -> Int {
            let summary = try whip.server.summary(finished: id)
            return ((summary["by_session"] as? [String: Any])?[id] as? [String: Any])?["video_frames"] as? Int ?? 0
        }

        func offer(_ id: String) throws -> String {
            ((try whip.server.summary())?["offers_by_session"] as? [String: Any])?[id] as? String ?? ""
        }
    }

    /// A CA (ca.pem in `dir`) and a server certificate for `ip` signed by it; (cert, key) paths.
    static func makeCertificate(in dir: URL, ip: String) throws -> (String, String) {
        let openssl = try #require(Tools.which("openssl"), "openssl is needed for the TLS tests")
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        try "subjectAltName=IP:\(ip)\n".write(toFile: path("san.ext"), atomically: true, encoding: .utf8)
        for arguments in [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("ca.key"),
             "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=rtcshare test CA"],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("turn.key"),
             "-out", path("turn.csr"), "-subj", "/CN=turn"],
            ["x509", "-req", "-in", path("turn.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-CAcreateserial",
             "-out", path("turn.pem"), "-days", "2", "-extfile", path("san.ext")],
        ] {
            let run = try Tools.run(openssl, arguments, timeout: 30)
            try #require(run.status == 0, "openssl \(arguments[0]): \(run.stderr)")
        }
        return (path("turn.pem"), path("turn.key"))
    }

    /// The selected pair in the log's "connected" line.
    static func path(_ log: String) -> String {
        log.split(separator: "\n").first { $0.contains("WHIP: connected") }.map { String($0) } ?? "(not connected)"
    }

    static func expectDelivered(_ lab: TURNLab, _ id: String, sent: Int, _ log: String) throws {
        let decoded = try lab.decoded(id)
        print("TURNTests \(id): \(path(log)); sent \(sent), aiortc decoded \(decoded)")
        #expect(sent > 0 && Double(decoded) >= 0.95 * Double(sent), "sent \(sent), decoded \(decoded): \(log)")
    }

    /// Only the TURN server's UDP port may be reached: media goes through TURN over UDP.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func onlyTheTURNServersUDPPortOpenRelaysOverUDP() throws {
        let lab = try TURNLab(name: "turnu", net: 91)
        try lab.firewall([lab.signalling, "ip daddr \(lab.turn) udp dport 3478 accept"])
        let run = try lab.share("udp", seconds: 6, lab.turnOptions(["udp"]))
        #expect(run.status == 0, "\(run.log)")
        #expect(Self.path(run.log).contains("via TURN/udp relay"), "\(run.log)")
        try Self.expectDelivered(lab, "udp", sent: run.frames, run.log)
    }

    /// Every UDP datagram dropped: of a UDP and a TCP TURN URI, the TCP one relays.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func allUDPDroppedRelaysOverTCP() throws {
        let lab = try TURNLab(name: "turnt", net: 90)
        try lab.firewall(["meta l4proto udp drop", lab.signalling, "ip daddr \(lab.turn) tcp dport 3478 accept"])
        let run = try lab.share("tcp", seconds: 6, lab.turnOptions(["udp", "tcp"]))
        #expect(run.status == 0, "\(run.log)")
        #expect(Self.path(run.log).contains("via TURN/tcp relay"), "\(run.log)")
        #expect(run.log.contains("turn:\(lab.turn):3478?transport=udp did not answer"), "\(run.log)")
        try Self.expectDelivered(lab, "tcp", sent: run.frames, run.log)
    }

    /// Only TCP 443 may leave (the port-filtering firewall of an office or a hotel): TURN over
    /// TLS on 443, its certificate checked against the CA the test made.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func onlyTCP443AllowedRelaysOverTLS() throws {
        let lab = try TURNLab(name: "turns", net: 84, tlsNamed: { $0.b.address })
        try lab.firewall([lab.signalling, "ip daddr \(lab.turn) tcp dport 443 accept"])
        let run = try lab.share("tls", seconds: 6, [
            "--ice-server", "turn:\(lab.turn):3478?transport=udp", "--ice-server", "turns:\(lab.turn):443",
            "--ice-username", TURNTests.user, "--ice-credential-file", lab.credentialFile, "--ice-ca", lab.caFile,
        ])
        #expect(run.status == 0, "\(run.log)")
        #expect(Self.path(run.log).contains("via TURN/tls relay"), "\(run.log)")
        try Self.expectDelivered(lab, "tls", sent: run.frames, run.log)
    }

    /// A certificate made for another address: one line, exit 78 (EX_CONFIG: another attempt
    /// meets the same certificate), and nothing relayed.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func aCertificateForAnotherNameIsRefusedInOneLine() throws {
        let lab = try TURNLab(name: "turnx", net: 83, tlsNamed: { _ in "192.0.2.77" })
        let run = try lab.share("badcert", seconds: 5, [
            "--ice-server", "turns:\(lab.turn):443", "--ice-username", TURNTests.user,
            "--ice-credential-file", lab.credentialFile, "--ice-ca", lab.caFile, "--ice-transport-policy", "relay",
        ])
        #expect(run.status == 78, "\(run.log)")
        let errors = run.log.split(separator: "\n").filter { $0.hasPrefix("rtcshare: error:") }
        #expect(errors.count == 1 && errors[0].contains("certificate does not verify"), "\(run.log)")
    }

    /// coturn killed mid-share and started again 3 s later, rtcshare relaying over TCP: the
    /// stream's end ends the path, the share reconnects with a new allocation, and aiortc decodes
    /// media captured after coturn came back within 10 s of it.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func aTURNServerKilledAndStartedAgainIsRelayedThroughAgain() throws {
        let lab = try TURNLab(name: "turnk", net: 82)
        try lab.firewall(["meta l4proto udp drop", lab.signalling, "ip daddr \(lab.turn) tcp dport 3478 accept"])
        let share = try lab.whip.share([
            "--whip", lab.whip.server.base + "/whip/kill", "--size", "640x360", "--fps", "15", "--duration", "40",
        ] + lab.turnOptions(["tcp"]))
        defer { share.kill() }
        try #require(share.waitForOutput(containing: "WHIP: connected", timeout: 20), "\(share.stderr)")
        usleep(3_000_000)
        try lab.restartCoturn(after: 3)
        let back = ReconnectLabTests.monotonic32()
        let took = try ReconnectLabTests.decodedAfter(back, lab.whip.server, "kill", timeout: 30)
        print("TURNTests kill: media captured after coturn came back decoded \(took.map { String(format: "%.1f", $0) } ?? "never") s after it")
        #expect(took.map { $0 <= 10 } == true, "\(share.stderr)")
        #expect(share.stderr.contains("rtcshare: reconnecting") && share.stderr.contains("TURN connection"), "\(share.stderr)")
        #expect(share.stop(SIGINT, timeout: 15) == 0, "\(share.stderr)")
    }

    /// Everything open, but relay-only: the offer names the relayed candidate alone and the
    /// selected pair is relayed.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func relayOnlyRelaysWhenEverythingIsOpen() throws {
        let lab = try TURNLab(name: "turnr", net: 89)
        let run = try lab.share("relay", seconds: 5, lab.turnOptions(["udp"]) + ["--ice-transport-policy", "relay"])
        #expect(run.status == 0, "\(run.log)")
        #expect(Self.path(run.log).contains("via TURN/udp relay"), "\(run.log)")
        let offer = try lab.offer("relay")
        #expect(offer.contains("typ relay") && !offer.contains("typ host") && !offer.contains("typ srflx"), "\(offer)")
        try Self.expectDelivered(lab, "relay", sent: run.frames, run.log)
    }

    /// No TURN option at all: the answer's `Link` header names the TURN server with its
    /// credentials, and with only that server's UDP port open the share relays through it.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func theTURNServerTheAnswerNamesIsUsed() throws {
        let lab = try TURNLab(name: "turnl", net: 88, serverArguments: { lab in
            ["--link", "<turn:\(lab.b.address):3478?transport=udp>; rel=\"ice-server\"; username=\"\(TURNTests.user)\"; "
                + "credential=\"\(TURNTests.password)\"; credential-type=\"password\""]
        })
        try lab.firewall([lab.signalling, "ip daddr \(lab.turn) udp dport 3478 accept"])
        let run = try lab.share("link", seconds: 6, [])
        #expect(run.status == 0, "\(run.log)")
        #expect(Self.path(run.log).contains("via TURN/udp relay"), "\(run.log)")
        #expect(run.log.contains("credential <redacted>) — used") && !run.log.contains(TURNTests.password), "\(run.log)")
        try Self.expectDelivered(lab, "link", sent: run.frames, run.log)
    }

    /// A gateway through the C ABI (`examples/whip_publish.c`): `whip_ice_servers` with the TURN
    /// server's credentials and relay-only: the session relays, and the events say so.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func aGatewayRelaysThroughTheCABI() throws {
        let lab = try TURNLab(name: "turnc", net: 85)
        let example = try CABIExampleTests.compileExample("whip_publish", into: lab.whip.dir)
        let (exe, args) = lab.lab.command(in: lab.lab.a, example, [
            lab.whip.server.base + "/whip/cabi", "5", "\(lab.lab.a.address):0", "vp8", "", "-1",
            "turn:\(lab.turn):3478?transport=udp", TURNTests.user, TURNTests.password, "relay",
        ])
        let run = try Tools.run(exe, args, timeout: 60)
        let log = String(decoding: run.stdout, as: UTF8.self)
        #expect(run.status == 0, "\(log)\n\(run.stderr)")
        #expect(log.contains("WHIP: connected") && log.contains("via TURN/udp relay"), "\(log)")
        #expect(!log.contains(TURNTests.password), "the credential is never printed")
        let decoded = try lab.decoded("cabi")
        #expect(decoded >= 40, "aiortc decoded \(decoded) frames of 5 s: \(log)")
    }

    /// Wrong credentials: one line and exit 77 (EX_NOPERM), not retried. A TURN server that
    /// is not there (relay-only, no reconnect): one line and exit 75 (EX_TEMPFAIL).
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func wrongCredentialsAndAnUnreachableServerAreOneLineEachWithTheirExitCodes() throws {
        let lab = try TURNLab(name: "turne", net: 87)
        let bad = lab.whip.dir.appendingPathComponent("bad").path
        try "not-the-password\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let wrong = try lab.share("wrong", seconds: 5, [
            "--ice-server", "turn:\(lab.turn):3478?transport=tcp", "--ice-username", TURNTests.user,
            "--ice-credential-file", bad, "--ice-transport-policy", "relay",
        ])
        #expect(wrong.status == 77, "\(wrong.log)")
        let errors = wrong.log.split(separator: "\n").filter { $0.hasPrefix("rtcshare: error:") }
        #expect(errors.count == 1 && errors[0].contains("refused the username and password"), "\(wrong.log)")

        let away = try lab.share("away", seconds: 5, [
            "--ice-server", "turn:\(lab.turn):3479?transport=tcp", "--ice-username", TURNTests.user,
            "--ice-credential-file", lab.credentialFile, "--ice-transport-policy", "relay", "--reconnect", "off",
        ])
        #expect(away.status == 75, "\(away.log)")
        let lines = away.log.split(separator: "\n").filter { $0.hasPrefix("rtcshare: error:") }
        #expect(lines.count == 1 && lines[0].contains("3479") && lines[0].contains("cannot be reached"), "\(away.log)")
    }

    /// A share of 100 s that refreshes its allocation every 10 s (it asks for 20 s; coturn, as
    /// RFC 8656 §7.2 has it, grants its 600 s default to a shorter request, so no server-side
    /// setting can make an allocation expire sooner), with coturn's nonces lasting 15 s: every
    /// refresh after the first meets 438 Stale Nonce and is sent again with the new nonce. The
    /// allocation and the path through it hold: no reconnect, and the frames arrive.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func refreshesWithStaleNoncesKeepTheAllocationAlive() throws {
        let lab = try TURNLab(name: "turnf", net: 86, nonceLifetime: 15)
        let run = try lab.share("long", seconds: 100,
                                lab.turnOptions(["udp"]) + ["--ice-transport-policy", "relay", "--turn-lifetime", "20"])
        #expect(run.status == 0, "\(run.log)")
        #expect(!run.log.contains("reconnecting"), "the allocation held: \(run.log)")
        let log = String(decoding: lab.coturn.stdout, as: UTF8.self)
        let refreshes = log.split(separator: "\n").filter { $0.contains("REFRESH processed, success") }.count
        let stale = log.split(separator: "\n").filter { $0.contains("438") || $0.lowercased().contains("stale") }.count
        print("TURNTests long: coturn logged \(refreshes) successful refreshes, \(stale) stale-nonce lines")
        #expect(refreshes >= 8, "coturn: \(log.suffix(2000))")
        try Self.expectDelivered(lab, "long", sent: run.frames, run.log)
    }
}
