import Foundation
import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP
import TestSupport
import Testing

/// `rtcshare --peer 127.0.0.1:P --sdp x.sdp`: receivers nobody here wrote (ffmpeg, GStreamer)
/// open the SDP rtcshare wrote, take its SRTP, and decode upright frames with readable markers —
/// VP8, and H.264 (`--codec h264`) for a source held upright and one turned as a phone (6).
@Suite(.serialized) struct PeerInteropTests {
    static let width = 320, height = 240, seconds = 10

    /// Starts rtcshare sending to 127.0.0.1:`port` with an SDP; returns it once the SDP exists.
    private func startSender(port: Int, dir: URL, extra: [String]) throws -> (BackgroundProcess, SessionDescription, String) {
        let sdpPath = dir.appendingPathComponent("x.sdp").path
        let sender = try BackgroundProcess(Tools.rtcshare, [
            "--source", "testsrc", "--size", "\(Self.width)x\(Self.height)", "--fps", "20",
            "--peer", "127.0.0.1:\(port)", "--sdp", sdpPath, "--start-delay", "2",
            "--duration", "\(Self.seconds)", "--keyframe-interval", "1",
        ] + extra, in: dir, name: "rtcshare")
        guard Tools.waitForFile(sdpPath, timeout: 10, while: { sender.isRunning }) else {
            throw Tools.DecodeError(message: "no SDP written: \(sender.stderr)")
        }
        let text = try String(contentsOfFile: sdpPath, encoding: .utf8)
        return (sender, try SessionDescription.parse(text), sdpPath)
    }

    /// Frames rtcshare says it sent ("N frames in").
    private func framesSent(_ stderr: String) -> Int? {
        guard let line = stderr.split(separator: "\n").last(where: { $0.contains(" frames in ") }) else { return nil }
        return line.split(separator: " ").firstIndex(of: "frames").flatMap { Int(line.split(separator: " ")[$0 - 1]) }
    }

