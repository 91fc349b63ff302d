import Foundation

/// A process running in the background for a test (a receiver, a sender, a server), its
/// standard output and error going to files in the test's directory, so a test can wait for a
/// line it prints and read everything it said after it is gone.
public final class BackgroundProcess {
    public let process = Process()
    public let outURL: URL
    public let errURL: URL
    private let exit: ExitSignal

    public init(_ executable: String, _ arguments: [String], in dir: URL, name: String) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        outURL = dir.appendingPathComponent("\(name).stdout")
        errURL = dir.appendingPathComponent("\(name).stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        exit = ExitSignal(process)
        try process.run()
    }

    deinit { kill() }

    public var isRunning: Bool { process.isRunning }

    /// Sends `signal` (SIGINT: let it finish its files) and waits up to `timeout` seconds, then
    /// kills it. Returns the exit status, or nil if it had to be killed.
    @discardableResult
    public func stop(_ signal: Int32 = SIGINT, timeout: TimeInterval = 5) -> Int32? {
        if process.isRunning { Foundation.kill(process.processIdentifier, signal) }
        return wait(timeout: timeout)
    }

    public func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Waits up to `timeout` seconds for it to exit; nil if it was still running (it is then
    /// killed).
    public func wait(timeout: TimeInterval) -> Int32? {
        if !exit.wait(timeout: timeout) { kill(); return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Waits up to `timeout` seconds for `text` to appear in what it wrote to standard error
    /// (or standard output): the line a program prints once it is ready ("listening on …", a
    /// summary, "connected"). False if the time passed or it exited without writing it.
    public func waitForOutput(containing text: String, onStandardOutput: Bool = false,
                              timeout: TimeInterval) -> Bool {
        func said() -> Bool {
            onStandardOutput ? String(decoding: stdout, as: UTF8.self).contains(text) : stderr.contains(text)
        }
        var found = false
        waitUntil(timeout: timeout) {
            found = said()
            return found || !process.isRunning
        }
        return found || said()
    }

    public var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }
    public var stdout: Data { (try? Data(contentsOf: outURL)) ?? Data() }
}
