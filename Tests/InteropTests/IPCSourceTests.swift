import Foundation
import RTCShareCore
import RTCShareIO
import RTCShareMedia
import TestSupport
import Testing

/// `rtcshare --source ipc:PATH` with the reference producer, decoded by ffmpeg: a phone-style
/// turned BGRA picture with big-endian audio comes out upright; a producer killed with SIGKILL
/// and started again resumes the same share, the filler covering the gap; a malformed message
/// costs the producer its connection and one log line, never the share.
@Suite(.serialized) struct IPCSourceTests {
    static let width = 640, height = 360

    /// The reference producer built beside `rtcshare`.
    static var producer: String {
        URL(fileURLWithPath: Tools.rtcshare).deletingLastPathComponent().appendingPathComponent("rtcshare-producer").path
    }

    private func waitForSocket(_ path: String, _ rtcshare: BackgroundProcess) throws {
        guard waitUntil(timeout: 10, { FileManager.default.fileExists(atPath: path) || !rtcshare.isRunning }),
              FileManager.default.fileExists(atPath: path) else {
            throw Tools.DecodeError(message: "rtcshare never listened on \(path): \(rtcshare.stderr)")
        }
    }

    private func markers(_ frames: [Data], width: Int, height: Int) -> [(counter: UInt32, captureMicrosLow: UInt32)?] {
        frames.map { frame in
            frame.withUnsafeBytes { raw in
                FrameMarker.read(luma: raw.bindMemory(to: UInt8.self).baseAddress!, stride: width, width: width, rows: height)
            }
        }
    }

    @Test func aKilledProducerThatComesBackResumesTheShareUpright() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = dir.appendingPathComponent("x.sock").path
        let ivf = dir.appendingPathComponent("x.ivf").path
        let rtcshare = try BackgroundProcess(Tools.rtcshare, [
            "--source", "ipc:\(socket)", "--output", ivf, "--duration", "6", "--size", "\(Self.width)x\(Self.height)",
        ], in: dir, name: "rtcshare")
        defer { rtcshare.kill() }
        try waitForSocket(socket, rtcshare)