    /// Checks decoded luma frames against what was sent: whole frames of the right size, enough
    /// of them, markers upright and in order.
    private func checkVideo(_ luma: Data, sent: Int, receiver: String) {
        #expect(luma.count % (Self.width * Self.height) == 0,
                "\(receiver): \(luma.count) bytes is no whole number of \(Self.width)x\(Self.height) frames")
        let frames = Tools.lumaFrames(luma, width: Self.width, height: Self.height)
        let markers = Tools.markers(frames, width: Self.width, height: Self.height)
        let readable = markers.compactMap { $0 }
        #expect(Double(frames.count) >= 0.95 * Double(sent), "\(receiver) decoded \(frames.count) of \(sent) frames")
        #expect(readable.count == frames.count, "\(receiver): \(frames.count - readable.count) frames with unreadable markers")
        #expect(zip(readable, readable.dropFirst()).allSatisfy { $0 <= $1 }, "\(receiver): markers out of order")
    }

    /// With and without RTCP muxed on the RTP port (ffmpeg takes both).
    @Test(arguments: [[], ["--separate-rtcp"]])
    func ffmpegPlaysTheSRTPStreamFromTheSDP(extra: [String]) throws {
        let ffmpeg = try #require(Tools.which("ffmpeg"), "ffmpeg is not installed (scripts/setup installs it)")
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 4)
        let (sender, sdp, sdpPath) = try startSender(port: port, dir: dir, extra: ["--audio", "testtone"] + extra)
        #expect(sdp.media.allSatisfy { $0.has("rtcp-mux") } == extra.isEmpty)
        #expect(sdp.media.map(\.transportProtocol) == ["RTP/SAVP", "RTP/SAVP"])
        #expect(sdp.media.first?.cryptos.first?.suite == "AES_CM_128_HMAC_SHA1_80")

        let video = dir.appendingPathComponent("v.gray").path, audio = dir.appendingPathComponent("a.pcm").path
        let receiver = try BackgroundProcess(ffmpeg, [
            "-v", "error", "-protocol_whitelist", "file,udp,rtp,srtp,crypto", "-i", sdpPath,
            "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray", video,
            "-map", "0:a:0", "-f", "s16le", "-ac", "1", "-ar", "48000", audio,
        ], in: dir, name: "ffmpeg")
        let status = sender.wait(timeout: Double(Self.seconds) + 15)
        #expect(status == 0, "rtcshare: \(sender.stderr)")
        let sent = try #require(framesSent(sender.stderr), "no summary: \(sender.stderr)")
        // Stopped once it has written what reached it: every frame sent, or no more coming.
        Tools.waitForFileToSettle(video, holding: sent * Self.width * Self.height)
        receiver.stop()
        checkVideo(try Data(contentsOf: URL(fileURLWithPath: video)), sent: sent, receiver: "ffmpeg \(receiver.stderr)")
        #expect(!sender.stderr.contains(try #require(sdp.media.first?.cryptos.first?.keyBase64)), "the key was logged")
        let pcm = try Data(contentsOf: URL(fileURLWithPath: audio))
        let samples = pcm.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let hz = try #require(AudioTests.frequency(samples), "no tone in \(pcm.count) bytes of audio")
        #expect(abs(hz - 440) < 4.4, "ffmpeg heard \(hz) Hz")
    }

    @Test(arguments: ["AES_CM_128_HMAC_SHA1_80", "AEAD_AES_128_GCM"])
    func gstreamerPlaysTheSRTPStreamFromTheSDP(profile: String) throws {
        let gst = try #require(Tools.which("gst-launch-1.0"), "GStreamer is not installed (scripts/setup installs it)")
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 4)
        let (sender, sdp, _) = try startSender(port: port, dir: dir, extra: ["--audio", "testtone", "--srtp-profile", profile])
        let video = dir.appendingPathComponent("v.gray").path, audio = dir.appendingPathComponent("a.pcm").path
        let pipeline = try GStreamerPipeline.receiving(sdp, video: video, audio: audio)
        let receiver = try BackgroundProcess(gst, ["-q"] + pipeline, in: dir, name: "gst")
        let status = sender.wait(timeout: Double(Self.seconds) + 15)
        #expect(status == 0, "rtcshare: \(sender.stderr)")
        let sent = try #require(framesSent(sender.stderr), "no summary: \(sender.stderr)")
        // Stopped once it has written what reached it: every frame sent, or no more coming.
        Tools.waitForFileToSettle(video, holding: sent * Self.width * Self.height)
        receiver.stop()
        checkVideo(try Data(contentsOf: URL(fileURLWithPath: video)), sent: sent, receiver: "GStreamer \(receiver.stderr)")
        let pcm = try Data(contentsOf: URL(fileURLWithPath: audio))
        let samples = pcm.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let hz = try #require(AudioTests.frequency(samples), "no tone in \(pcm.count) bytes of audio")
        #expect(abs(hz - 440) < 4.4, "GStreamer heard \(hz) Hz")
    }

    /// H.264 (RFC 6184 packetization-mode 1, constrained baseline): the SDP names it with its
    /// fmtp, and both receivers decode it — upright whether the source was (1) or was turned
    /// as a phone holds it (6, portrait buffers the pipeline turns back).
    @Test(arguments: ["ffmpeg", "gstreamer"], [1, 6])
    func h264PlaysFromTheSDP(receiverName: String, orientation: Int) throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try Tools.freeUDPPorts(count: 4)
        let video = dir.appendingPathComponent("v.gray").path
        let (sender, sdp, sdpPath) = try startSender(port: port, dir: dir, extra: [
            "--codec", "h264", "--simulate-orientation", "\(orientation)"])
        let m = try #require(sdp.media.first)
        let pt = try #require(m.payloadType(for: "H264"), "no H264 rtpmap: \(sdp.render())")
        #expect(m.formatParameters(for: pt) == "profile-level-id=42e01f;packetization-mode=1;level-asymmetry-allowed=1")
        #expect(m.payloadType(for: "VP8") == nil)
        let receiver: BackgroundProcess
        if receiverName == "ffmpeg" {
            let ffmpeg = try #require(Tools.which("ffmpeg"), "ffmpeg is not installed (scripts/setup installs it)")
            receiver = try BackgroundProcess(ffmpeg, [
                "-v", "error", "-protocol_whitelist", "file,udp,rtp,srtp,crypto", "-i", sdpPath,
                "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray", video,
            ], in: dir, name: "ffmpeg")
        } else {
            let gst = try #require(Tools.which("gst-launch-1.0"), "GStreamer is not installed (scripts/setup installs it)")
            receiver = try BackgroundProcess(gst, ["-q"] + (try GStreamerPipeline.receiving(sdp, video: video, audio: "")),
                                             in: dir, name: "gst")
        }
        let status = sender.wait(timeout: Double(Self.seconds) + 15)
        #expect(status == 0, "rtcshare: \(sender.stderr)")
        #expect(sender.stderr.contains("-> H.264 \(Self.width)x\(Self.height)"), "\(sender.stderr)")
        let sent = try #require(framesSent(sender.stderr), "no summary: \(sender.stderr)")
        // Stopped once it has written what reached it: every frame sent, or no more coming.
        Tools.waitForFileToSettle(video, holding: sent * Self.width * Self.height)
        receiver.stop()
        checkVideo(try Data(contentsOf: URL(fileURLWithPath: video)), sent: sent,
                   receiver: "\(receiverName) (orientation \(orientation)) \(receiver.stderr)")
    }
}

