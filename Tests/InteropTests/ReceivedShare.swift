import Foundation
import Testing
import TestSupport

/// A share sent over `--peer` to `rtcshare receive`, as the capture tests check one: the
/// receiver started on the SDP the sender writes, both awaited, and what each reported, with
/// the checks every such test makes (≥ 95 % of the frames sent received, every frame marker
/// readable).
struct ReceivedShare {
    let sent: BuiltInReceiverTests.SenderSummary
    let stats: [String: Any]
    let receiverLog: String

    /// The receiver's figure `key` (-1: absent).
    func int(_ key: String) -> Int { (stats[key] as? NSNumber)?.intValue ?? -1 }

    /// Starts `rtcshare receive` once the sender has written `sdp`, its stats into
    /// `dir/NAME-rx.json`; then waits for both.
    init(sender: BackgroundProcess, sdp: String, in dir: URL, name: String,
         sdpTimeout: TimeInterval, senderTimeout: TimeInterval) throws {
        try #require(Tools.waitForFile(sdp, timeout: sdpTimeout, while: { sender.isRunning }), "no SDP: \(sender.stderr)")
        let rxJSON = dir.appendingPathComponent("\(name)-rx.json").path
        let receiver = try BackgroundProcess(Tools.rtcshare, ["receive", "--sdp", sdp, "--stats-json", rxJSON, "--idle-timeout", "3"],
                                             in: dir, name: "receiver")
        #expect(sender.wait(timeout: senderTimeout) == 0, "sender: \(sender.stderr)")
        #expect(receiver.wait(timeout: 15) == 0, "receiver: \(receiver.stderr)")
        sent = try #require(BuiltInReceiverTests.SenderSummary(sender.stderr), "\(sender.stderr)")
        stats = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: rxJSON))) as? [String: Any])
        receiverLog = receiver.stderr
        #expect(Double(int("frames")) >= 0.95 * Double(sent.frames) && sent.frames > 0,
                "received \(int("frames")) of \(sent.frames)\nreceiver: \(receiverLog)")
        #expect(int("markers_unreadable") == 0, "\(stats)")
    }
}
