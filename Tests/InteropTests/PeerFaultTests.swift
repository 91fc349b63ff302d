import Foundation
import TestSupport
import Testing

/// Faults a user of `--peer` hits, with real processes on loopback: the receiver is not there
/// yet (its port is closed, so every datagram comes back as ICMP port unreachable), and it
/// stays away long enough for the sender to say that no RTCP is coming back.
@Suite struct PeerFaultTests {
    @Test func aClosedPortIsSurvivedTheSilenceSaidAndTheReceiverServedWhenItComes() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 2)
        let key = Data((0..<30).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) }).base64EncodedString()
        let seconds = 14
        let sender = try BackgroundProcess(Tools.rtcshare, [
            "--source", "testsrc", "--size", "320x240", "--fps", "20",
            "--peer", "127.0.0.1:\(port)", "--srtp-key", key, "--duration", "\(seconds)",
        ], in: dir, name: "sender")
        // Nothing listens: the sender's datagrams meet a closed port for the first ~7 s.
        let silence = "no RTCP from the receiver"
        #expect(waitUntil(timeout: 15, interval: 0.1) { sender.stderr.contains(silence) || !sender.isRunning }
                && sender.stderr.contains(silence),
                "the sender never said its receiver was silent: \(sender.stderr.suffix(800))")
        let json = dir.appendingPathComponent("rx.json").path
        let receiver = try BackgroundProcess(Tools.rtcshare, [
            "receive", "--listen", "127.0.0.1:\(port)", "--srtp-key", key, "--stats-json", json,
            "--idle-timeout", "3",
        ], in: dir, name: "receiver")
        let status = sender.wait(timeout: Double(seconds) + 20)
        #expect(status == 0, "the sender kept going through ICMP errors: \(sender.stderr.suffix(800))")
        #expect(receiver.wait(timeout: 15) == 0, "receiver: \(receiver.stderr.suffix(600))")
        let tx = sender.stderr
        #expect(tx.components(separatedBy: silence).count - 1 == 1, "said once per silence: \(tx.suffix(800))")
        #expect(tx.contains("is reporting again after"), "the return was not said: \(tx.suffix(800))")
        let stats = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json)))
                                 as? [String: Any])
        let frames = (stats["frames"] as? NSNumber)?.intValue ?? 0
        // The receiver ran for the last ~5 s or more of a 14 s share at 20 fps: it decodes from the
        // first keyframe it asks for (PLI) on, so at least half of those frames.
        #expect(frames >= 50, "receiver decoded \(frames) frames: \(receiver.stderr.suffix(600))")
        // Joining mid-stream, it cannot decode what comes before the keyframe its PLI brings
        // (about a round trip and one frame at 20 fps); nothing after that is lost on loopback.
        let lost = (stats["frames_lost"] as? NSNumber)?.intValue ?? -1
        #expect((0...10).contains(lost), "frames lost \(lost): \(receiver.stderr.suffix(600))")
    }
}
