import Foundation
import RTCShareIO
import RTCShareRTP
import TestSupport
import Testing

/// A 1920x1080 VP8 share's keyframes come in bands behind a flat picture, hidden from the
/// viewer (RFC 6386's show_frame 0) until the picture is whole: receivers nobody here wrote
/// take the hidden frames into their references and show nothing for them — ffmpeg and
/// GStreamer from the SDP, aiortc over WHIP, and `rtcshare receive`. Each shows at most the
/// frames rtcshare sent to be shown and nearly all of them, and (where the whole picture is
/// written out) no picture of a sweep's flat part.
@Suite(.serialized) struct ProgressiveKeyframeInteropTests {
    static let width = 1920, height = 1080, seconds = 10
    /// What the receivers write of each picture: its left 320 columns (the whole picture is
    /// 2 MiB a frame), which hold the frame marker and the left of testsrc's document window.
    static let cropWidth = 320

    /// The frames rtcshare coded and, of those, hidden ("N frames in", "N hidden").
    struct Sent {
        var frames = 0, hidden = 0
        init?(_ stderr: String) {
            guard let line = stderr.split(separator: "\n").last(where: { $0.contains(" frames in ") }) else { return nil }
            let words = line.split(whereSeparator: { " (),;".contains($0) })
            guard let f = words.firstIndex(of: "frames").flatMap({ Int(words[$0 - 1]) }) else { return nil }
            frames = f
            hidden = words.firstIndex(of: "hidden").flatMap { Int(words[$0 - 1]) } ?? 0
        }
        var shown: Int { frames - hidden }
    }

    /// The share, with a keyframe every 2 s (each a flat one and a sweep at this size).
    private func startSender(port: Int, dir: URL) throws -> (BackgroundProcess, SessionDescription) {
        let sdpPath = dir.appendingPathComponent("x.sdp").path
        let sender = try BackgroundProcess(Tools.rtcshare, [
            "--source", "testsrc", "--size", "\(Self.width)x\(Self.height)", "--fps", "15",
            "--peer", "127.0.0.1:\(port)", "--sdp", sdpPath, "--start-delay", "2",
            "--duration", "\(Self.seconds)", "--keyframe-interval", "2",
        ], in: dir, name: "rtcshare")
        guard Tools.waitForFile(sdpPath, timeout: 20, while: { sender.isRunning }) else {
            throw Tools.DecodeError(message: "no SDP written: \(sender.stderr)")
        }
        return (sender, try SessionDescription.parse(try String(contentsOfFile: sdpPath, encoding: .utf8)))
    }

    /// The pictures a receiver wrote (the left `cropWidth` columns, luma): as many as were sent
    /// to be shown at most, nearly all of those, markers in order, and none with testsrc's
    /// window paper below its text flat at another level (the picture's mean, which the flat
    /// keyframe is made of): a strip of it in the sweep's last band (y 958...963, macroblock row
    /// 59-60, coded by the last band frame) is paper white (235) in every picture shown.
    private func checkPictures(_ luma: Data, sent: Sent, receiver: String) {
        let w = Self.cropWidth, h = Self.height
        #expect(luma.count % (w * h) == 0, "\(receiver): \(luma.count) bytes is no whole number of pictures")
        let pictures = Tools.lumaFrames(luma, width: w, height: h)
        let markers = Tools.markers(pictures, width: w, height: h)
        let readable = markers.compactMap { $0 }
        #expect(sent.hidden >= 8, "keyframes swept in hidden: \(sent.hidden)")
        #expect(pictures.count <= sent.shown, "\(receiver) showed \(pictures.count) pictures of \(sent.shown) sent to be shown")
        #expect(Double(pictures.count) >= 0.95 * Double(sent.shown), "\(receiver) showed \(pictures.count) of \(sent.shown)")
        // Nearly all readable: on a loaded machine the rate falls and with it the marker's
        // sharpness now and then (a flat picture reads, as all ones: the paper below tells).
        #expect(Double(readable.count) >= 0.9 * Double(pictures.count), "\(receiver): \(pictures.count - readable.count) markers unreadable")
        // In order; the same counter twice is the sender's filler repeating a frame.
        let backwards = zip(readable, readable.dropFirst()).filter { $0 > $1 }
        #expect(backwards.isEmpty, "\(receiver): markers out of order: \(backwards.prefix(8)) in \(readable)")
        let paper = pictures.map { picture in
            picture.withUnsafeBytes { raw -> Int in
                var sum = 0, count = 0
                for y in 958...963 { for x in 176..<312 { sum += Int(raw[y * w + x]); count += 1 } }
                return sum / count
            }
        }
        let unfinished = paper.enumerated().filter { $0.element < 215 }
        #expect(unfinished.isEmpty, "\(receiver): \(unfinished.count) pictures with the paper at another level: \(unfinished.prefix(8))")
    }

