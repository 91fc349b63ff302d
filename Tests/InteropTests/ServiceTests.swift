import Foundation
import Glibc
import TestSupport
import Testing

/// `rtcshare` as a systemd service: the unit passes `systemd-analyze verify`; the notify
/// protocol (READY, the watchdog's pings, which stop when the loop stalls) over a socket the
/// test owns as systemd would; lines fit for journald; `--config FILE`.
@Suite(.serialized) struct ServiceTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    // MARK: the unit

    /// The unit as shipped, with ExecStart at the built binary (verify refuses a command that
    /// is not there; the package puts it at /usr/bin/rtcshare): no error, no warning.
    @Test func theUnitPassesSystemdAnalyzeVerify() throws {
        let analyze = try #require(Tools.which("systemd-analyze"), "systemd-analyze is not installed (systemd)")
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let unit = try String(contentsOf: Self.repository.appendingPathComponent("dist/rtcshare.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/bin/rtcshare --config /etc/rtcshare/rtcshare.conf"))
        let copy = dir.appendingPathComponent("rtcshare.service")
        try unit.replacingOccurrences(of: "ExecStart=/usr/bin/rtcshare", with: "ExecStart=\(Tools.rtcshare)")
            .write(to: copy, atomically: true, encoding: .utf8)
        let run = try Tools.run(analyze, ["verify", "--man=no", copy.path], timeout: 60)
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        // The statuses it does not restart on are the permanent ones of the exit-status table.
        #expect(unit.contains("RestartPreventExitStatus=2 77 78"))
        #expect(unit.contains("Type=notify") && unit.contains("WatchdogSec=") && unit.contains("MemoryMax=50M"))
    }

    // MARK: sd_notify and the watchdog

    /// READY=1 once the share's loop runs, WATCHDOG=1 at least every WatchdogSec/2 while it
    /// turns; a loop blocked in a write (its IVF output, a FIFO nobody reads) sends none until
    /// the write goes through again; STOPPING=1 on SIGTERM.
    @Test func theWatchdogIsPingedWhileTheLoopTurnsAndNotWhileItIsStuck() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let notify = try NotifySocket(path: dir.appendingPathComponent("notify").path)
        let fifo = dir.appendingPathComponent("share.ivf").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = try FIFOReader(path: fifo)
        let watchdogSeconds = 4.0
        let share = try ServiceProcess(["--size", "640x360", "--bitrate", "2000", "--duration", "120", "--output", fifo],
                                       environment: ["NOTIFY_SOCKET": notify.path,
                                                     "WATCHDOG_USEC": String(Int(watchdogSeconds * 1_000_000))],
                                       in: dir)
        defer { share.kill() }

        // Running: READY first, then pings no further apart than half the watchdog.
        #expect(waitUntil(timeout: 60) { notify.messages.contains { $0.text.contains("READY=1") } },
                "no READY=1: \(share.stderr)")
        let ready = try #require(notify.messages.first { $0.text.contains("READY=1") }).time
        #expect(!notify.messages.contains { $0.text.contains("WATCHDOG=1") && $0.time < ready })
        usleep(7_000_000)
        let running = notify.pings(from: ready, to: Self.now())
        #expect(running.count >= 5, "\(running)")
        #expect(Self.longestGap(running, from: ready, to: Self.now()) <= watchdogSeconds / 2, "\(running)")
        #expect(notify.messages.contains { $0.text.contains("STATUS=sharing") })

        // Stuck: the output stops taking bytes; once its pipe and the writer's buffer are full
        // the loop waits in write(2), and the pings stop.
        let stuckAt = Self.now()
        reader.pause()
        usleep(10_000_000)
        let stuck = notify.pings(from: stuckAt + 4, to: Self.now())
        #expect(stuck.isEmpty, "pings while the loop is stuck: \(stuck.map { $0 - stuckAt })")
        #expect(share.isRunning)

        // Unstuck: the pings come back.
        let resumedAt = Self.now()
        reader.resume()
        #expect(waitUntil(timeout: 10) { !notify.pings(from: resumedAt, to: Self.now()).isEmpty },
                "no ping after the output drained: \(share.stderr)")

        #expect(share.stop() == 0, "\(share.stderr)")
        #expect(notify.messages.contains { $0.text.contains("STOPPING=1") })
        reader.close()
    }

    /// Without $NOTIFY_SOCKET nothing is sent and nothing changes; with WATCHDOG_PID naming
    /// another process the watchdog is not this one's.
    @Test func aWatchdogOfAnotherProcessIsNotPinged() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let notify = try NotifySocket(path: dir.appendingPathComponent("notify").path)
        let share = try ServiceProcess(["--size", "320x180", "--duration", "3", "--output", dir.appendingPathComponent("o.ivf").path],
                                       environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "4000000",
                                                     "WATCHDOG_PID": "1"],
                                       in: dir)
        #expect(share.wait(timeout: 60) == 0, "\(share.stderr)")
        #expect(notify.messages.contains { $0.text.contains("READY=1") })
        #expect(!notify.messages.contains { $0.text.contains("WATCHDOG=1") })
        #expect(notify.messages.contains { $0.text.contains("STOPPING=1\nSTATUS=finished: duration reached") })
    }

    // MARK: journald

    /// On journald's stream (JOURNAL_STREAM naming standard error, as systemd sets it) every line
    /// carries its level; no status line a second, one stats line a minute.
    @Test func onTheJournalEveryLineHasALevelAndStatsComeOnceAMinute() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let share = try ServiceProcess(["--size", "320x180", "--fps", "5", "--duration", "62",
                                        "--output", dir.appendingPathComponent("o.ivf").path],
                                       environment: [:], in: dir, journal: true)
        #expect(share.wait(timeout: 150) == 0, "\(share.stderr)")
        let lines = share.stderr.split(separator: "\n")
        #expect(lines.allSatisfy { $0.range(of: #"^<[3-7]>rtcshare: "#, options: .regularExpression) != nil }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("<6>rtcshare: starting: testsrc") }, "\(lines)")
        #expect(lines.contains { $0 == "<5>rtcshare: finished: duration reached" }, "\(lines)")
        let stats = lines.filter { $0.contains("rtcshare: stats: ") }
        #expect(stats.count == 1 && stats[0].hasPrefix("<6>rtcshare: stats: 6"), "\(lines)")
        #expect(stats.first?.contains(" fps ") == true && stats.first?.contains(" MiB") == true, "\(stats)")
        #expect(lines.count <= 5, "no status line a second: \(lines)")

        // An error is level 3.
        let bad = try ServiceProcess(["--fps", "fast"], environment: [:], in: dir, journal: true)
        #expect(bad.wait(timeout: 30) == 2)
        #expect(bad.stderr == "<3>rtcshare: error: --fps must be a whole number, not 'fast'\n", "\(bad.stderr)")
    }

    /// A pipe or a file that is not the journal (JOURNAL_STREAM unset, or naming another stream:
    /// stderr was redirected) gets plain lines.
    @Test func elsewhereLinesArePlain() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for environment in [[:], ["JOURNAL_STREAM": "1:2"]] {
            let bad = try ServiceProcess(["--fps", "fast"], environment: environment, in: dir)
            #expect(bad.wait(timeout: 30) == 2)
            #expect(bad.stderr == "rtcshare: error: --fps must be a whole number, not 'fast'\n", "\(bad.stderr)")
        }
    }

    // MARK: --config

    static func write(_ text: String, _ name: String, in dir: URL) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The IVF header's picture size.
    static func ivfSize(_ path: String) throws -> (Int, Int) {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard data.count >= 32 else { throw Tools.Failure(message: "\(path): no IVF header") }
        return (Int(data[12]) | Int(data[13]) << 8, Int(data[14]) | Int(data[15]) << 8)
    }

    @Test func aConfigurationFileGivesTheOptions() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent("o.ivf").path
        let config = try Self.write("""
            # a comment, then options by their long names
              size = 320x180
            fps=10

            duration = 2
            output = "\(output)"
            quiet = true
            """, "good.conf", in: dir)
        let run = try Tools.run(Tools.rtcshare, ["--config", config], timeout: 60)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty, "quiet = true: \(run.stderr)")
        #expect(try Self.ivfSize(output) == (320, 180))
        let frames = try Tools.ivfFrameTimes(output).count
        #expect(frames >= 15 && frames <= 22, "10 fps for 2 s: \(frames)")
    }

    @Test func theCommandLineOverridesTheFile() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent("o.ivf").path
        let config = try Self.write("size = 320x180\nduration = 1\noutput = \(dir.path)/file.ivf\nquiet = true\n",
                                    "c.conf", in: dir)
        // Before and after --config, and as --name=value: the command line's value wins.
        let run = try Tools.run(Tools.rtcshare, ["--size", "640x360", "--config=\(config)", "--output=\(output)"], timeout: 60)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.ivfSize(output) == (640, 360))
        #expect(!FileManager.default.fileExists(atPath: "\(dir.path)/file.ivf"))
        // A flag can be turned on by the command line, and a bad line stops it even so.
        let flags = try Self.write("quiet = false\nduration = 1\noutput = \(output)\nsize = 320x180\n", "f.conf", in: dir)
        let quiet = try Tools.run(Tools.rtcshare, ["--config", flags, "--quiet"], timeout: 60)
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
    }

    /// Unknown keys and bad values are refused with the file and line, exit 2, one line.
    @Test(arguments: [
        ("size = 320x180\n# fine so far\nbitrat = 900\n", 3, "unknown key 'bitrat'"),
        ("fps = fast\n", 1, "--fps must be a whole number, not 'fast'"),
        ("output = /dev/null\n\nduration = -1\n", 3, "--duration must be a positive number of seconds"),
        ("quiet = maybe\n", 1, "quiet is a flag: true or false, not 'maybe'"),
        ("fps\n", 1, "fps needs a value"),
        ("--fps = 5\n", 1, "expected 'key = value'"),
        ("config = other.conf\n", 1, "a configuration file cannot name another"),
        ("codec = vp9\n", 1, "--codec"),
    ] as [(String, Int, String)])
    func aBadLineIsRefusedWithTheFileAndLine(text: String, line: Int, expected: String) throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try Self.write(text, "bad.conf", in: dir)
        let run = try Tools.run(Tools.rtcshare, ["--config", config, "--output", dir.appendingPathComponent("o.ivf").path],
                                timeout: 30)
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("rtcshare: error: \(config):\(line): ") && run.stderr.contains(expected)
                && run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
    }

    @Test func aFileThatCannotBeReadIsRefused() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = try Tools.run(Tools.rtcshare, ["--config", dir.appendingPathComponent("none.conf").path], timeout: 30)
        #expect(missing.status == 2 && missing.stderr.contains("No such file or directory"), "\(missing.stderr)")
        let binary = try Tools.run(Tools.rtcshare, ["--config", Tools.rtcshare], timeout: 30)
        #expect(binary.status == 2 && binary.stderr.contains("--config"), "\(binary.stderr)")
    }

    /// The default configuration: as installed it configures nothing (the service stops with
    /// "nothing to send to", exit 2, and is not restarted); every key it shows is an option.
    @Test func theDefaultConfigurationShowsRealOptions() throws {
        let path = Self.repository.appendingPathComponent("dist/rtcshare.conf").path
        let run = try Tools.run(Tools.rtcshare, ["--config", path], timeout: 30)
        #expect(run.status == 2 && run.stderr.contains("nothing to send to"), "\(run.stderr)")
        let help = try Tools.run(Tools.rtcshare, ["share", "--help"], timeout: 30)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let keys = text.split(separator: "\n").compactMap { line -> Substring? in
            guard line.hasPrefix("#"), let equals = line.firstIndex(of: "="), !line.hasPrefix("# ") else { return nil }
            return line[line.index(after: line.startIndex)..<equals].trimmingCharacters(in: .whitespaces)[...]
        }
        #expect(keys.count >= 8, "\(keys)")
        for key in keys {
            #expect(String(decoding: help.stdout, as: UTF8.self).contains("--\(key) "), "\(key) is not an option")
        }
    }

    // MARK: helpers

    static func now() -> Double { Double(Tools.monotonicMicroseconds()) / 1_000_000 }

    /// The longest stretch in [from, to] without a time of `times`.
    static func longestGap(_ times: [Double], from: Double, to: Double) -> Double {
        let all = [from] + times.filter { $0 >= from && $0 <= to } + [to]
        return zip(all, all.dropFirst()).map { $1 - $0 }.max() ?? 0
    }
}

