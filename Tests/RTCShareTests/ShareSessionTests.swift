import Glibc
import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP
import Synchronization
import Testing
@testable import RTCShare

@Suite struct ShareSessionTests {
    /// Events seen by a session, collected from its thread.
    final class EventLog: Sendable {
        let events = Mutex<[ShareEvent]>([])
        func append(_ e: ShareEvent) { events.withLock { $0.append(e) } }
    }

    @Test func hostCanStopARunningShareAndAskForKeyframes() throws {
        var config = ShareConfiguration()
        config.outputSize = PictureSize(width: 320, height: 180)
        let source = TestSource(width: 320, height: 180, staticSeconds: 0)
        let plan = try MemoryPlanner.resolve(config, for: source)
        let budget = try MemoryBudget(capBytes: plan.budgetBytes)
        let log = EventLog()
        let session = ShareSession(configuration: config) { log.append($0) }
        // Fixed waits on purpose: the host acts one and two seconds into the share, and the frame
        // count expected is that of a 2 s share.
        let controller = WorkerThread.start(name: "test-host") {
            usleep(1_000_000)
            session.requestKeyframe()
            session.setBitrate(kbps: 300)
            usleep(1_000_000)
            session.stop()
        }
        let stats = try session.run(source: source, budget: budget, plan: plan)
        controller?.join()
        #expect(stats.keyframes >= 2)                      // the first, and the requested one
        #expect(stats.encodedFrames >= 36 && stats.encodedFrames <= 44)  // 2 s at 20 fps
        let events = log.events.withLock { $0 }
        #expect(events.first == .starting(source: "testsrc", output: PictureSize(width: 320, height: 180), framesPerSecond: 20))
        #expect(events.contains(.started))
        #expect(events.last == .finished(.stopped))
        #expect(budget.stats.liveBlocks == 0)             // everything went back to the budget
    }

    /// A sink that takes video only once its "connection" is up, one second in (as WHIP does
    /// after DTLS-SRTP), and says so with `mediaStarted` then, as a real connection does.
    final class ConnectingSink: MediaSink, @unchecked Sendable {
        let name = "connecting"
        let connectsAt: MediaTime
        private(set) var frames: [Bool] = []  // keyframe or not, per frame received
        private var connected = false
        init(connectsAt: MediaTime) { self.connectsAt = connectsAt }
        // Connected inside `service`, which says so in the same call (WHIPSink: the keys are
        // installed while it reads the DTLS handshake's last flight).
        var acceptsVideo: Bool { connected }
        func send(video frame: OutgoingVideoFrame) throws(ShareError) {
            if connected { frames.append(frame.isKeyframe) }
        }
        func service(at now: MediaTime) throws(ShareError) -> TransportRequests {
            var requests = TransportRequests(nextWakeup: connected ? nil : connectsAt)
            if !connected, now >= connectsAt {
                connected = true
                requests.mediaStarted = true
            }
            return requests
        }
        func finish(_ reason: FinishReason) throws(ShareError) {}
    }

    @Test func framesNobodyCanReceiveAreNotEncodedAndTheFirstAfterConnectingIsTheOnlyKeyframe() throws {
        var config = ShareConfiguration()
        config.outputSize = PictureSize(width: 320, height: 180)
        config.duration = .seconds(2)
        let source = TestSource(width: 320, height: 180, staticSeconds: 0)
        let plan = try MemoryPlanner.resolve(config, for: source)
        let budget = try MemoryBudget(capBytes: plan.budgetBytes)
        let sink = ConnectingSink(connectsAt: MonotonicClock.now() + .seconds(1))
        let stats = try ShareSession(configuration: config) { _ in }
            .run(source: source, budget: budget, plan: plan, sinks: [sink])
        // About a second of frames went unencoded, and what was encoded all reached the sink.
        #expect(stats.notEncodedConnecting >= 15 && stats.notEncodedConnecting <= 25,
                "not encoded \(stats.notEncodedConnecting)")
        #expect(stats.encodedFrames == sink.frames.count, "encoded \(stats.encodedFrames), sent \(sink.frames.count)")
        #expect(sink.frames.count >= 15, "sent \(sink.frames.count)")
        #expect(sink.frames.first == true, "the connection's first frame is a keyframe")
        #expect(stats.keyframes == 1, "no keyframe was spent before the connection: \(stats.keyframes)")
    }

    @Test func endOfFileFinishesTheShare() throws {
        let path = "/tmp/rtcshare-session-\(getpid()).y4m"
        var bytes = Array("YUV4MPEG2 W32 H32 F50:1\n".utf8)
        for _ in 0..<5 { bytes += Array("FRAME\n".utf8) + [UInt8](repeating: 90, count: 32 * 32 * 3 / 2) }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        defer { unlink(path) }
        let source = try Y4MSource(path: path)
        var config = ShareConfiguration()
        config.outputSize = PictureSize(width: 32, height: 32)
        let plan = try MemoryPlanner.resolve(config, for: source)
        let budget = try MemoryBudget(capBytes: plan.budgetBytes)
        let log = EventLog()
        let stats = try ShareSession(configuration: config) { log.append($0) }
            .run(source: source, budget: budget, plan: plan)
        #expect(stats.sourceFrames == 5)
        #expect(log.events.withLock { $0.last } == .finished(.sourceEnded))
    }
}