/// The running `rtcshare --peer` answering feedback: a test socket plays the receiver.
@Suite(.serialized) struct PeerFeedbackTests {
    /// Whether an (unprotected) RTP packet starts a VP8 keyframe: S=1 and PID 0 in the RFC 7741
    /// descriptor, then a VP8 payload header with P (bit 0 of its first byte) clear.
    static func startsKeyframe(_ packet: UnsafeRawBufferPointer) -> Bool {
        guard let parsed = try? RTPHeader.parse(packet),
              let (descriptor, size) = try? VP8PayloadDescriptor.parse(UnsafeRawBufferPointer(rebasing: packet[parsed.payloadRange]))
        else { return false }
        let start = parsed.payloadRange.lowerBound + size
        return descriptor.startOfPartition && descriptor.partitionIndex == 0 && start < parsed.payloadRange.upperBound
            && packet[start] & 1 == 0
    }

    @Test func aPLIBringsAKeyframeWithinOneFrameInterval() throws {
        let key = SRTPMasterKey.generate(profile: .aesCM128HmacSHA1_80)
        let socket = try UDPSocket(bindingTo: SocketAddress(parsing: "127.0.0.1:1").with(port: 0))
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // No periodic keyframes: only the first, and the one the PLI asks for.
        let sender = try BackgroundProcess(Tools.rtcshare, [
            "--source", "testsrc", "--size", "320x240", "--fps", "20", "--duration", "5",
            "--peer", "\(socket.localAddress)", "--srtp-key", key.base64, "--keyframe-interval", "3600",
        ], in: dir, name: "rtcshare")
        var unprotect = try SRTPContext(key: key, direction: .receiver)
        var protect = try SRTPContext(key: key, direction: .sender)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }

        var keyframes: [Int64] = []
        var senderAddress: SocketAddress?
        var ssrc: UInt32 = 0
        var pliSentAt: Int64?
        let start = MonotonicClock.now().microseconds
        while MonotonicClock.now().microseconds - start < 4_000_000 {
            if pliSentAt == nil, keyframes.count == 1, MonotonicClock.now().microseconds - start > 2_000_000,
               let to = senderAddress {
                let pli = try RTCPPictureLossIndication(sender: 1, media: ssrc).serialized()
                pli.withUnsafeBytes { buffer.copyMemory(from: $0) }
                let n = try protect.protectRTCP(buffer, length: pli.count)
                _ = socket.send(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), to: to)
                pliSentAt = MonotonicClock.now().microseconds
            }
            guard socket.waitReadable(timeoutMicroseconds: 10_000),
                  case .datagram(let count, let from) = socket.receive(into: buffer),
                  count > 12, !(192...223).contains(buffer[1]) else { continue }
            senderAddress = from
            let n = try unprotect.unprotectRTP(buffer, length: count)
            let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            ssrc = try RTPHeader.parse(packet).header.ssrc
            if Self.startsKeyframe(packet) { keyframes.append(MonotonicClock.now().microseconds) }
        }
        sender.stop()
        #expect(keyframes.count == 2, "keyframes at \(keyframes.map { ($0 - start) / 1000 }) ms; \(sender.stderr)")
        let asked = try #require(pliSentAt, "no PLI sent: \(sender.stderr)")
        let answered = try #require(keyframes.last { $0 > asked }, "no keyframe after the PLI")
        #expect(answered - asked <= 50_000, "keyframe \((answered - asked) / 1000) ms after the PLI")
    }
}

extension PeerFeedbackTests {
    /// With --cvo the pixels go as stored (a portrait picture for a phone turned by 90°) and the
    /// tag rides in the urn:3gpp:video-orientation extension of each frame's last packet.
    @Test func withCVOThePictureIsSentAsStoredAndTheOrientationSignalled() throws {
        let socket = try UDPSocket(bindingTo: SocketAddress(parsing: "127.0.0.1:1").with(port: 0))
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sender = try BackgroundProcess(Tools.rtcshare, [
            "--size", "320x240", "--simulate-orientation", "6", "--cvo", "--peer", "\(socket.localAddress)",
            "--insecure", "--sdp", dir.appendingPathComponent("x.sdp").path, "--duration", "2",
        ], in: dir, name: "rtcshare")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        let map = try RTPExtensionMap(videoOrientation: 4)
        var orientations: [RTPVideoOrientation?] = []
        var keyframeSize: (Int, Int)?
        while socket.waitReadable(timeoutMicroseconds: 3_000_000),
              case .datagram(let count, _) = socket.receive(into: buffer) {
            let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            guard !(192...223).contains(buffer[1]), let parsed = try? RTPHeader.parse(packet) else { continue }
            if keyframeSize == nil, PeerFeedbackTests.startsKeyframe(packet) {
                // RFC 6386 §9.1: a keyframe's header holds 14-bit width and height after the start code.
                let at = parsed.payloadRange.lowerBound + 4 + 6
                keyframeSize = (Int(buffer[at]) | Int(buffer[at + 1] & 0x3F) << 8,
                                Int(buffer[at + 2]) | Int(buffer[at + 3] & 0x3F) << 8)
            }
            if parsed.header.marker {
                orientations.append(try RTPExtensionValues.parse(packet: packet, parsed, map: map).videoOrientation)
            }
        }
        #expect(sender.wait(timeout: 5) == 0, "\(sender.stderr)")
        let sdp = try SessionDescription.parse(String(contentsOf: dir.appendingPathComponent("x.sdp"), encoding: .utf8))
        #expect(sdp.media.first?.extensionID(for: RTPVideoOrientation.uri) == 4)
        #expect(orientations.count >= 30)
        #expect(orientations.allSatisfy { $0 == RTPVideoOrientation(orientation: .right) }, "\(orientations.prefix(3))")
        #expect(keyframeSize.map { [$0.0, $0.1] } == [240, 320], "encoded as stored: portrait")
    }

