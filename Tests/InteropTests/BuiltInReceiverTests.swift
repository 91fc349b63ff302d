import Foundation
import RTCShareRTP
import TestSupport
import Testing

/// `rtcshare --peer … --sdp x.sdp` into `rtcshare receive --sdp x.sdp`, both real binaries:
/// the receiver's frame-marker counts agree with the sender's summary.
@Suite(.serialized) struct BuiltInReceiverTests {
    static let width = 320, height = 240, seconds = 3

    /// The sender's summary numbers: frames sent, repeats, and source frames dropped before
    /// encoding ("N frames in … (R repeats, …); source S frames, dropped A too fast + B queue + C encoder").
    struct SenderSummary {
        var frames = 0, repeats = 0, dropped = 0
        init?(_ stderr: String) {
            guard let line = stderr.split(separator: "\n").last(where: { $0.contains(" frames in ") }) else { return nil }
            let words = line.split(whereSeparator: { " (),;".contains($0) })
            func before(_ word: String, from: Int = 0) -> Int? {
                guard let i = words[from...].firstIndex(where: { $0 == word }), i > 0 else { return nil }
                return Int(words[i - 1])
            }
            guard let f = before("frames"), let r = before("repeats") else { return nil }
            frames = f
            repeats = r
            if let d = words.firstIndex(of: "dropped") {
                dropped = words[(d + 1)...].prefix(8).compactMap { Int($0) }.reduce(0, +)
            }
        }
    }

