import Glibc
import RTCShareCore
import RTCShareIO
import RTCShareMedia
import Synchronization
import TestSupport
import Testing
@testable import RTCShare

/// The library API an embedder uses: a share it pushes pictures into from its own threads,
/// paused and resumed, stopped with a reason; the process budget shared by several shares.
@Suite struct ShareAgentTests {
    final class EventLog: Sendable {
        let events = Mutex<[ShareEvent]>([])
        func append(_ e: ShareEvent) { events.withLock { $0.append(e) } }
        var all: [ShareEvent] { events.withLock { $0 } }
    }

    static func pushedConfiguration(ivf: String) -> ShareAgent.Configuration {
        var c = ShareAgent.Configuration()
        c.source = .pushed(maxSize: PictureSize(width: 320, height: 240))
        c.share.outputSize = PictureSize(width: 320, height: 240)
        c.share.ivfPath = ivf
        return c
    }

    /// Pushes `count` BGRA pictures at 20 fps from this thread; returns what each push gave.
    static func push(_ agent: ShareAgent, count: Int, orientation: Orientation = .up) -> [PushResult] {
        var pixels = [UInt8](repeating: 0x80, count: 320 * 240 * 4)
        var results: [PushResult] = []
        for i in 0..<count {
            pixels[i % pixels.count] = UInt8(truncatingIfNeeded: i)
            let result = pixels.withUnsafeBytes { raw in
                agent.pushVideo(PushedFrame(format: .bgra, width: 320, height: 240, planes: [raw.baseAddress!],
                                            strides: [320 * 4], orientation: orientation))
            }
            results.append(result)
            usleep(50_000)  // the pushing host's frame rate: the pacing is what is under test
        }
        return results
    }

    @Test func pushedPicturesArePausedResumedAndTheHostStopsWithAReason() throws {
        let ivf = "/tmp/rtcshare-agent-\(getpid()).ivf"
        defer { unlink(ivf) }
        let log = EventLog()
        let agent = try ShareAgent(configuration: Self.pushedConfiguration(ivf: ivf)) { log.append($0) }
        #expect(Self.push(agent, count: 1) == [.notRunning], "before start nothing is taken")
        try agent.start()
        #expect(waitUntil(timeout: 5) { log.all.contains(.started) }, "\(log.all)")
        let startedAt = Double(MonotonicClock.now().microseconds) / 1e6
        let running = Self.push(agent, count: 20)
        let pauseAskedAt = Double(MonotonicClock.now().microseconds) / 1e6
        agent.pause()
        let whilePaused = Self.push(agent, count: 10)
        let resumeAskedAt = Double(MonotonicClock.now().microseconds) / 1e6
        agent.resume()
        let resumed = Self.push(agent, count: 20)
        let stopAskedAt = Double(MonotonicClock.now().microseconds) / 1e6
        agent.stop(reason: "the broadcast was ended from the control centre")
        let stats = try agent.wait()

        // A push is taken, or skipped as busy when the encoder is behind (a loaded machine's
        // is, now and then); never refused once taken. `.started` can come before the capture
        // thread has taken its first picture, and pushes until then are refused as not running
        // (one or two on a loaded machine). Most are taken: at least half.
        for (phase, results) in [("running", running), ("paused", whilePaused), ("resumed", resumed)] {
            let taking = phase == "running" ? Array(results.drop { $0 == .notRunning }) : results
            #expect(taking.allSatisfy { $0 == .accepted || $0 == .busy }, "\(phase): \(results)")
            #expect(results.filter { $0 == .accepted }.count * 2 >= results.count, "\(phase): \(results)")
        }
        #expect(stats.droppedWhilePaused >= 5, "pushing while paused is accepted and let go of: \(stats)")
        // Frames went out before and after the pause, not during it (the filler held the rate
        // then, not while paused), judged by when they went out (the file's frame times): none
        // from a quarter second after the pause was asked (a frame under way may finish) until
        // the resume. The count only bounds it: no more than 20 fps allow for the time it ran
        // (about 2 s; longer on a loaded machine, whose pushes take longer), with the same
        // quarter second after the pause and after the stop were asked; at least half of the
        // 2 s at 20 fps (20).
        let times = try Tools.ivfFrameTimes(ivf)
        #expect(times.count == stats.encodedFrames, "\(times.count) frames in the file, \(stats)")
        #expect(times.contains { $0 < pauseAskedAt } && times.contains { $0 > resumeAskedAt }, "frames before and after the pause")
        let duringPause = times.filter { $0 > pauseAskedAt + 0.25 && $0 < resumeAskedAt }
        #expect(duringPause.isEmpty, "\(duringPause.count) frames went out while paused")
        let ran = (pauseAskedAt - startedAt) + (stopAskedAt - resumeAskedAt)
        #expect(stats.encodedFrames >= 20 && Double(stats.encodedFrames) <= 20 * (ran + 0.5), "\(stats) in \(ran) s running")
        #expect(stats.keyframes >= 2, "the resumed share starts with a keyframe")
        let events = log.all
        let paused = try #require(events.firstIndex(of: .paused))
        let resumedAt = try #require(events.firstIndex(of: .resumed))
        #expect(paused < resumedAt)
        #expect(events.last == .finished(.stoppedByHost("the broadcast was ended from the control centre")))
        #expect(Self.push(agent, count: 1) == [.notRunning], "after the end nothing is taken")
        #expect(throws: ShareError.self) { try agent.start() }
    }