/// A notify socket as systemd holds one: a Unix datagram socket the service's $NOTIFY_SOCKET
/// names; every datagram is kept with the time it came.
final class NotifySocket: @unchecked Sendable {
    struct Message { let time: Double; let text: String }
    let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var received: [Message] = []
    private var thread: Thread?
    private var done = false

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw Tools.Failure(message: "socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw Tools.Failure(message: "bind \(path): \(errno)") }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread { [unowned self] in self.receive() }
        self.thread = thread
        thread.start()
    }

    deinit {
        lock.withLock { done = true }
        usleep(200_000)
        close(fd)
    }

    private func receive() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !lock.withLock({ done }) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { continue }
            let message = Message(time: ServiceTests.now(), text: String(decoding: buffer[..<n], as: UTF8.self))
            lock.withLock { received.append(message) }
        }
    }

    var messages: [Message] { lock.withLock { received } }

    /// The times of the WATCHDOG=1 pings in [from, to].
    func pings(from: Double, to: Double) -> [Double] {
        messages.filter { $0.text.split(separator: "\n").contains("WATCHDOG=1") && $0.time >= from && $0.time <= to }
            .map(\.time)
    }
}

/// Reads a FIFO as fast as it fills, or stops reading on demand (its pipe then fills and the
/// writer blocks). The pipe is made small so that happens after little.
final class FIFOReader: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()
    private var paused = false
    private var done = false

    init(path: String) throws {
        // Non-blocking: the open does not wait for the writer, a read of an empty pipe returns.
        fd = open(path, O_RDONLY | O_NONBLOCK)
        guard fd >= 0 else { throw Tools.Failure(message: "open \(path): \(errno)") }
        _ = fcntl(fd, 1031 /* F_SETPIPE_SZ */, 4096)
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let (stop, hold) = lock.withLock { (done, paused) }
                if stop { return }
                let n = hold ? 0 : buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { usleep(5_000) }
            }
        }.start()
    }

    func pause() { lock.withLock { paused = true } }
    func resume() { lock.withLock { paused = false } }
    func close() {
        lock.withLock { done = true }
        usleep(50_000)
        Glibc.close(fd)
    }
}

