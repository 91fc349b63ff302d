import Foundation
import TestSupport
import Testing

/// `rtcshare --whip` into a real Janus VideoRoom behind simple-whip-server, and a real subscriber
/// (aiortc over Janus's HTTP API, `Tests/Peers/janus_subscriber.py`) that decodes what Janus
/// forwards. Janus gathers no candidates on loopback, so everything runs in a network namespace
/// of the test's own: a veth pair 10.99.0.1/32 ↔ 10.99.0.2/32, no routes, IPv6 off; only those
/// addresses are ever contacted. Needs root, `ip`, `janus`, node and the simple-whip-server
/// unpacked by `scripts/setup` into `.peers/`; without them the test is skipped and says why.
@Suite(.serialized) struct JanusWHIPTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let whipServer = repo.appendingPathComponent(".peers/simple-whip-server")
    static let room = 1234
    static let janusAddress = "10.99.0.1"

    /// Why the test cannot run here, or nil.
    static let unavailable: String? = {
        if geteuid() != 0 { return "JanusWHIPTests skipped: network namespaces need root" }
        for tool in ["ip", "janus", "node", "python3"] where Tools.which(tool) == nil {
            return "JanusWHIPTests skipped: \(tool) is not on PATH (scripts/setup installs janus)"
        }
        if !FileManager.default.fileExists(atPath: whipServer.appendingPathComponent(".complete").path) {
            return "JanusWHIPTests skipped: simple-whip-server is not unpacked in .peers/ (run scripts/setup)"
        }
        if janusLibraries == nil { return "JanusWHIPTests skipped: no /usr/lib/<arch>/janus/plugins" }
        // A container without CAP_SYS_ADMIN cannot make namespaces: say so instead of failing.
        let ip = Tools.which("ip") ?? "/usr/sbin/ip", probe = "rtcshare-probe-\(getpid())"
        guard let made = try? Tools.run(ip, ["netns", "add", probe], timeout: 10), made.status == 0 else {
            return "JanusWHIPTests skipped: cannot create a network namespace here (ip netns add failed)"
        }
        _ = try? Tools.run(ip, ["netns", "del", probe], timeout: 10)
        return nil
    }()

    /// `/usr/lib/<multiarch triplet>/janus`, where the Debian package puts its plugins.
    static let janusLibraries: String? = multiarch("/usr/lib", "janus/plugins").map { "\($0)/janus" }

    /// The first `root/*` folder holding `sub` (the multiarch triplet differs per machine).
    static func multiarch(_ root: String, _ sub: String) -> String? {
        let dirs = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return dirs.sorted().map { "\(root)/\($0)" }.first {
            FileManager.default.fileExists(atPath: "\($0)/\(sub)")
        }
    }

    /// A network namespace with a veth pair; deleted (with everything in it) by `remove()`.
    struct Namespace {
        let name: String
        let ip = Tools.which("ip") ?? "/usr/sbin/ip"

        init() throws {
            // One per test, not per process: JanusWHIPTests and JanusReconnectTests run at once,
            // and a shared name let one test's set-up delete the namespace another's share ran in.
            name = "rtcshare-janus-\(getpid())-\(UInt32.random(in: 0 ... 0xFFFF_FFFF))"
            for arguments in [
                ["netns", "add", name],
                ["netns", "exec", name, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                 "net.ipv6.conf.default.disable_ipv6=1"],
                ["-n", name, "link", "add", "rtsj0", "type", "veth", "peer", "name", "rtsj1"],
                ["-n", name, "addr", "add", "10.99.0.1/32", "dev", "rtsj0"],
                ["-n", name, "addr", "add", "10.99.0.2/32", "dev", "rtsj1"],
                ["-n", name, "link", "set", "lo", "up"],
                ["-n", name, "link", "set", "rtsj0", "up"],
                ["-n", name, "link", "set", "rtsj1", "up"],
            ] {
                let result = try Tools.run(ip, arguments, timeout: 10)
                guard result.status == 0 else {
                    remove()
                    throw Tools.DecodeError(message: "ip \(arguments.joined(separator: " ")): \(result.stderr)")
                }
            }
        }

        /// `ip netns exec NAME executable arguments…` (ip execs, so the pid is the program's).
        func exec(_ executable: String, _ arguments: [String]) -> (String, [String]) {
            (ip, ["netns", "exec", name, executable] + arguments)
        }

        func remove() { _ = try? Tools.run(ip, ["netns", "del", name], timeout: 10) }
    }

    /// Janus's configuration: the VideoRoom plugin with one VP8/Opus room, the WebSocket (for
    /// simple-whip-server) and HTTP (for the subscriber) transports on 10.99.0.1, ICE on the veth.
    /// With `relayedPorts`, ICE takes its ports from that range, advertises them on 127.0.0.1
    /// (where relays listen) and is ICE-lite (it answers checks and never sends its own, so
    /// nothing bypasses the relays).
    static func writeJanusConfig(to dir: URL, relayedPorts: ClosedRange<Int>? = nil) throws {
        let lib = try #require(janusLibraries)
        let libs = { (folder: String, keep: [String]) -> String in
            let all = (try? FileManager.default.contentsOfDirectory(atPath: "\(lib)/\(folder)")) ?? []
            return all.filter { $0.hasSuffix(".so") && !keep.contains($0) }.sorted().joined(separator: ",")
        }
        let files = [
            "janus.jcfg": """
            general: {
            \tconfigs_folder = "\(dir.path)"
            \tplugins_folder = "\(lib)/plugins"
            \ttransports_folder = "\(lib)/transports"
            \tevents_folder = "\(lib)/events"
            \tloggers_folder = "\(lib)/loggers"
            \tdebug_level = 4
            }
            media: {
            \(relayedPorts.map { "\trtp_port_range = \"\($0.lowerBound)-\($0.upperBound)\"" } ?? "")
            }
            nat: {
            \tice_enforce_list = "rtsj0"
            \(relayedPorts == nil ? "" : "\tnat_1_1_mapping = \"127.0.0.1\"\n\tice_lite = true")
            }
            plugins: {
            \tdisable = "\(libs("plugins", ["libjanus_videoroom.so"]))"
            }
            transports: {
            \tdisable = "\(libs("transports", ["libjanus_websockets.so", "libjanus_http.so"]))"
            }
            events: {
            \tbroadcast = false
            \tdisable = "\(libs("events", []))"
            }
            loggers: {
            \tdisable = "\(libs("loggers", []))"
            }

            """,
            "janus.plugin.videoroom.jcfg": """
            general: {
            }
            room-\(room): {
            \tdescription = "rtcshare"
            \tpublishers = 2
            \tbitrate = 4000000
            \tfir_freq = 2
            \taudiocodec = "opus"
            \tvideocodec = "vp8"
            }

            """,
            "janus.transport.websockets.jcfg": """
            general: {
            \tjson = "plain"
            \tws = true
            \tws_port = 8188
            \tws_ip = "\(janusAddress)"
            \twss = false
            }
            admin: {
            \tadmin_ws = false
            \tadmin_wss = false
            }

            """,
            "janus.transport.http.jcfg": """
            general: {
            \tjson = "plain"
            \tbase_path = "/janus"
            \thttp = true
            \tport = 8088
            \tip = "\(janusAddress)"
            \thttps = false
            }
            admin: {
            \tadmin_http = false
            \tadmin_https = false
            }

            """,
        ]
        for (name, text) in files {
            try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
    }

    /// Runs `python3 -c CODE ARGS` inside the namespace (urllib: no HTTP client of our own here).
    static func python(_ ns: Namespace, _ code: String, _ arguments: [String]) throws -> Tools.Result {
        let (exe, args) = ns.exec(Tools.which("python3") ?? "/usr/bin/python3", ["-c", code] + arguments)
        return try Tools.run(exe, args, timeout: 20)
    }

    /// Waits until a TCP port inside the namespace accepts connections.
    static func waitForPort(_ ns: Namespace, _ port: Int, alive: () -> Bool) throws -> Bool {
        var accepted = false
        try waitUntil(timeout: 20, interval: 0.1) {
            let probe = try python(ns, "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1)",
                                   [janusAddress, "\(port)"])
            accepted = probe.status == 0
            return accepted || !alive()
        }
        return accepted
    }

    /// Starts Janus (configured by `writeJanusConfig`), simple-whip-server and the WHIP endpoint
    /// `rtcshare` in `ns`, then the subscriber; every process started is appended to `processes`.
    /// Returns the subscriber and where its summary will be; it ends after `idle` seconds
    /// without media.
    static func startRoom(in ns: Namespace, dir: URL, relayedPorts: ClosedRange<Int>? = nil, idle: Int = 3,
                          processes: inout [BackgroundProcess]) throws -> (BackgroundProcess, String) {
        // Janus.
        let config = dir.appendingPathComponent("janus")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Self.writeJanusConfig(to: config, relayedPorts: relayedPorts)
        var (exe, args) = ns.exec(try #require(Tools.which("janus")), [
            "-F", config.path, "-C", config.appendingPathComponent("janus.jcfg").path,
            "-i", Self.janusAddress, "-o",
        ])
        let janus = try BackgroundProcess(exe, args, in: dir, name: "janus")
        processes.append(janus)
        try #require(try Self.waitForPort(ns, 8188) { janus.isRunning }, "Janus did not start: \(janus.stderr)\(String(decoding: janus.stdout, as: UTF8.self).suffix(2000))")
        try #require(try Self.waitForPort(ns, 8088) { janus.isRunning }, "Janus HTTP transport did not start")

        // simple-whip-server, its packaged src/ with a config.js of ours (the packaged one is a
        // symlink into /etc), on the modules setup unpacked.
        let sws = dir.appendingPathComponent("sws")
        let src = sws.appendingPathComponent("src")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        let packaged = Self.whipServer.appendingPathComponent("root/usr/share/simple-whip-server/src")
        for file in ["server.js", "whip-janus.js"] {
            try FileManager.default.copyItem(at: packaged.appendingPathComponent(file), to: src.appendingPathComponent(file))
        }
        try """
        module.exports = {
        \tjanus: { address: 'ws://\(Self.janusAddress):8188' },
        \tport: 7080, rest: '/whip', allowTrickle: true, strictETags: false, iceServers: []
        };

        """.write(to: src.appendingPathComponent("config.js"), atomically: true, encoding: .utf8)
        let root = Self.whipServer.appendingPathComponent("root").path
        // Pure-JS modules in usr/share/nodejs; node-websocket is arch-dependent (usr/lib/<triplet>).
        let archModules = Self.multiarch("\(root)/usr/lib", "nodejs").map { ":\($0)/nodejs" } ?? ""
        (exe, args) = ns.exec("/usr/bin/env", [
            "NODE_PATH=\(root)/usr/share/nodejs\(archModules)", "DEBUG=whip:*",
            try #require(Tools.which("node")), src.appendingPathComponent("server.js").path,
        ])
        let whip = try BackgroundProcess(exe, args, in: sws, name: "simple-whip-server")
        processes.append(whip)
        try #require(try Self.waitForPort(ns, 7080) { whip.isRunning },
                     "simple-whip-server did not start: \(String(decoding: whip.stdout, as: UTF8.self))\(whip.stderr)")

        // The endpoint, publishing into the room.
        let create = try Self.python(ns, """
            import sys, urllib.request
            request = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), headers={"Content-Type": "application/json"})
            sys.stdout.write(str(urllib.request.urlopen(request).status))
            """, ["http://\(Self.janusAddress):7080/whip/create", #"{"id": "rtcshare", "room": \#(Self.room)}"#])
        try #require(create.status == 0 && String(decoding: create.stdout, as: UTF8.self) == "200",
                     "endpoint not created: \(create.stderr)")

        // The subscriber waits for the publisher, then subscribes to it.
        let summaryPath = dir.appendingPathComponent("subscriber.json").path
        (exe, args) = ns.exec(Tools.which("python3") ?? "/usr/bin/python3", [
            Self.repo.appendingPathComponent("Tests/Peers/janus_subscriber.py").path,
            "--janus", "http://\(Self.janusAddress):8088/janus", "--room", "\(Self.room)",
            "--summary", summaryPath, "--wait", "40", "--idle", "\(idle)",
        ])
        let subscriber = try BackgroundProcess(exe, args, in: dir, name: "subscriber")
        processes.append(subscriber)
        return (subscriber, summaryPath)
    }

    /// The end of a test: its processes stopped (last started, first stopped), then the
    /// namespace (and its veth pair) and the test's folder removed.
    static func tearDown(_ processes: [BackgroundProcess], _ ns: Namespace, _ dir: URL) {
        for process in processes.reversed() { process.stop(SIGTERM, timeout: 5) }
        ns.remove()
        try? FileManager.default.removeItem(at: dir)
    }

    /// Waits for the subscriber to write its summary and exit. After the share's DELETE, Janus
    /// hangs the subscription up and the subscriber first decodes what it still holds (which
    /// takes longer on a busy machine); SIGTERM after a minute, and it still finishes decoding
    /// (at most 30 s) before it writes. Killing it would leave no summary.
    static func finish(_ subscriber: BackgroundProcess) {
        if !waitUntil(timeout: 60, interval: 0.1, { !subscriber.isRunning }) {
            subscriber.stop(SIGTERM, timeout: 40)
        }
    }

    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func aShareIntoJanusVideoRoomIsDecodedByASubscriber() throws {
        let dir = try Tools.temporaryDirectory()
        let ns = try Namespace()
        var processes: [BackgroundProcess] = []
        defer { Self.tearDown(processes, ns, dir) }

        let (subscriber, summaryPath) = try Self.startRoom(in: ns, dir: dir, processes: &processes)
        var (exe, args): (String, [String])

        // The share.
        let seconds = 10
        let statsPath = dir.appendingPathComponent("tx.json").path
        (exe, args) = ns.exec(Tools.rtcshare, [
            "--whip", "http://\(Self.janusAddress):7080/whip/endpoint/rtcshare", "--whip-bind", "\(Self.janusAddress):0",
            "--size", "1280x720", "--fps", "20", "--audio", "testtone", "--duration", "\(seconds)",
            "--mem-cap", "64M", "--stats-json", statsPath,
        ])
        let share = try Tools.run(exe, args, timeout: Double(seconds) + 40)
        let endedAt = Tools.monotonicMicroseconds()
        let log = share.stderr
        // What Janus negotiated, for the record (the answer as rtcshare read it).
        print(log.split(separator: "\n").filter { $0.contains("WHIP:") }.joined(separator: "\n"))
        #expect(share.status == 0, "rtcshare: \(log)")
        #expect(log.contains("WHIP: connected"), "\(log)")

        // The share's DELETE makes Janus unpublish and hang the subscription up: the subscriber
        // then writes its summary and exits.
        Self.finish(subscriber)
        let summaryData = try #require(FileManager.default.contents(atPath: summaryPath),
                                       "no subscriber summary: \(subscriber.stderr.suffix(2000))")
        let summary = try #require(try JSONSerialization.jsonObject(with: summaryData) as? [String: Any])
        #expect(summary["error"] is NSNull, "subscriber: \(summary["error"] ?? "")")

        let lastStats = ((try? String(contentsOfFile: statsPath, encoding: .utf8)) ?? "").split(separator: "\n").last.map(String.init) ?? "{}"
        let stats = (try? JSONSerialization.jsonObject(with: Data(lastStats.utf8)) as? [String: Any]) ?? [:]
        let encoded = try #require(WHIPInteropTests.framesSent(log), "\(log)")
        let sent = encoded - (stats["frames_dropped_connecting"] as? Int ?? 0)
        let decoded = summary["video_frames"] as? Int ?? 0
        let read = summary["markers_read"] as? Int ?? 0
        let times = (summary["times"] as? [Int]) ?? []
        let counters = (summary["counters"] as? [Int]) ?? []
        // The subscriber joins after the publisher and decodes from the first keyframe Janus
        // gets it (its PLI), so it cannot see every frame sent. Frames sent during its lifetime
        // are estimated from the sender's own average rate (frames sent after connecting over
        // the share's duration) times the span of capture times of the first and last decoded
        // frames (marker row 2, µs) plus one frame interval.
        // 32-bit µs: the difference is taken modulo 2^32 (the clock may wrap in between).
        let span = times.count >= 2 ? Double((times.last! - times.first!) & 0xFFFF_FFFF) / 1e6 : 0
        let rate = Double(sent) / Double(seconds)
        let sentWhileSubscribed = rate * (span + 1 / 20)
        // How long before the share ended the last decoded frame was captured (µs, modulo 2^32).
        let endGap = times.last.map { Double((Int(endedAt & 0xFFFF_FFFF) - $0) & 0xFFFF_FFFF) / 1e6 } ?? .infinity
        let audio = summary["audio_frames"] as? Int ?? 0
        print("Janus test: sent \(sent) frames after connecting (\(encoded) encoded); subscriber decoded \(decoded), markers read \(read), capture-time span \(String(format: "%.2f", span)) s ≈ \(String(format: "%.1f", sentWhileSubscribed)) frames sent meanwhile, the last captured \(String(format: "%.2f", endGap)) s before the share ended; counters \(counters.first ?? -1)…\(counters.last ?? -1); audio \(audio)")
        #expect(Double(decoded) >= 0.95 * sentWhileSubscribed, "decoded \(decoded) of ≈\(sentWhileSubscribed) sent while subscribed")
        // The subscriber saw most of the share and saw it to its end. How soon it joins is
        // Janus's and aiortc's set-up (in Python; seconds on a busy machine), not rtcshare's: at
        // least half the share's time, and a frame captured within 3 s of its end (the DELETE,
        // libcurl's reload for it and the teardown come after it).
        #expect(span >= Double(seconds) / 2, "the subscriber decoded \(span) s of the \(seconds) s share")
        #expect(endGap < 3, "the last frame decoded was captured \(endGap) s before the share ended")
        #expect(read == decoded, "markers read \(read) of \(decoded)")
        #expect(summary["sizes"] as? [String: Int] == ["1280x720": decoded], "\(summary["sizes"] ?? "")")
        #expect(zip(counters, counters.dropFirst()).allSatisfy { $0 <= $1 }, "counters out of order")
        // Opus flows all the while the video does (50 frames a second sent; audio starts with
        // the subscription, video at the first keyframe after it): at least 40 a second of the
        // video's span.
        #expect(Double(audio) >= 40 * span, "Opus frames decoded: \(audio) over \(span) s of video")
    }

    /// The same room with a 1 Mbit/s bottleneck (250 ms of queue, 20 ms each way, the relay of
    /// `bench/run-network.sh`) between rtcshare and Janus: Janus advertises its ICE ports (one
    /// per peer connection, two here) on 127.0.0.1 where a relay listens on each and forwards to
    /// Janus on the veth; Janus is ICE-lite and a firewall rule in the namespace drops anything
    /// Janus's ICE ports would send to rtcshare's port directly, so every datagram (checks, DTLS,
    /// media, Janus's transport-cc and REMB) crosses a relay. The cap acts towards Janus, so it squeezes the
    /// publisher's media on whichever port it got and leaves the subscriber's downstream alone.
    /// Busy moving content (ffmpeg's mandelbrot) at 2.5 Mbit/s must come under the cap: the
    /// sender's target is under 1 Mbit/s within 5 s and stays there, and Janus keeps forwarding to the subscriber. The
    /// figures (target and sent rate per second, the bottleneck's loss and queueing delay, frames
    /// decoded, freezes) are printed; `bench/run-network.sh` holds the stricter targets.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func aShareThroughABottleneckToJanusComesUnderIt() throws {
        let ffmpeg = try #require(Tools.which("ffmpeg"), "ffmpeg is not installed (scripts/setup installs it)")
        let dir = try Tools.temporaryDirectory()
        let ns = try Namespace()
        var processes: [BackgroundProcess] = []
        var relays: [ImpairmentRelay] = []
        defer {
            for relay in relays { relay.stop() }
            for process in processes.reversed() { process.stop(SIGTERM, timeout: 5) }
            ns.remove()
            try? FileManager.default.removeItem(at: dir)
        }
        let icePorts = 20_000...20_001, sharePort = 21_000
        let nft = try #require(Tools.which("nft"), "nft is not installed (scripts/setup installs nftables)")
        let (nftExe, nftArgs) = ns.exec(nft, ["-f", "-"])
        let rules = """
            table ip relayonly {
            \tchain out {
            \t\ttype filter hook output priority 0; policy accept;
            \t\tip saddr \(Self.janusAddress) udp sport \(icePorts.lowerBound)-\(icePorts.upperBound) udp dport \(sharePort) drop
            \t}
            }

            """
        let firewall = try Tools.run(nftExe, nftArgs, input: Data(rules.utf8), timeout: 10)
        try #require(firewall.status == 0, "nft: \(firewall.stderr)")
        let (subscriber, summaryPath) = try Self.startRoom(in: ns, dir: dir, relayedPorts: icePorts, processes: &processes)
        for port in icePorts {
            relays.append(try ImpairmentRelay(
                listen: "127.0.0.1:\(port)", forward: "\(Self.janusAddress):\(port)",
                options: ["--seed", "3", "--rate", "1000", "--queue", "31250", "--delay", "20", "--back-delay", "20"],
                in: dir, name: "relay-\(port)", launch: ns.exec))
        }

        let seconds = 20
        let fifo = dir.appendingPathComponent("busy.y4m").path
        try #require(mkfifo(fifo, 0o600) == 0, "mkfifo: \(errno)")
        let feeder = try BackgroundProcess(ffmpeg, [
            "-v", "error", "-re", "-f", "lavfi", "-i", "mandelbrot=size=1280x720:rate=20", "-t", "\(seconds + 5)",
            "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", "-y", fifo,
        ], in: dir, name: "feeder")
        processes.append(feeder)
        let statsPath = dir.appendingPathComponent("tx.jsonl").path
        let (exe, args) = ns.exec(Tools.rtcshare, [
            "--whip", "http://\(Self.janusAddress):7080/whip/endpoint/rtcshare", "--whip-bind", "\(Self.janusAddress):\(sharePort)",
            "--source", "y4m:\(fifo)", "--size", "1280x720", "--fps", "20", "--bitrate", "2500", "--audio", "testtone",
            "--duration", "\(seconds)", "--mem-cap", "64M", "--stats-json", statsPath,
        ])
        let startedAt = Tools.monotonicMicroseconds()
        let share = try Tools.run(exe, args, timeout: Double(seconds) + 40)
        let log = share.stderr
        #expect(share.status == 0, "rtcshare: \(log)")
        print(log.split(separator: "\n").filter { $0.contains("WHIP:") }.joined(separator: "\n"))
        #expect(icePorts.contains { log.contains("-> 127.0.0.1:\($0)") }, "the selected pair goes through a relay: \(log)")
        for relay in relays { relay.stop() }
        Self.finish(subscriber)

        let lines = ((try? String(contentsOfFile: statsPath, encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        func series(_ key: String) -> [Int] { lines.map { ($0[key] as? NSNumber)?.intValue ?? -1 } }
        let targets = series("target_kbps"), sent = series("kbps"), delayBased = series("delay_based_kbps")
        // The publisher's relay: the one that carried the most towards Janus.
        let relay = relays.max { $0.toReceiver.int("forwarded") < $1.toReceiver.int("forwarded") }
        let down = relay?.toReceiver ?? [:]
        let dropped = down.int("tail_dropped"), forwarded = down.int("forwarded")
        let summary = (try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: summaryPath)))
                       as? [String: Any]) ?? [:]
        let decoded = summary["video_frames"] as? Int ?? 0
        let encoded = WHIPInteropTests.framesSent(log) ?? 0
        let lateGaps = ((summary["gaps_over_200ms"] as? [[Double]]) ?? []).filter { $0[0] >= 5 }
        let underAt = zip(targets.indices, targets).first { $0.1 >= 0 && $0.1 < 1000 }?.0
        print("Janus bottleneck: target kbps per second \(targets); sent \(sent); delay-based \(delayBased); "
              + "bottleneck dropped \(dropped) of \(dropped + forwarded) (\(String(format: "%.1f", 100 * Double(dropped) / Double(max(1, dropped + forwarded)))) %), "
              + "queue delay p50 \(down.double("queue_delay_p50_ms")) p99 \(down.double("queue_delay_p99_ms")) max \(down.double("queue_delay_max_ms")) ms; "
              + "subscriber decoded \(decoded) of \(encoded) encoded, longest gap \(summary["longest_gap_ms"] ?? "-") ms, "
              + "gaps over 200 ms after 5 s \(lateGaps)")
        #expect(forwarded > 0 && relay?.toSender.int("forwarded") ?? 0 > 0, "traffic crossed the relay both ways")
        #expect(underAt.map { $0 < 5 } == true, "the target came under the 1 Mbit/s cap within 5 s: \(targets)")
        #expect(targets.dropFirst(5).allSatisfy { $0 <= 1100 }, "and stayed there: \(targets)")
        // Janus forwarded the share to the subscriber: most of the video packets sent while it
        // was subscribed reached it. It joins mid-stream, after Janus's and aiortc's set-up
        // (seconds on a busy machine): what was sent before it connected (ICE, CLOCK_MONOTONIC)
        // is left out, from the first stats line at or after then (the share's clock starts a
        // little after `startedAt`, so a little more is left out, never less).
        func videoSent(_ line: [String: Any]?) -> Int { (line?["packets"] as? Int ?? 0) - (line?["audio_packets"] as? Int ?? 0) }
        let videoPackets = summary["video_packets"] as? Int ?? 0
        let joinedAfter = (summary["connected_at"] as? Double).map { $0 - Double(startedAt) / 1e6 }
        let atJoin = joinedAfter.flatMap { t in lines.first { ($0["t"] as? Double ?? 0) >= t } }
        let sentVideoPackets = videoSent(lines.last) - videoSent(atJoin)
        print("Janus bottleneck: the subscriber connected \(joinedAfter.map { String(format: "%.1f", $0) } ?? "-") s into the share")
        #expect(joinedAfter != nil, "the subscriber never connected: \(summary["error"] ?? "")")
        #expect(videoPackets * 2 >= sentVideoPackets && videoPackets > 0,
                "the subscriber received \(videoPackets) video packets of ~\(sentVideoPackets) sent while it was subscribed")
        // aiortc's subscriber joins mid-stream and, after a loss at the start, sometimes decodes
        // nothing more though packets keep arriving (its jitter buffer waits for a missing packet
        // until 128 are queued, and it asks for a keyframe on every frame it fails to decode):
        // seen in about one run in four, with the sender's figures as in the others.
        withKnownIssue("aiortc's subscriber may stall after a mid-stream join under loss", isIntermittent: true) {
            #expect(decoded >= encoded / 3, "the subscriber kept decoding: \(decoded) of \(encoded)")
        }
    }
}
