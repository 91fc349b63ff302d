import Foundation
import Testing
import TestSupport

/// A share sent over `--peer` to `rtcshare receive`, as the capture tests check one, in two
/// halves so a test can run its own timeline (signals to the client, CPU readings) while the
/// share runs: `start` starts the sender, waits for the SDP it writes and starts the receiver
/// on it; `Started.finish` waits for both and makes the checks every such test makes (≥ 95 %
/// of the frames sent received, every frame marker readable).
struct ReceivedShare {
    let sent: BuiltInReceiverTests.SenderSummary
    let stats: [String: Any]
    let receiverLog: String
    /// The sender's `--stats-json` lines.
    let senderStats: StatsLines
    /// The decoded pictures the receiver wrote (`start(…, y4m: true)`), else nil.
    let y4m: String?

    /// The receiver's figure `key` (-1: absent).
    func int(_ key: String) -> Int { (stats[key] as? NSNumber)?.intValue ?? -1 }

    /// Starts the sender through `run` with `arguments` and the peer's: a free loopback port,
    /// `--sdp dir/NAME.sdp`, `--stats-json dir/NAME-tx.jsonl`; then, once the SDP is written,
    /// `rtcshare receive` on it, its stats into `dir/NAME-rx.json` and, with `y4m`, its decoded
    /// pictures into `dir/NAME-rx.y4m`.
    static func start(_ arguments: [String], in dir: URL, name: String, sdpTimeout: TimeInterval, y4m: Bool = false,
                      sender run: ([String]) throws -> BackgroundProcess) throws -> Started {
        let port = try Tools.freeUDPPorts(count: 4)
        let sdp = dir.appendingPathComponent("\(name).sdp").path, txJSON = dir.appendingPathComponent("\(name)-tx.jsonl").path
        let sender = try run(arguments + ["--peer", "127.0.0.1:\(port)", "--sdp", sdp, "--stats-json", txJSON])
        try #require(Tools.waitForFile(sdp, timeout: sdpTimeout, while: { sender.isRunning }), "no SDP: \(sender.stderr)")
        let rxJSON = dir.appendingPathComponent("\(name)-rx.json").path
        let pictures = y4m ? dir.appendingPathComponent("\(name)-rx.y4m").path : nil
        let receiver = try BackgroundProcess(Tools.rtcshare, ["receive", "--sdp", sdp, "--stats-json", rxJSON, "--idle-timeout", "3"]
                                                 + (pictures.map { ["--y4m", $0] } ?? []),
                                             in: dir, name: "receiver")
        return Started(sender: sender, receiver: receiver, txJSON: txJSON, rxJSON: rxJSON, y4m: pictures)
    }

    /// Sender and receiver running.
    struct Started {
        let sender: BackgroundProcess
        let receiver: BackgroundProcess
        let txJSON: String
        let rxJSON: String
        let y4m: String?

        /// Waits for both to end and reads what each reported.
        func finish(senderTimeout: TimeInterval) throws -> ReceivedShare {
            #expect(sender.wait(timeout: senderTimeout) == 0, "sender: \(sender.stderr)")
            #expect(receiver.wait(timeout: 15) == 0, "receiver: \(receiver.stderr)")
            let sent = try #require(BuiltInReceiverTests.SenderSummary(sender.stderr), "\(sender.stderr)")
            let stats = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: rxJSON))) as? [String: Any])
            let share = ReceivedShare(sent: sent, stats: stats, receiverLog: receiver.stderr, senderStats: StatsLines(txJSON), y4m: y4m)
            #expect(Double(share.int("frames")) >= 0.95 * Double(sent.frames) && sent.frames > 0,
                    "received \(share.int("frames")) of \(sent.frames)\nreceiver: \(receiver.stderr)\nsender: \(sender.stderr)")
            #expect(share.int("markers_unreadable") == 0, "\(stats)")
            return share
        }
    }

    /// The luma plane of the last picture the receiver wrote, `width` x `height` 4:2:0.
    func lastPicture(width: Int, height: Int) throws -> Data {
        let data = try Data(contentsOf: URL(fileURLWithPath: try #require(y4m, "the receiver wrote no y4m")))
        let frameBytes = 6 + width * height * 3 / 2  // "FRAME\n" and the three planes
        let header = try #require(data.firstIndex(of: 0x0a)) + 1
        let count = (data.count - header) / frameBytes
        try #require(count > 0)
        let start = header + (count - 1) * frameBytes + 6
        return data.subdata(in: start..<(start + width * height))
    }
}
