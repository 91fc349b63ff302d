import Foundation
import TestSupport
import Testing

/// The sender backs off when the receiver reports loss: `rtcshare` → `rtcshare-relay` losing 30 %
/// of what goes to the receiver → `rtcshare receive`, whose receiver reports (fraction lost) and NACKs go back
/// through the relay. The sender's bitrate target must fall below the configured bitrate.
@Suite(.serialized) struct LossAdaptationTests {
    static let bitrate = 800, seconds = 8

    @Test func lossReportedByTheReceiverLowersTheSendersBitrate() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let base = try Tools.freeUDPPorts(count: 8)
        let relayPort = base, receiverPort = base + 6
        let relay = try ImpairmentRelay(front: relayPort, receiverPort: receiverPort,
                                        options: ["--loss", "30", "--seed", "3"], in: dir)
        defer { relay.stop() }
        let key = Data((0..<30).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }).base64EncodedString()
        let json = dir.appendingPathComponent("rx.json").path
        let txJSON = dir.appendingPathComponent("tx.jsonl").path
        let receiver = try BackgroundProcess(Tools.rtcshare, [
            "receive", "--listen", "127.0.0.1:\(receiverPort)", "--srtp-key", key,
            "--stats-json", json, "--idle-timeout", "3",
        ], in: dir, name: "receiver")
        let sender = try BackgroundProcess(Tools.rtcshare, [
            "--source", "testsrc", "--size", "640x360", "--fps", "20", "--bitrate", "\(Self.bitrate)",
            "--peer", "127.0.0.1:\(relayPort)", "--srtp-key", key, "--audio", "none",
            "--duration", "\(Self.seconds)", "--stats-json", txJSON,
        ], in: dir, name: "sender")
        let status = sender.wait(timeout: Double(Self.seconds) + 15)
        #expect(status == 0, "sender: \(sender.stderr)")
        let rxStatus = receiver.wait(timeout: 10)
        #expect(rxStatus == 0, "receiver: \(receiver.stderr)")
        relay.stop()

        let dropped = relay.toReceiver.int("lost"), feedback = relay.toSender.int("forwarded")
        #expect(dropped > 0 && feedback > 0, "relay: \(dropped) dropped, \(feedback) back")
        // The sender's per-second lines: the target starts at the configured rate and falls.
        let lines = try String(contentsOfFile: txJSON, encoding: .utf8).split(separator: "\n")
        let targets = lines.compactMap { line -> Int? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return (object["target_kbps"] as? NSNumber)?.intValue
        }
        #expect(targets.count >= Self.seconds - 1, "\(lines.count) stats lines")
        let lowest = try #require(targets.min())
        #expect(lowest < Self.bitrate * 3 / 4, "targets \(targets)\nsender: \(sender.stderr)\nreceiver: \(receiver.stderr)\n\(lines.last ?? "")")
        #expect(sender.stderr.contains("bitrate changed"), "sender: \(sender.stderr)")
        let lossSeen = lines.contains { $0.contains("\"fraction_lost\":") && !$0.contains("\"fraction_lost\":null") && !$0.contains("\"fraction_lost\":0.0e-3") }
        #expect(lossSeen, "the sender saw the receiver's loss reports")
        // The receiver kept decoding through the loss (NACK and keyframes repair it).
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json)))
        let stats = try #require(object as? [String: Any])
        let frames = (stats["frames"] as? NSNumber)?.intValue ?? 0
        let nacked = (stats["packets_nacked"] as? NSNumber)?.intValue ?? 0
        #expect(frames >= Self.seconds * 20 / 4, "receiver: \(receiver.stderr)")
        #expect(nacked > 0, "\(stats)")
    }

    /// The Opus encoder prepares for the loss the receiver reports on the audio stream: its
    /// level (`audio_fec_loss_pct` in the sender's statistics) falls from 5 % to 0 on a clean
    /// path and stays at 5 % or more (10 % mostly) through a relay losing 12 % of the audio.
    @Test(arguments: [(0, 0...0), (12, 5...20)])
    func theOpusEncoderPreparesForTheReportedLoss(loss: Int, expected: ClosedRange<Int>) throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let base = try Tools.freeUDPPorts(count: 8)
        let relayPort = base, receiverPort = base + 4
        let relay = try ImpairmentRelay(front: relayPort + 2, receiverPort: receiverPort + 2,
                                        options: ["--loss", "\(loss)", "--seed", "4"], in: dir)
        defer { relay.stop() }
        let key = Data((0..<30).map { UInt8(truncatingIfNeeded: $0 &* 41 &+ 5) }).base64EncodedString()
        let txJSON = dir.appendingPathComponent("tx.jsonl").path
        let receiver = try BackgroundProcess(Tools.rtcshare, [
            "receive", "--listen", "127.0.0.1:\(receiverPort)", "--srtp-key", key, "--idle-timeout", "3",
        ], in: dir, name: "receiver")
        #expect(receiver.waitForOutput(containing: "listening on", timeout: 10), "receiver: \(receiver.stderr)")
        // Video straight to the receiver, audio through the relay.
        let sender = try BackgroundProcess(Tools.rtcshare, [
            "--source", "testsrc", "--size", "320x240", "--fps", "20", "--audio", "testtone",
            "--peer", "127.0.0.1:\(receiverPort)", "--audio-peer", "127.0.0.1:\(relayPort + 2)", "--srtp-key", key,
            "--duration", "8", "--stats-json", txJSON,
        ], in: dir, name: "sender")
        #expect(sender.wait(timeout: 25) == 0, "sender: \(sender.stderr)")
        #expect(receiver.wait(timeout: 10) == 0, "receiver: \(receiver.stderr)")
        relay.stop()
        let levels = try String(contentsOfFile: txJSON, encoding: .utf8).split(separator: "\n").compactMap { line -> Int? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return (object["audio_fec_loss_pct"] as? NSNumber)?.intValue
        }
        #expect(levels.first == 5, "before any report: \(levels)")
        #expect(levels.last.map(expected.contains) == true, "levels \(levels); relay lost \(relay.toReceiver.int("lost"))")
    }
}