    @Test func ffmpegShowsNoPictureOfASweep() throws {
        let ffmpeg = try #require(Tools.which("ffmpeg"), "ffmpeg is not installed (scripts/setup installs it)")
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 2)
        let (sender, _) = try startSender(port: port, dir: dir)
        let video = dir.appendingPathComponent("v.gray").path
        let receiver = try BackgroundProcess(ffmpeg, [
            "-v", "error", "-protocol_whitelist", "file,udp,rtp,srtp,crypto", "-i", dir.appendingPathComponent("x.sdp").path,
            "-map", "0:v:0", "-fps_mode", "passthrough", "-vf", "crop=\(Self.cropWidth):\(Self.height):0:0",
            "-f", "rawvideo", "-pix_fmt", "gray", video,
        ], in: dir, name: "ffmpeg")
        let status = sender.wait(timeout: Double(Self.seconds) + 40)
        #expect(status == 0, "rtcshare: \(sender.stderr.suffix(600))")
        let sent = try #require(Sent(sender.stderr), "no summary: \(sender.stderr.suffix(600))")
        Tools.waitForFileToSettle(video, holding: sent.shown * Self.cropWidth * Self.height)
        receiver.stop()
        print("ProgressiveKeyframeInteropTests ffmpeg: sent \(sent.frames), \(sent.hidden) hidden")
        checkPictures(try Data(contentsOf: URL(fileURLWithPath: video)), sent: sent, receiver: "ffmpeg \(receiver.stderr.suffix(400))")
    }

    @Test func gstreamerShowsNoPictureOfASweep() throws {
        let gst = try #require(Tools.which("gst-launch-1.0"), "GStreamer is not installed (scripts/setup installs it)")
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 2)
        let (sender, sdp) = try startSender(port: port, dir: dir)
        let video = dir.appendingPathComponent("v.gray").path
        // The receiving pipeline of PeerInteropTests, the picture cropped before it is written,
        // and the socket read on a thread of its own: decoding and converting 1080p in the
        // thread that reads it lost half the frames at the socket here (before the sweeps were
        // hidden as after).
        var pipeline = try GStreamerPipeline.receiving(sdp, video: video, audio: dir.appendingPathComponent("a.pcm").path)
        let decrypt = try #require(pipeline.firstIndex(of: "srtpdec"))
        pipeline.insert(contentsOf: ["queue", "max-size-buffers=0", "max-size-bytes=0", "max-size-time=0", "!"], at: decrypt)
        let convert = try #require(pipeline.firstIndex(of: "videoconvert"))
        pipeline.insert(contentsOf: ["videocrop", "right=\(Self.width - Self.cropWidth)", "!"], at: convert)
        let receiver = try BackgroundProcess(gst, ["-q"] + pipeline, in: dir, name: "gst")
        let status = sender.wait(timeout: Double(Self.seconds) + 40)
        #expect(status == 0, "rtcshare: \(sender.stderr.suffix(600))")
        let sent = try #require(Sent(sender.stderr), "no summary: \(sender.stderr.suffix(600))")
        Tools.waitForFileToSettle(video, holding: sent.shown * Self.cropWidth * Self.height)
        receiver.stop()
        print("ProgressiveKeyframeInteropTests GStreamer: sent \(sent.frames), \(sent.hidden) hidden")
        checkPictures(try Data(contentsOf: URL(fileURLWithPath: video)), sent: sent, receiver: "GStreamer \(receiver.stderr.suffix(400))")
    }

    /// The built-in receiver counts the pictures it decoded and reads each one's marker, and
    /// counts the hidden frames apart (decoded, no picture).
    @Test func rtcshareReceiveShowsNoPictureOfASweep() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 2)
        let json = dir.appendingPathComponent("rx.json").path
        let receiver = try BackgroundProcess(Tools.rtcshare, [
            "receive", "--listen", "127.0.0.1:\(port)", "--insecure", "--stats-json", json, "--idle-timeout", "5",
        ], in: dir, name: "receiver")
        let sender = try BackgroundProcess(Tools.rtcshare, [
            "--source", "testsrc", "--size", "\(Self.width)x\(Self.height)", "--fps", "15",
            "--peer", "127.0.0.1:\(port)", "--insecure", "--duration", "\(Self.seconds)", "--keyframe-interval", "2",
        ], in: dir, name: "sender")
        #expect(sender.wait(timeout: Double(Self.seconds) + 40) == 0, "sender: \(sender.stderr.suffix(600))")
        #expect(receiver.wait(timeout: 30) == 0, "receiver: \(receiver.stderr.suffix(600))")
        let sent = try #require(Sent(sender.stderr), "no summary: \(sender.stderr.suffix(600))")
        let stats = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let frames = (stats["frames"] as? NSNumber)?.intValue ?? 0
        let unreadable = (stats["markers_unreadable"] as? NSNumber)?.intValue ?? -1
        let hidden = (stats["frames_hidden"] as? NSNumber)?.intValue ?? -1
        print("ProgressiveKeyframeInteropTests rtcshare receive: sent \(sent.frames), \(sent.hidden) hidden, decoded \(frames), \(hidden) hidden")
        #expect(sent.hidden >= 8, "keyframes swept in hidden: \(sent.hidden)")
        #expect(frames <= sent.shown && Double(frames) >= 0.95 * Double(sent.shown), "showed \(frames) of \(sent.shown)")
        // The hidden ones decoded without an error and counted as such.
        #expect(hidden <= sent.hidden && Double(hidden) >= 0.95 * Double(sent.hidden), "decoded \(hidden) hidden of \(sent.hidden)")
        #expect(unreadable >= 0 && Double(unreadable) <= 0.1 * Double(frames), "\(stats)")
    }

    /// aiortc (libvpx through PyAV) over WHIP: the share's first keyframe is a hidden sweep
    /// (and any PLI's); it shows the frames after it, as many as were sent to be shown.
    @Test func aiortcOverWHIPShowsTheFramesSentToBeShown() throws {
        let server = try WHIPInteropTests.Server()
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (status, stderr, stats) = try WHIPInteropTests.share([
            "--whip", server.base + "/whip/sweep1080", "--whip-bind", "127.0.0.1:0", "--codec", "vp8",
            "--source", "testsrc", "--size", "\(Self.width)x\(Self.height)", "--fps", "15",
            "--duration", "\(Self.seconds)",
        ], seconds: Double(Self.seconds), in: dir)
        #expect(status == 0, "rtcshare: \(stderr.suffix(600))")
        let sent = try #require(Sent(stderr), "no summary: \(stderr.suffix(600))")
        let notSent = stats["frames_dropped_connecting"] as? Int ?? 0
        let own = (try server.summary(finished: "sweep1080")["by_session"] as? [String: Any])?["sweep1080"] as? [String: Any] ?? [:]
        let decoded = own["video_frames"] as? Int ?? 0
        let markers = own["markers_read"] as? Int ?? -1
        print("ProgressiveKeyframeInteropTests aiortc: sent \(sent.frames), \(sent.hidden) hidden, \(notSent) not sent, decoded \(decoded)")
        #expect(sent.hidden >= 8, "keyframes swept in hidden: \(sent.hidden)")
        #expect(decoded <= sent.shown, "aiortc showed \(decoded) of \(sent.shown) sent to be shown")
        #expect(Double(decoded) >= 0.95 * Double(sent.shown - notSent), "aiortc showed \(decoded) of \(sent.shown - notSent)")
        #expect(Double(markers) >= 0.9 * Double(decoded), "\(decoded - markers) markers unreadable")
    }

    /// `--peer`'s periodic keyframe, for a receiver that sends no PLI: every 6 s by default where
    /// VP8 keyframes sweep in hidden (1920x1080), every 3 s below (1280x720), and as often as
    /// `--keyframe-interval` says where it is given.
    @Test(arguments: [("1920x1080", nil, 3), ("1280x720", nil, 5), ("1920x1080", "3", 5)] as [(String, String?, Int)])
    func thePeriodicKeyframeAt1080pComesEvery6Seconds(size: String, interval: String?, keyframes: Int) throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 2)
        // A receiver that says nothing: the datagrams land in a socket nobody reads.
        let silent = try UDPSocket(bindingTo: try SocketAddress(host: "127.0.0.1", port: port))
        defer { _ = silent }
        let run = try Tools.run(Tools.rtcshare, [
            "--source", "testsrc", "--size", size, "--fps", "15", "--peer", "127.0.0.1:\(port)", "--insecure",
            "--duration", "14",
        ] + (interval.map { ["--keyframe-interval", $0] } ?? []), timeout: 60)
        #expect(run.status == 0, "\(run.stderr.suffix(600))")
        let line = run.stderr.split(separator: "\n").last { $0.contains(" frames in ") } ?? ""
        let words = line.split(whereSeparator: { " (),;".contains($0) })
        let coded = words.firstIndex(of: "keyframes").flatMap { Int(words[$0 - 1]) }
        // At 0, 6 and 12 s; at 0, 3, 6, 9 and 12 s.
        #expect(coded == keyframes, "\(line)")
    }
}
