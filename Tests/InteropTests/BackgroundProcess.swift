import Foundation
import RTCShareMedia

/// A process running in the background for an interop test (a receiver, a sender), its
/// standard output and error going to files in the test's directory.
final class BackgroundProcess {
    let process = Process()
    let outURL: URL
    let errURL: URL

    init(_ executable: String, _ arguments: [String], in dir: URL, name: String) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        outURL = dir.appendingPathComponent("\(name).stdout")
        errURL = dir.appendingPathComponent("\(name).stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit { kill() }

    var isRunning: Bool { process.isRunning }

    /// Sends `signal` (SIGINT: let it finish its files) and waits up to `timeout` seconds, then
    /// kills it. Returns the exit status, or nil if it had to be killed.
    @discardableResult
    func stop(_ signal: Int32 = SIGINT, timeout: TimeInterval = 5) -> Int32? {
        if process.isRunning { Foundation.kill(process.processIdentifier, signal) }
        return wait(timeout: timeout)
    }

    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Waits up to `timeout` seconds; nil if it was still running (it is then killed).
    func wait(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(); return nil }
        return process.terminationStatus
    }

    var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }
    var stdout: Data { (try? Data(contentsOf: outURL)) ?? Data() }
}

extension Tools {
    /// A base port P such that UDP ports P ..< P + count are free on 127.0.0.1 right now (even,
    /// so RTP/RTCP pairs line up as receivers expect).
    static func freeUDPPorts(count: Int) throws -> Int {
        for _ in 0..<200 {
            let base = Int.random(in: 20_000...60_000) & ~1
            var sockets: [Int32] = []
            defer { sockets.forEach { close($0) } }
            var ok = true
            for port in base..<base + count {
                let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
                sockets.append(fd)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = UInt16(port).bigEndian
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let bound = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                if bound != 0 { ok = false; break }
            }
            if ok { return base }
        }
        throw DecodeError(message: "no free block of \(count) UDP ports")
    }

    /// Waits up to `timeout` seconds for `path` to exist and be non-empty.
    static func waitForFile(_ path: String, timeout: TimeInterval, while alive: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline && alive() {
            if let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size > 0 { return true }
            usleep(20_000)
        }
        return false
    }

    /// Frame markers of 8-bit luma frames of `width` x `height`; nil where one does not read.
    static func markers(_ frames: [Data], width: Int, height: Int) -> [UInt32?] {
        frames.map { frame in
            frame.withUnsafeBytes { raw in
                FrameMarker.read(luma: raw.bindMemory(to: UInt8.self).baseAddress!, stride: width,
                                 width: width, rows: height)?.counter
            }
        }
    }

    /// Splits raw 8-bit luma (`width` x `height` a frame) into frames.
    static func lumaFrames(_ data: Data, width: Int, height: Int) -> [Data] {
        let size = width * height
        return stride(from: 0, to: data.count - size + 1, by: size).map { data.subdata(in: $0..<$0 + size) }
    }
}