/// `rtcshare` with the environment a service has, its standard error in a file, or on a pipe
/// that JOURNAL_STREAM names (as systemd's journal stream), read as it comes.
final class ServiceProcess: @unchecked Sendable {
    private let process = Process()
    private let errURL: URL
    private var journalText = Data()
    private let lock = NSLock()
    private var pipe: Pipe?
    private let exited = DispatchGroup()

    init(_ arguments: [String], environment: [String: String], in dir: URL, journal: Bool = false) throws {
        process.executableURL = URL(fileURLWithPath: Tools.rtcshare)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM"] { env[key] = nil }
        env.merge(environment) { $1 }
        errURL = dir.appendingPathComponent("rtcshare-\(UUID().uuidString).stderr")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        if journal {
            let pipe = Pipe()
            var st = stat()
            fstat(pipe.fileHandleForWriting.fileDescriptor, &st)
            env["JOURNAL_STREAM"] = "\(st.st_dev):\(st.st_ino)"
            process.standardError = pipe
            pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                self?.lock.withLock { self?.journalText.append(data) }
            }
            self.pipe = pipe
        } else {
            process.standardError = try FileHandle(forWritingTo: errURL)
        }
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        exited.enter()
        let group = exited
        process.terminationHandler = { _ in group.leave() }
        try process.run()
    }

    var isRunning: Bool { process.isRunning }

    var stderr: String {
        if pipe != nil { return lock.withLock { String(decoding: journalText, as: UTF8.self) } }
        return (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
    }

    /// The exit status, or nil when it had to be killed after `timeout` seconds.
    func wait(timeout: TimeInterval) -> Int32? {
        if exited.wait(timeout: .now() + timeout) != .success { kill(); return nil }
        process.waitUntilExit()
        // What the pipe still holds.
        if let pipe {
            pipe.fileHandleForReading.readabilityHandler = nil
            let rest = pipe.fileHandleForReading.readDataToEndOfFile()
            lock.withLock { journalText.append(rest) }
        }
        return process.terminationStatus
    }

    /// SIGTERM, as systemd stops a service.
    func stop(timeout: TimeInterval = 10) -> Int32? {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGTERM) }
        return wait(timeout: timeout)
    }

    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
