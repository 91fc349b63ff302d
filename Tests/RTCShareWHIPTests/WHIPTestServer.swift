import Foundation
import TestSupport
import Testing
@testable import RTCShareWHIP

/// The aiortc WHIP server of `Tests/Peers/whip_server.py`, one process for the whole test run
/// on 127.0.0.1 (it exits by itself when this process goes). Tests use distinct paths and ids.
final class WHIPTestServer: Sendable {
    let port: Int
    let process: Process

    static let shared: Result<WHIPTestServer, TestServerError> = {
        do { return .success(try WHIPTestServer()) } catch let e as TestServerError { return .failure(e) } catch {
            return .failure(TestServerError(message: "\(error)"))
        }
    }()

    /// The shared server; a test fails with the reason if it could not start.
    static func get() throws -> WHIPTestServer { try shared.get() }

    private init() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rtcshare-whip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let portFile = dir.appendingPathComponent("port").path
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Peers/whip_server.py").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", script, "--port-file", portFile, "--summary", dir.appendingPathComponent("summary.json").path]
        p.standardError = try FileHandle(forWritingTo: {
            let url = dir.appendingPathComponent("stderr")
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
            return url
        }())
        p.standardInput = FileHandle.nullDevice
        try p.run()
        var announced: Int?
        waitUntil(timeout: 20, interval: 0.05) {
            announced = (try? String(contentsOfFile: portFile, encoding: .utf8))
                .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            return announced != nil || !p.isRunning
        }
        if let announced {
            port = announced
            process = p
            return
        }
        let err = (try? String(contentsOf: dir.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
        if p.isRunning { p.terminate() }
        throw TestServerError(message: "whip_server.py did not start (run scripts/setup for aiortc): \(err.suffix(400))")
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// The server's summary so far (GET /summary).
    func summary() throws -> [String: Any] {
        let request = HTTPRequest(method: "GET", url: base + "/summary", connectTimeout: 2, totalTimeout: 5,
                                  maximumRedirects: 0, maximumBodyBytes: 8 << 20)
        let response = try CurlEasy().perform(request)
        let object = try JSONSerialization.jsonObject(with: Data(response.body))
        return try #require(object as? [String: Any])
    }
}

struct TestServerError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
