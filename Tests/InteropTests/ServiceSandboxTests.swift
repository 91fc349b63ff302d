import Foundation
import TestSupport
import Testing

/// `dist/rtcshare.service`'s sandbox against what shares really do. No systemd runs as PID 1
/// here, so the unit cannot be started; instead each share runs under strace, and every system
/// call, socket family, memory protection and file written is checked against what the unit
/// allows: SystemCallFilter= (its sets expanded by systemd-analyze, as systemd expands them),
/// RestrictAddressFamilies=, MemoryDenyWriteExecute=, PrivateDevices= and ProtectSystem=strict
/// (writable: /tmp, which PrivateTmp= makes private, and the RuntimeDirectory=). A library
/// update or new code that needs more fails here instead of in the field, as an EPERM.
@Suite(.serialized) struct ServiceSandboxTests {
    static let unit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("dist/rtcshare.service")

    static let unavailable: String? = {
        for tool in ["strace", "systemd-analyze", "ffmpeg"] where Tools.which(tool) == nil {
            return "\(tool) is not installed (scripts/setup installs it)"
        }
        return nil
    }()

    /// The unit's `Key=` values (the last one of each key).
    static func setting(_ key: String) throws -> String {
        let text = try String(contentsOf: unit, encoding: .utf8)
        let value = text.split(separator: "\n").last { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
        return try #require(value, "\(key)= is not in \(unit.path)")
    }

    /// The system calls a filter list allows, its @sets expanded recursively from
    /// `systemd-analyze syscall-filter` (this machine's systemd, as it would apply them).
    static func allowedSystemCalls(_ filter: String) throws -> Set<String> {
        let listing = try Tools.run(try #require(Tools.which("systemd-analyze")), ["syscall-filter"])
        try #require(listing.status == 0, "systemd-analyze syscall-filter: \(listing.stderr)")
        var sets: [String: [String]] = [:]
        var current: String?
        for raw in String(decoding: listing.stdout, as: UTF8.self).split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if !raw.hasPrefix(" ") { current = line; sets[line] = []; continue }
            if let current { sets[current, default: []].append(line) }
        }
        var allowed = Set<String>(), seen = Set<String>()
        func expand(_ name: String) {
            guard name.hasPrefix("@") else { allowed.insert(name); return }
            guard seen.insert(name).inserted else { return }
            for member in sets[name] ?? [] { expand(member) }
        }
        for entry in filter.split(separator: " ") { expand(String(entry)) }
        try #require(allowed.count > 100, "\(filter) expanded to \(allowed.count) calls: \(sets.keys.sorted())")
        return allowed
    }

    /// What the traced processes did, from `strace -f` output.
    struct Trace {
        var calls: Set<String> = []
        var families: Set<String> = []
        var writableExecutable: [String] = []
        var devices: Set<String> = []
        var writtenPaths: Set<String> = []

        init(_ text: String) {
            for line in text.split(separator: "\n") {
                // "PID name(args..." (a call that resumes later is named here, not in "<... resumed>")
                let fields = line.drop { $0.isNumber }.drop { $0 == " " }
                guard let paren = fields.firstIndex(of: "("), fields.first?.isLetter == true else { continue }
                let name = String(fields[..<paren])
                guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { continue }
                calls.insert(name)
                let args = fields[paren...]
                if name == "socket", let family = args.dropFirst().split(separator: ",").first {
                    families.insert(String(family))
                }
                if ["mmap", "mprotect", "pkey_mprotect"].contains(name) {
                    let exec = args.contains("PROT_EXEC"), write = args.contains("PROT_WRITE")
                    // MemoryDenyWriteExecute=: no mapping both, and no protection turned executable.
                    if exec && (write || name != "mmap") { writableExecutable.append(String(line)) }
                }
                if name == "openat" || name == "open", let path = Self.quoted(args) {
                    if path.hasPrefix("/dev/") { devices.insert(path) }
                    if args.contains("O_WRONLY") || args.contains("O_RDWR") || args.contains("O_CREAT") {
                        writtenPaths.insert(path)
                    }
                }
            }
        }

        static func quoted(_ args: Substring) -> String? {
            guard let open = args.firstIndex(of: "\"") else { return nil }
            let rest = args[args.index(after: open)...]
            guard let close = rest.firstIndex(of: "\"") else { return nil }
            return String(rest[..<close])
        }
    }

    /// Runs rtcshare with `arguments` under `strace -f` and returns what it did.
    static func traced(_ arguments: [String], in dir: URL, timeout: TimeInterval = 90) throws -> (status: Int32, stderr: String, trace: Trace) {
        let out = dir.appendingPathComponent("strace.txt").path
        let run = try Tools.run(try #require(Tools.which("strace")),
                                ["-f", "-qq", "-e", "signal=none", "-s", "256", "-o", out, Tools.rtcshare] + arguments,
                                timeout: timeout)
        let text = try String(contentsOfFile: out, encoding: .utf8)
        // The exec of rtcshare itself happens before the unit's filter would apply: it is systemd's.
        return (run.status, run.stderr, Trace(text))
    }

    func expectWithinTheUnit(_ trace: Trace, _ what: String, dir: URL) throws {
        let allowed = try Self.allowedSystemCalls(Self.setting("SystemCallFilter"))
        let denied = trace.calls.subtracting(allowed).sorted()
        #expect(denied.isEmpty, "\(what): system calls SystemCallFilter= would refuse with EPERM: \(denied)")
        let families = Set(try Self.setting("RestrictAddressFamilies").split(separator: " ").map(String.init))
        #expect(trace.families.isSubset(of: families), "\(what): socket families \(trace.families.sorted()) beyond \(families.sorted())")
        #expect(trace.writableExecutable.isEmpty, "\(what): MemoryDenyWriteExecute= would refuse: \(trace.writableExecutable.prefix(3))")
        // PrivateDevices=: only the pseudo devices.
        let devices = trace.devices.filter { path in
            !["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"].contains(path)
                && !path.hasPrefix("/dev/shm/") && !path.hasPrefix("/dev/pts/")
        }
        #expect(devices.isEmpty, "\(what): devices PrivateDevices= hides: \(devices.sorted())")
        // ProtectSystem=strict: written only under /tmp (PrivateTmp=, where these tests keep
        // their files), /run/rtcshare (RuntimeDirectory=) and the pseudo devices.
        let written = trace.writtenPaths.filter { path in
            !(path.hasPrefix("/tmp/") || path.hasPrefix(dir.path) || path.hasPrefix("/run/rtcshare/")
              || path.hasPrefix("/dev/null") || path.hasPrefix("/dev/shm/"))
        }
        #expect(written.isEmpty, "\(what): files written outside what ProtectSystem=strict leaves writable: \(written.sorted())")
    }

    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func aVP8AndAnH264ShareWithAudioStayInsideTheSandbox() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for codec in ["vp8", "h264"] {
            let ivf = dir.appendingPathComponent("\(codec).ivf").path
            let run = try Self.traced(["--size", "320x180", "--fps", "10", "--codec", codec, "--audio", "testtone",
                                       "--output", ivf, "--audio-output", dir.appendingPathComponent("\(codec).ogg").path,
                                       "--duration", "2", "--quiet"], in: dir)
            #expect(run.status == 0, "\(codec): \(run.stderr)")
            // The share did its work under the trace: a file that plays.
            let frames = try Tools.decodeLuma(ivf, width: 320, height: 180)
            #expect(frames.count >= 10, "\(codec): \(frames.count) frames")
            #expect(run.trace.writtenPaths.contains(ivf), "\(codec): the trace missed the share's own file: \(run.trace.writtenPaths)")
            try expectWithinTheUnit(run.trace, codec, dir: dir)
        }
    }

    /// WHIP: libcurl's HTTP, OpenSSL's DTLS, ICE's sockets, netlink for the host's addresses.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func aWHIPShareStaysInsideTheSandbox() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try WHIPInteropTests.Server()
        let run = try Self.traced(["--whip", server.base + "/whip/sandbox", "--whip-bind", "127.0.0.1:0", "--size", "320x180",
                                   "--fps", "10", "--audio", "testtone", "--duration", "4", "--quiet"], in: dir, timeout: 120)
        #expect(run.status == 0, "\(run.stderr)")
        let sends = run.trace.calls.intersection(["sendto", "sendmsg", "sendmmsg"])
        #expect(run.trace.families.contains("AF_INET") && !sends.isEmpty, "the trace saw no socket used: \(run.trace.calls.sorted())")
        try expectWithinTheUnit(run.trace, "WHIP", dir: dir)
    }
}