    @Test func sigintSendsByeAndExitsCleanlyWithinASecond() throws {
        let socket = try UDPSocket(bindingTo: SocketAddress(parsing: "127.0.0.1:1").with(port: 0))
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sender = try BackgroundProcess(Tools.rtcshare, [
            "--size", "320x240", "--peer", "\(socket.localAddress)", "--insecure", "--duration", "60",
        ], in: dir, name: "rtcshare")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        // Wait for media, then stop it the way a terminal does.
        #expect(socket.waitReadable(timeoutMicroseconds: 10_000_000), "nothing sent: \(sender.stderr)")
        // Stopped mid-stream: once media flows steadily (the first keyframe and more).
        var received = 0
        let flowing = waitUntil(timeout: 5) {
            while case .datagram = socket.receive(into: buffer) { received += 1 }
            return received >= 20
        }
        #expect(flowing, "only \(received) datagrams: \(sender.stderr)")
        let stoppedAt = MonotonicClock.now()
        kill(sender.process.processIdentifier, SIGINT)
        let status = sender.wait(timeout: 5)
        let took = MonotonicClock.now() - stoppedAt
        #expect(status == 0, "\(sender.stderr)")
        #expect(took < .seconds(1), "took \(took.microseconds / 1000) ms to exit")
        #expect(sender.stderr.contains("warning: --insecure"))
        var goodbyes = 0
        while case .datagram(let count, _) = socket.receive(into: buffer) {
            guard (192...223).contains(buffer[1]) else { continue }
            _ = try? RTCPParser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { item in
                if case .goodbye = item { goodbyes += 1 }
            }
        }
        #expect(goodbyes == 1, "the video stream says BYE once")
    }
}

/// A gst-launch pipeline built from the SDP rtcshare wrote: GStreamer has no SDES-SRTP SDP
/// reader, so the ports, SSRCs, payload types and keys go into `srtpdec` caps as its
/// documentation says; the muxed RTCP leaves on `rtcp_src`, which must be linked.
enum GStreamerPipeline {
    static func receiving(_ sdp: SessionDescription, video: String, audio: String) throws -> [String] {
        var args: [String] = []
        for (index, m) in sdp.media.enumerated() {
            let crypto = try #require(m.cryptos.first, "no a=crypto in the \(m.kind) section")
            let key = try #require(base64Decode(crypto.keyBase64), "bad key")
            let ssrc = try #require(m.ssrcs.first, "no a=ssrc in the \(m.kind) section")
            let map = try #require(m.rtpMaps.first, "no a=rtpmap in the \(m.kind) section")
            let (cipher, auth) = crypto.suite == "AEAD_AES_128_GCM" ? ("aes-128-gcm", "null") : ("aes-128-icm", "hmac-sha1-80")
            let caps = "application/x-srtp,media=(string)\(m.kind.rawValue),clock-rate=(int)\(map.clockRate),"
                + "encoding-name=(string)\(map.encodingName.uppercased()),payload=(int)\(map.payloadType),"
                + "ssrc=(uint)\(ssrc),srtp-key=(buffer)\(key.map { String(format: "%02x", $0) }.joined()),"
                + "srtp-cipher=(string)\(cipher),srtp-auth=(string)\(auth),"
                + "srtcp-cipher=(string)\(cipher),srtcp-auth=(string)\(auth),roc=(uint)0"
            let name = "dec\(index)"
            args += ["udpsrc", "port=\(m.port)", "address=127.0.0.1", "caps=\(caps)", "!", "srtpdec", "name=\(name)", "!"]
            if m.kind == .video {
                // H.264: the depayloader, a parser that hands the decoder whole access units,
                // and openh264's decoder (gstreamer1.0-plugins-bad; Debian's avdec_h264 is in
                // gstreamer1.0-libav, which the tests do not need).
                let decode = map.encodingName.uppercased() == "H264"
                    ? ["rtph264depay", "!", "h264parse", "!", "openh264dec"] : ["rtpvp8depay", "!", "vp8dec"]
                args += decode + ["!", "videoconvert", "!", "video/x-raw,format=GRAY8", "!",
                                  "filesink", "location=\(video)", "sync=false"]
            } else {
                args += ["rtpopusdepay", "!", "opusdec", "!", "audioconvert", "!", "audioresample", "!",
                         "audio/x-raw,format=S16LE,channels=1,rate=48000", "!", "filesink", "location=\(audio)", "sync=false"]
            }
            args += ["\(name).rtcp_src", "!", "fakesink", "async=false", "sync=false"]
        }
        return args
    }

    static func base64Decode(_ text: String) -> [UInt8]? {
        Data(base64Encoded: text).map { Array($0) }
    }
}