    /// Runs sender and receiver; returns the sender's stderr, the receiver's stderr and its JSON.
    private func run(senderExtra: [String], receiverExtra: [String] = [],
                     dir: URL) throws -> (String, String, [String: Any]) {
        let port = try Tools.freeUDPPorts(count: 4)
        let sdpPath = dir.appendingPathComponent("x.sdp").path
        let sender = try BackgroundProcess(Tools.rtcshare, [
            "--source", "testsrc", "--size", "\(Self.width)x\(Self.height)", "--fps", "20",
            "--peer", "127.0.0.1:\(port)", "--sdp", sdpPath, "--start-delay", "2",
            "--duration", "\(Self.seconds)",
        ] + senderExtra, in: dir, name: "sender")
        guard Tools.waitForFile(sdpPath, timeout: 10, while: { sender.isRunning }) else {
            throw Tools.DecodeError(message: "no SDP written: \(sender.stderr)")
        }
        let json = dir.appendingPathComponent("rx.json").path
        let receiver = try BackgroundProcess(Tools.rtcshare, [
            "receive", "--sdp", sdpPath, "--stats-json", json, "--idle-timeout", "2",
        ] + receiverExtra, in: dir, name: "receiver")
        let status = sender.wait(timeout: Double(Self.seconds) + 15)
        #expect(status == 0, "sender: \(sender.stderr)")
        // The receiver stops on the sender's BYE (or 2 s after the last packet).
        let rxStatus = receiver.wait(timeout: 10)
        #expect(rxStatus == 0, "receiver: \(receiver.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json)))
        return (sender.stderr, receiver.stderr, try #require(object as? [String: Any]))
    }

    private func int(_ stats: [String: Any], _ key: String) -> Int { (stats[key] as? NSNumber)?.intValue ?? -1 }

    @Test func receiverCountsAgreeWithTheSendersSummary() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let y4m = dir.appendingPathComponent("rx.y4m").path
        let (tx, rx, stats) = try run(senderExtra: ["--audio", "testtone", "--rtx"], receiverExtra: ["--y4m", y4m], dir: dir)
        let sent = try #require(SenderSummary(tx), "no sender summary: \(tx)")
        let line = try #require(rx.split(separator: "\n").last(where: { $0.hasPrefix("rtcshare receive: frames ") }),
                                "no summary line: \(rx)")
        #expect(line.contains("latency p50 ") && line.contains("; plis "))
        #expect(int(stats, "frames") == sent.frames, "receiver: \(rx)\nsender: \(tx)")
        #expect(int(stats, "frames_out_of_order") == 0)
        #expect(int(stats, "markers_unreadable") == 0)
        // Loopback loses nothing. A frame the sender thins out still becomes its kept frame, so
        // a later repeat can show that frame's marker for the first time: the receiver sees at
        // most the sender's repeats as repeats, and every repeat it does not see as one fills a
        // marker gap the sender's drops opened. Drops before the first frame or after the last
        // open no gap, hence at most.
        #expect(int(stats, "frames_lost") == 0)
        #expect(!tx.contains("bitrate changed"), "no loss, no back-off: \(tx)")
        let repeatsShowingNewMarkers = sent.repeats - int(stats, "frames_repeated")
        #expect(repeatsShowingNewMarkers >= 0, "receiver: \(rx)\nsender: \(tx)")
        #expect(int(stats, "frames_skipped") + repeatsShowingNewMarkers <= sent.dropped, "receiver: \(rx)\nsender: \(tx)")
        #expect(int(stats, "packets_lost") == 0)
        #expect(int(stats, "srtp_failures") == 0)
        #expect(int(stats, "width") == Self.width && int(stats, "height") == Self.height)
        let p50 = try #require((stats["latency_p50_ms"] as? NSNumber)?.doubleValue)
        #expect(p50 > 0 && p50 < 500, "latency p50 \(p50) ms")
        #expect(int(stats, "audio_packets") >= Self.seconds * 45)
        #expect(int(stats, "audio_concealed") <= 2)
        // YUV4MPEG2: header, then FRAME + I420 per decoded frame.
        let data = try Data(contentsOf: URL(fileURLWithPath: y4m))
        let header = "YUV4MPEG2 W\(Self.width) H\(Self.height) F20:1 Ip A1:1 C420jpeg\n"
        #expect(data.prefix(header.utf8.count) == Data(header.utf8))
        #expect(data.count == header.utf8.count + sent.frames * (6 + Self.width * Self.height * 3 / 2))
    }

    @Test func bothEndsRunTheTransportWideLoop() throws {
        // The sender's SDP asks for transport-cc; the receiver answers every ~50 ms; on loopback
        // the delay-based estimate sees no queue and stays at the configured rate.
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let txJSON = dir.appendingPathComponent("tx.jsonl").path
        let (tx, rx, stats) = try run(senderExtra: ["--bitrate", "800", "--stats-json", txJSON], dir: dir)
        let sdp = try String(contentsOfFile: dir.appendingPathComponent("x.sdp").path, encoding: .utf8)
        #expect(sdp.contains("a=rtcp-fb:96 transport-cc"))
        let lines = try String(contentsOfFile: txJSON, encoding: .utf8).split(separator: "\n")
        let last = try #require(lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        // One a frame at most (one packet each at this size, each answered within 50 ms), over
        // the seconds the last line covers.
        let feedback = int(last, "transport_feedback")
        let covered = (last["t"] as? NSNumber)?.doubleValue ?? 0
        #expect(covered >= 1 && Double(feedback) >= covered * 10, "\(feedback) transport-wide feedbacks\nsender: \(tx)\nreceiver: \(rx)")
        #expect(int(last, "delay_based_kbps") == 800, "\(last)")
        #expect(int(last, "target_kbps") == 800 && int(last, "target_fps") == 20)
        #expect(int(stats, "frames_lost") == 0 && int(stats, "packets_lost") == 0, "receiver: \(rx)")
    }

    @Test func gcmProfileWithoutAudio() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (tx, rx, stats) = try run(senderExtra: ["--srtp-profile", "AEAD_AES_128_GCM"], dir: dir)
        let sent = try #require(SenderSummary(tx), "no sender summary: \(tx)")
        #expect(int(stats, "frames") == sent.frames, "receiver: \(rx)\nsender: \(tx)")
        #expect(int(stats, "srtp_failures") == 0)
        #expect(int(stats, "audio_packets") == 0)
        #expect(int(stats, "markers_unreadable") == 0)
    }

    @Test func anH264ShareIsDecodedAndTheCountsAgree() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (tx, rx, stats) = try run(senderExtra: ["--codec", "h264", "--audio", "testtone", "--rtx"], dir: dir)
        let sent = try #require(SenderSummary(tx), "no sender summary: \(tx)")
        #expect(tx.contains("H.264"), "\(tx)")
        #expect(sent.frames > 0)
        #expect(int(stats, "frames") == sent.frames, "receiver: \(rx)\nsender: \(tx)")
        #expect(int(stats, "width") == Self.width && int(stats, "height") == Self.height)
        #expect(int(stats, "frames_lost") == 0)
        #expect(int(stats, "markers_unreadable") == 0)
        #expect(int(stats, "frames_out_of_order") == 0)
        #expect(int(stats, "srtp_failures") == 0)
        #expect(int(stats, "audio_packets") > 0)
    }

    /// Another sender's H.264: ffmpeg (libx264, its RTP muxer's FU-A packetization, SPS/PPS
    /// in band) into `rtcshare receive --listen … --codec h264`, no SDP between them.
    @Test func ffmpegsH264IsDecodedWithTheCodecOption() throws {
        let ffmpeg = try #require(Tools.which("ffmpeg"), "ffmpeg is not installed (scripts/setup installs it)")
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 4)
        let key = String(repeating: "C", count: 40)
        let json = dir.appendingPathComponent("rx.json").path
        let receiver = try BackgroundProcess(Tools.rtcshare, [
            "receive", "--listen", "127.0.0.1:\(port)", "--srtp-key", key, "--codec", "h264",
            "--stats-json", json, "--idle-timeout", "2",
        ], in: dir, name: "receiver")
        #expect(receiver.waitForOutput(containing: "listening on", timeout: 10), "\(receiver.stderr)")
        let frames = 40
        let sent = try Tools.run(ffmpeg, [
            "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi",
            "-i", "testsrc=size=\(Self.width)x\(Self.height):rate=20", "-frames:v", "\(frames)",
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-profile:v", "baseline",
            "-pix_fmt", "yuv420p", "-payload_type", "102", "-f", "rtp",
            "-srtp_out_suite", "AES_CM_128_HMAC_SHA1_80", "-srtp_out_params", key,
            "srtp://127.0.0.1:\(port)?pkt_size=1200",
        ], timeout: 30)
        #expect(sent.status == 0, "ffmpeg: \(sent.stderr)")
        #expect(receiver.wait(timeout: 10) == 0, "receiver: \(receiver.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json)))
        let stats = try #require(object as? [String: Any])
        #expect(int(stats, "frames") == frames, "receiver: \(receiver.stderr)")
        #expect(int(stats, "width") == Self.width && int(stats, "height") == Self.height)
        #expect(int(stats, "frames_undecodable") == 0)
        #expect(int(stats, "srtp_failures") == 0)
    }

    /// The receiver leaves mid-share: its RTCP BYE reaches the sender, which says so and goes on
    /// to its duration (a receiver may come back).
    @Test func aReceiverThatLeavesSaysGoodbyeAndTheSenderSaysSo() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 4)
        let key = String(repeating: "B", count: 40)  // SRTP: the goodbye comes as SRTCP
        let receiver = try BackgroundProcess(Tools.rtcshare, [
            "receive", "--listen", "127.0.0.1:\(port)", "--srtp-key", key, "--duration", "3",
        ], in: dir, name: "receiver")
        #expect(receiver.waitForOutput(containing: "listening on", timeout: 10), "\(receiver.stderr)")
        let sender = try BackgroundProcess(Tools.rtcshare, [
            "--source", "testsrc", "--size", "320x240", "--fps", "20", "--peer", "127.0.0.1:\(port)",
            "--srtp-key", key, "--duration", "6",
        ], in: dir, name: "sender")
        #expect(receiver.wait(timeout: 20) == 0, "receiver: \(receiver.stderr)")
        #expect(sender.wait(timeout: 20) == 0, "sender: \(sender.stderr)")
        #expect(sender.stderr.contains("the receiver (peer 127.0.0.1:\(port)) left (RTCP BYE); still sending"),
                "sender: \(sender.stderr)")
        #expect(sender.stderr.contains("finished: duration reached"), "sender: \(sender.stderr)")
    }

    @Test func aWrongKeyIsSaidOnStderrAndTheReceiverExitsNonZero() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 4)
        // The receiver first, with a key that is not the sender's (both 30 bytes, base64).
        let wrong = String(repeating: "A", count: 40)
        let right = String(repeating: "B", count: 40)
        let json = dir.appendingPathComponent("rx.json").path
        let receiver = try BackgroundProcess(Tools.rtcshare, [
            "receive", "--listen", "127.0.0.1:\(port)", "--srtp-key", wrong, "--stats-json", json,
            "--idle-timeout", "2",
        ], in: dir, name: "receiver")
        let sender = try BackgroundProcess(Tools.rtcshare, [
            "--source", "testsrc", "--size", "320x240", "--fps", "20", "--peer", "127.0.0.1:\(port)",
            "--srtp-key", right, "--duration", "2",
        ], in: dir, name: "sender")
        #expect(sender.wait(timeout: 20) == 0, "sender: \(sender.stderr)")
        let status = receiver.wait(timeout: 10)
        #expect(status == 1, "receiver: \(receiver.stderr)")
        #expect(receiver.stderr.contains("failed SRTP authentication and none decrypted yet"), "\(receiver.stderr)")
        #expect(receiver.stderr.contains("none could be decrypted: the SRTP key or profile is not the sender's"))
        // The counts are still written.
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json)))
        let stats = try #require(object as? [String: Any])
        #expect(int(stats, "srtp_failures") >= 20)
        #expect(int(stats, "frames") == 0)
    }
}