        let turned = ["--size", "\(Self.width)x\(Self.height)", "--orientation", "6", "--format", "bgra",
                      "--audio-endian", "be"]
        let first = try BackgroundProcess(Self.producer, [socket] + turned, in: dir, name: "producer1")
        // A fixed wait on purpose: the scenario is a producer killed after 2 s of streaming.
        usleep(2_000_000)
        first.kill()  // SIGKILL: no BYE, the kernel just closes its end
        #expect(rtcshare.waitForOutput(containing: " disconnected after ", timeout: 5),
                "rtcshare never saw the first producer go: \(rtcshare.stderr)")
        // A fixed wait on purpose: the producer stays away 0.8 s, the gap the filler (and the
        // audio's silence) must bridge.
        usleep(800_000)
        let second = try BackgroundProcess(Self.producer, [socket] + turned + ["--duration", "2", "--first-counter", "100000"],
                                    in: dir, name: "producer2")
        #expect(second.wait(timeout: 20) == 0, "second producer: \(second.stderr)")
        let status = rtcshare.wait(timeout: 30)
        let log = rtcshare.stderr
        #expect(status == 0, "rtcshare: \(log)")
        #expect(log.components(separatedBy: "connected\n").count - 1 == 2, "two producers connected: \(log)")
        #expect(log.contains("it closed the connection"), "\(log)")
        #expect(log.contains("it said BYE (done)"), "\(log)")

        let frames = try Tools.decodeLuma(ivf, width: Self.width, height: Self.height)
        // 6 s at 20 fps, less the moments before the first producer's first frame.
        #expect(frames.count >= 90 && frames.count <= 122, "decoded \(frames.count) frames")
        let read = markers(frames, width: Self.width, height: Self.height)
        let unreadable = read.indices.filter { read[$0] == nil }
        #expect(unreadable.isEmpty, "markers unreadable (not upright) in frames \(unreadable)")
        let counters = read.compactMap { $0?.counter }
        #expect(zip(counters, counters.dropFirst()).allSatisfy { $0 <= $1 }, "counters out of order: \(counters)")

        // The first run's counters, then the second's: the same share went on.
        let firstRun = counters.filter { $0 < 100_000 }, secondRun = counters.filter { $0 >= 100_000 }
        #expect(firstRun.count >= 20, "first run: \(firstRun.count) frames")
        #expect(secondRun.count >= 20, "second run: \(secondRun.count) frames")
        let lastOfFirst = try #require(counters.lastIndex { $0 < 100_000 })
        let firstOfSecond = try #require(counters.firstIndex { $0 >= 100_000 })
        #expect(lastOfFirst < firstOfSecond)
        // Across the gap (0.8 s and the second producer's start-up) the filler repeated the
        // first run's last picture: a run of identical counters that long.
        let repeats = counters.filter { $0 == counters[lastOfFirst] }.count
        #expect(repeats >= 12, "the last picture before the gap was sent \(repeats) times")
        // Capture times (the marker's second row) never go back across the reconnection.
        let times = read.compactMap { $0?.captureMicrosLow }
        #expect(times[firstOfSecond] > times[lastOfFirst])
    }

    @Test func aMalformedMessageCostsTheProducerItsConnectionNotTheShare() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = dir.appendingPathComponent("x.sock").path
        let ivf = dir.appendingPathComponent("x.ivf").path
        let rtcshare = try BackgroundProcess(Tools.rtcshare, [
            "--source", "ipc:\(socket)", "--output", ivf, "--duration", "5", "--size", "320x180",
        ], in: dir, name: "rtcshare")
        defer { rtcshare.kill() }
        try waitForSocket(socket, rtcshare)

        // A hand-made producer: HELLO, then a FRAME whose orientation tag is 9.
        let connection = try IPCConnection.connect(to: socket)
        func send(_ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { connection.send($0) } }
        func next(timeout: Int64 = 3_000) -> IPCReceiveResult {
            var buffer = [UInt8](repeating: 0, count: 256)
            var fds = ReceivedDescriptors()
            _ = IPCPoll.wait(connection.descriptor, -1, until: MonotonicClock.now() + .milliseconds(timeout))
            let result = buffer.withUnsafeMutableBytes { connection.receive(into: $0, descriptors: &fds) }
            lastMessage = buffer
            return result
        }
        var lastMessage: [UInt8] = []
        send(IPCMessage.hello(IPCHello(name: "broken")).serialized())
        guard case .message(let n) = next(), case .welcome? = try? IPCMessage.parse(Array(lastMessage[..<n])) else {
            Issue.record("no WELCOME"); return
        }
        var frame = IPCMessage.frame(IPCFrame(bufferID: 0, format: .bgra, orientation: .up, width: 64, height: 64,
                                              ptsMicroseconds: 0, strides: SIMD3(256, 0, 0),
                                              offsets: SIMD3(0, 0, 0))).serialized()
        frame[14] = 9
        send(frame)
        guard case .message(let m) = next(), case .bye(let bye)? = try? IPCMessage.parse(Array(lastMessage[..<m])) else {
            Issue.record("no BYE"); return
        }
        #expect(bye.reason == .malformed)
        #expect(next() == .closed)

        // A producer with pictures larger than the default --ipc-max-size is refused too…
        let big = try BackgroundProcess(Self.producer, [socket, "--size", "1920x1080", "--format", "i420", "--duration", "3"],
                                 in: dir, name: "big")
        #expect(big.wait(timeout: 10) == 1, "a refused producer exits with an error: \(big.stderr)")
        #expect(big.stderr.contains("frame-too-large"), "\(big.stderr)")
        // …and a good one is served afterwards, while a second one is told busy.
        let good = try BackgroundProcess(Self.producer, [socket, "--size", "320x180", "--format", "nv12", "--duration", "1.5"],
                                  in: dir, name: "good")
        #expect(good.waitForOutput(containing: "connected to", timeout: 10), "\(good.stderr)")
        let extra = try BackgroundProcess(Self.producer, [socket, "--size", "320x180", "--duration", "0.6"], in: dir, name: "extra")
        #expect(extra.wait(timeout: 10) == 0)
        #expect(extra.stderr.contains("busy"), "\(extra.stderr)")
        #expect(good.wait(timeout: 10) == 0, "\(good.stderr)")

        let status = rtcshare.wait(timeout: 30)
        let log = rtcshare.stderr
        #expect(status == 0, "rtcshare: \(log)")
        let malformed = log.split(separator: "\n").filter { $0.contains("malformed message") }
        #expect(malformed.count == 1, "one line for the malformed message: \(log)")
        #expect(malformed.first?.contains("'broken'") == true && malformed.first?.contains("orientation 9") == true)
        #expect(log.contains("larger than the 1280x720 maximum"), "\(log)")
        #expect(log.contains("refused a producer"), "\(log)")
        let frames = try Tools.decodeLuma(ivf, width: 320, height: 180)
        #expect(frames.count >= 20, "decoded \(frames.count) frames")
        let read = markers(frames, width: 320, height: 180)
        #expect(read.allSatisfy { $0 != nil }, "every frame's marker reads upright")
    }
}