    @Test func badPushesAreRefusedNotFatal() throws {
        let log = EventLog()
        let agent = try ShareAgent(configuration: Self.pushedConfiguration(ivf: "/tmp/rtcshare-agent-bad-\(getpid()).ivf")) {
            log.append($0)
        }
        defer { unlink("/tmp/rtcshare-agent-bad-\(getpid()).ivf") }
        try agent.start()
        #expect(waitUntil(timeout: 5) { log.all.contains(.started) }, "\(log.all)")
        let pixels = [UInt8](repeating: 0, count: 1920 * 1080 * 4)
        let results: [PushResult] = pixels.withUnsafeBytes { raw in
            [
                // Larger than the maximum, odd size, stride too small, missing planes.
                agent.pushVideo(PushedFrame(format: .bgra, width: 1920, height: 1080, planes: [raw.baseAddress!], strides: [1920 * 4])),
                agent.pushVideo(PushedFrame(format: .bgra, width: 321, height: 240, planes: [raw.baseAddress!], strides: [321 * 4])),
                agent.pushVideo(PushedFrame(format: .bgra, width: 320, height: 240, planes: [raw.baseAddress!], strides: [100])),
                agent.pushVideo(PushedFrame(format: .i420, width: 320, height: 240, planes: [raw.baseAddress!], strides: [320])),
                // Turned on its side (orientation 6): fits the maximum either way.
                agent.pushVideo(PushedFrame(format: .i420, width: 240, height: 320,
                                            planes: [raw.baseAddress!, raw.baseAddress! + 240 * 320, raw.baseAddress! + 240 * 400],
                                            strides: [240, 120, 120], orientation: .right)),
            ]
        }
        #expect(results == [.invalid, .invalid, .invalid, .invalid, .accepted])
        agent.stop()
        _ = try agent.wait()
        #expect(agent.pushCounters?.invalid == 4)
    }

    @Test func aShareThatDoesNotFitTheProcessIsRefusedAndTheOthersKeepTheirs() throws {
        var c = ShareAgent.Configuration()
        c.source = .testPattern()
        c.share.outputSize = PictureSize(width: 640, height: 360)
        c.share.ivfPath = "/tmp/rtcshare-agent-budget-\(getpid()).ivf"
        defer { unlink(c.share.ivfPath!) }
        // Room for one and a half of these shares beside the runtime.
        let need = try ShareAgent(configuration: c).plan.totalBytes - MemoryPlanner.runtimeBytes
        let process = ProcessBudget(capBytes: MemoryPlanner.runtimeBytes + need * 3 / 2)
        let first = try ShareAgent(configuration: c, processBudget: process)
        let left = process.availableBytes
        #expect(left == need * 3 / 2 - need)
        #expect(throws: ShareError.self) { _ = try ShareAgent(configuration: c, processBudget: process) }
        #expect(process.availableBytes == left, "a refused share takes nothing")
        _ = first
    }

    @Test func aFinishedShareGivesItsMemoryBack() throws {
        var c = ShareAgent.Configuration()
        c.source = .testPattern()
        c.share.outputSize = PictureSize(width: 320, height: 180)
        c.share.duration = .milliseconds(300)
        c.share.ivfPath = "/tmp/rtcshare-agent-done-\(getpid()).ivf"
        defer { unlink(c.share.ivfPath!) }
        let process = ProcessBudget(capBytes: 96 << 20)
        let before = process.availableBytes
        let agent = try ShareAgent(configuration: c, processBudget: process)
        #expect(process.availableBytes < before)
        _ = try agent.run()
        #expect(process.availableBytes == before)
    }
}
