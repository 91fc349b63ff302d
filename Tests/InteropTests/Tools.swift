import Foundation
import Testing

/// Runs the tools the interop tests talk to: the built `rtcshare` and real peers (ffmpeg).
enum Tools {
    /// The `rtcshare` binary built beside this test bundle (RTCSHARE_BIN overrides).
    static var rtcshare: String {
        if let path = ProcessInfo.processInfo.environment["RTCSHARE_BIN"] { return path }
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return here.appendingPathComponent("rtcshare").path
    }

    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
    }

    /// Runs `executable` with `arguments`, stdin from `input` (or nothing), and waits at most
    /// `timeout` seconds (then kills it and records status -9).
    static func run(_ executable: String, _ arguments: [String], input: Data? = nil,
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
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        var killed = false
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            killed = true
        }
        process.waitUntilExit()
        return Result(status: killed ? -9 : process.terminationStatus,
                      stdout: (try? Data(contentsOf: outURL)) ?? Data(),
                      stderr: String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self))
    }

    /// Full path of a program on PATH, or nil.
    static func which(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// A fresh temporary directory for one test.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rtcshare-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Decodes a video file with ffmpeg to 8-bit luma frames of `width` x `height`, one per
    /// frame in the file (no frame-rate conversion).
    static func decodeLuma(_ path: String, width: Int, height: Int) throws -> [Data] {
        let ffmpeg = try #require(which("ffmpeg"), "ffmpeg is not installed (scripts/setup installs it)")
        let result = try run(ffmpeg, ["-v", "error", "-i", path, "-fps_mode", "passthrough",
                                      "-f", "rawvideo", "-pix_fmt", "gray", "-"])
        guard result.status == 0 else { throw DecodeError(message: result.stderr) }
        let size = width * height
        return stride(from: 0, to: result.stdout.count - size + 1, by: size).map {
            result.stdout.subdata(in: $0..<$0 + size)
        }
    }

    struct DecodeError: Error { let message: String }
}
