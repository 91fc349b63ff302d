import Foundation

/// Runs the programs tests talk to (the built tools, real peers such as ffmpeg, openssl or
/// Python scripts) and finds them. Suites add what is theirs alone in an extension.
public enum Tools {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: Data
        public var stderr: String
    }

    /// Runs `executable` with `arguments`, stdin from `input` (or nothing), and waits at most
    /// `timeout` seconds for it to exit (then kills it and records status -9).
    public static func run(_ executable: String, _ arguments: [String], input: Data? = nil,
                           timeout: TimeInterval = 60) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // Output goes to files, read once the process is gone: no pipe can fill up and stall it.
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let outURL = dir.appendingPathComponent("stdout"), errURL = dir.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        defer { try? out.close(); try? err.close() }
        process.standardOutput = out
        process.standardError = err
        if let input {
            let inURL = dir.appendingPathComponent("stdin")
            try input.write(to: inURL)
            process.standardInput = try FileHandle(forReadingFrom: inURL)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        let exit = ExitSignal(process)
        try process.run()
        var killed = false
        if !exit.wait(timeout: timeout) {
            kill(process.processIdentifier, SIGKILL)
            killed = true
        }
        process.waitUntilExit()
        return Result(status: killed ? -9 : process.terminationStatus,
                      stdout: (try? Data(contentsOf: outURL)) ?? Data(),
                      stderr: String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self))
    }

    /// Full path of a program on PATH, or nil.
    public static func which(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// A fresh temporary directory for one test.
    public static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rtcshare-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Waits up to `timeout` seconds for `path` to exist and be non-empty, while `alive` (the
    /// process that writes it) holds.
    public static func waitForFile(_ path: String, timeout: TimeInterval, while alive: () -> Bool = { true }) -> Bool {
        var found = false
        waitUntil(timeout: timeout) {
            if let size = fileSize(path), size > 0 { found = true }
            return found || !alive()
        }
        return found
    }

    /// A failure of the tools themselves (not of what a test checks).
    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public init(message: String) { self.message = message }
        public var description: String { message }
    }
}
