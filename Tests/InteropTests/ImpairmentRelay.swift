import Foundation
import TestSupport

/// `rtcshare-relay` run for a test: the sender sends to `front`, the relay impairs and forwards
/// to the receiver and carries what comes back. `stop()` ends it with SIGTERM (a shell may have SIGINT ignored) and reads the JSON
/// statistics it prints for each direction.
final class ImpairmentRelay {
    let front: Int
    private let process: BackgroundProcess
    private(set) var toReceiver: [String: Any] = [:]
    private(set) var toSender: [String: Any] = [:]

    /// The relay binary built beside this test bundle.
    static var executable: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("rtcshare-relay").path
    }

    /// `front` → `receiverPort` on 127.0.0.1, impaired by `options` (rtcshare-relay's own).
    convenience init(front: Int, receiverPort: Int, options: [String], in dir: URL, name: String = "relay") throws {
        try self.init(listen: "127.0.0.1:\(front)", forward: "127.0.0.1:\(receiverPort)", options: options,
                      in: dir, name: name)
    }

    /// `listen` → `forward` (host:port of this host), started through `launch` (a network
    /// namespace's `ip netns exec`, say).
    init(listen: String, forward: String, options: [String], in dir: URL, name: String = "relay",
         launch: (String, [String]) -> (String, [String]) = { ($0, $1) }) throws {
        front = Int(listen.split(separator: ":").last ?? "") ?? 0
        let (exe, args) = launch(Self.executable, ["--listen", listen, "--forward", forward] + options)
        process = try BackgroundProcess(exe, args, in: dir, name: name)
        guard process.waitForOutput(containing: "relaying", timeout: 10) else {
            throw RelayError(message: "rtcshare-relay did not start: \(process.stderr)")
        }
    }

    /// Stops it (once) and reads its statistics.
    func stop() {
        guard process.isRunning else { return }
        process.stop(SIGTERM, timeout: 5)
        for line in String(decoding: process.stdout, as: UTF8.self).split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            if object["direction"] as? String == "to-receiver" { toReceiver = object }
            if object["direction"] as? String == "to-sender" { toSender = object }
        }
    }

    deinit { process.kill() }

    struct RelayError: Error { let message: String }
}

extension Dictionary where Key == String, Value == Any {
    /// A JSON number as an Int (0 when absent).
    func int(_ key: String) -> Int { (self[key] as? NSNumber)?.intValue ?? 0 }
    func double(_ key: String) -> Double { (self[key] as? NSNumber)?.doubleValue ?? 0 }
}
