import RTCShareCore
import RTCShareImpairment
import TestSupport
import Testing

/// The impairment model in fake time: each knob alone, measured over many datagrams from a seed.
@Suite struct ImpairedPathTests {
    typealias Path = ImpairedPath<Int, SeededRandom>

    static func path(_ configure: (inout ImpairmentProfile) -> Void, seed: UInt64 = 7) throws -> Path {
        var p = ImpairmentProfile()
        configure(&p)
        return Path(profile: try p.validated(), random: SeededRandom(seed: seed))
    }

    /// Sends `count` datagrams of `bytes`, one every `spacing`, releasing as time goes; returns
    /// the indices in arrival order with their arrival times.
    static func run(_ path: inout Path, count: Int, bytes: Int = 1000, spacing: MediaDuration = .milliseconds(1))
        -> [(index: Int, at: MediaTime)] {
        var arrived: [(Int, MediaTime)] = []
        var now = MediaTime.seconds(10)
        for i in 0..<count {
            path.release(until: now) { arrived.append(($0, now)) }
            path.submit(i, bytes: bytes, at: now)
            now += spacing
        }
        while let next = path.nextRelease {
            now = max(now, next)
            path.release(until: now) { arrived.append(($0, now)) }
        }
        return arrived
    }

    @Test func randomLossLosesItsShareAndTheSameSeedTheSameDatagrams() throws {
        var a = try Self.path { $0.lossPercent = 5 }
        let arrived = Self.run(&a, count: 20_000).map(\.index)
        let lost = 20_000 - arrived.count
        #expect(lost > 850 && lost < 1150, "lost \(lost) of 20000")
        #expect(a.statistics.lost == UInt64(lost) && a.statistics.forwarded == UInt64(arrived.count))
        #expect(arrived == arrived.sorted(), "no delay, no reordering: the order is kept")
        var b = try Self.path { $0.lossPercent = 5 }
        #expect(Self.run(&b, count: 20_000).map(\.index) == arrived)
        var c = try Self.path({ $0.lossPercent = 5 }, seed: 8)
        #expect(Self.run(&c, count: 20_000).map(\.index) != arrived)
    }

    @Test func burstyLossHasItsLongRunShareAndMeanBurstLength() throws {
        var path = try Self.path {
            $0.burstLossPercent = 2
            $0.meanBurstLength = 5
        }
        let arrived = Set(Self.run(&path, count: 100_000).map(\.index))
        var bursts: [Int] = []
        var run = 0
        for i in 0..<100_000 {
            if arrived.contains(i) {
                if run > 0 { bursts.append(run) }
                run = 0
            } else {
                run += 1
            }
        }
        let lost = bursts.reduce(0, +)
        let mean = Double(lost) / Double(bursts.count)
        #expect(lost > 1_500 && lost < 2_500, "lost \(lost) of 100000")
        #expect(mean > 4 && mean < 6, "mean burst \(mean) over \(bursts.count) bursts")
    }

    @Test func delayAndJitterKeepTheOrderWithinTheirBounds() throws {
        var path = try Self.path {
            $0.delay = .milliseconds(50)
            $0.jitter = .milliseconds(10)
        }
        var sentAt: [Int: MediaTime] = [:]
        var now = MediaTime.seconds(1)
        var arrivals: [(Int, MediaTime)] = []
        for i in 0..<2_000 {
            sentAt[i] = now
            let fate = path.submit(i, bytes: 500, at: now)
            guard case .delivered(let at, false) = fate else { Issue.record("\(fate)"); return }
            arrivals.append((i, at))
            now += .milliseconds(5)
        }
        #expect(arrivals.map(\.0) == Array(0..<2_000))
        let delays = arrivals.map { ($0.1 - sentAt[$0.0]!).microseconds }
        #expect(delays.min()! >= 40_000 && delays.max()! <= 60_000, "\(delays.min()!)...\(delays.max()!)")
        #expect(Set(delays).count > 100, "the delay varies")
        #expect(zip(arrivals, arrivals.dropFirst()).allSatisfy { $0.1 <= $1.1 })
    }

    @Test func reorderingLetsLaterDatagramsOvertakeAndDuplicationDeliversTwice() throws {
        var path = try Self.path {
            $0.delay = .milliseconds(5)
            $0.reorderPercent = 10
            $0.duplicatePercent = 3
        }
        let arrived = Self.run(&path, count: 5_000).map(\.index)
        let s = path.statistics
        #expect(s.reordered > 400 && s.reordered < 600, "\(s)")
        #expect(s.duplicated > 100 && s.duplicated < 200, "\(s)")
        #expect(arrived.count == 5_000 + Int(s.duplicated))
        #expect(Set(arrived).count == 5_000, "nothing lost")
        let overtaken = zip(arrived, arrived.dropFirst()).filter { $0 > $1 }.count
        #expect(overtaken > 300, "\(overtaken) datagrams arrived after a later one")
    }

    @Test func aBandwidthCapQueuesThenTailDropsAndMeasuresTheQueueingDelay() throws {
        // 2 Mbit/s offered (1000 bytes every 4 ms) into a 1 Mbit/s link with a 25 000-byte queue:
        // half goes through, the queue stays full, a datagram waits 25000 × 8 / 1e6 = 200 ms.
        var path = try Self.path {
            $0.rateBitsPerSecond = 1_000_000
            $0.queueBytes = 25_000
        }
        let arrived = Self.run(&path, count: 2_500, spacing: .milliseconds(4))
        let s = path.statistics
        #expect(s.tailDropped > 1_150 && s.tailDropped < 1_300, "\(s.tailDropped)")
        #expect(s.lost == 0 && arrived.count == Int(s.forwarded))
        let span = (arrived.last!.at - arrived.first!.at).microseconds
        let kbps = Int64(arrived.count - 1) * 8_000 * 1000 / span
        #expect(kbps >= 990 && kbps <= 1010, "\(kbps) kbit/s through the cap")
        #expect(s.queueDelay.maximumMicroseconds >= 185_000 && s.queueDelay.maximumMicroseconds <= 200_000,
                "\(s.queueDelay.maximumMicroseconds)")
        #expect(s.queueDelay.percentile(99) >= 185_000)
        #expect(arrived.map(\.index) == arrived.map(\.index).sorted())
        let json = s.json(direction: "to-receiver")
        #expect(json.contains("\"tail_dropped\":\(s.tailDropped)") && json.contains("\"queue_delay_max_ms\":"))
    }

    @Test func theSettledFiguresLeaveTheStartOut() throws {
        // 2 Mbit/s for 2 s, then 0.8 Mbit/s, into 1 Mbit/s with a 25 000-byte queue: the start
        // fills the queue and drops; settled after 3 s, the figures see the drained queue only.
        var p = ImpairmentProfile()
        p.rateBitsPerSecond = 1_000_000
        p.queueBytes = 25_000
        var path = Path(profile: try p.validated(), random: SeededRandom(seed: 7), settleAfter: .seconds(3))
        var now = MediaTime.seconds(10)
        var i = 0
        while now < .seconds(16) {
            path.release(until: now) { _ in }
            path.submit(i, bytes: 1000, at: now)
            #expect((path.settledStatistics != nil) == (now >= .seconds(13)))
            now += .milliseconds(now < .seconds(12) ? 4 : 10)
            i += 1
        }
        let whole = path.statistics, settled = try #require(path.settledStatistics)
        #expect(whole.tailDropped > 200 && whole.queueDelay.maximumMicroseconds > 150_000)
        #expect(settled.received == 300 && settled.tailDropped == 0, "\(settled)")
        #expect(settled.queueDelay.maximumMicroseconds < 10_000, "drained by 13 s: \(settled.queueDelay.maximumMicroseconds)")
        let json = whole.json(direction: "to-receiver", settled: settled, settledAfterSeconds: 3)
        #expect(json.hasPrefix("{\"direction\":\"to-receiver\",") && json.contains(",\"settled_after_s\":3.0,\"settled\":{\"received\":300,"))
        #expect(json.hasSuffix("}}"))
    }

    @Test func aCapLiftedMidRunDrainsInOrderAndThenNothingWaits() throws {
        // 2 Mbit/s into 1 Mbit/s with a 25 000-byte queue and 10 ms of delay for 1 s: the queue
        // is full (200 ms) when the cap is lifted. What was queued keeps its fate; what comes
        // after is not dropped and does not overtake it, and once the queue would have drained
        // a datagram takes only the delay.
        var path = try Self.path {
            $0.rateBitsPerSecond = 1_000_000
            $0.queueBytes = 25_000
            $0.delay = .milliseconds(10)
        }
        var now = MediaTime.seconds(10)
        var arrivals: [(index: Int, at: MediaTime)] = []
        var lastQueued = MediaTime.zero
        for i in 0..<250 {
            if case .delivered(let at, _) = path.submit(i, bytes: 1000, at: now) { lastQueued = at }
            now += .milliseconds(4)
        }
        let dropped = path.statistics.tailDropped
        #expect(dropped > 100 && lastQueued - now > .milliseconds(150), "queue full: \(lastQueued - now)")
        path.profile.rateBitsPerSecond = nil
        for i in 250..<500 {
            path.release(until: now) { arrivals.append(($0, now)) }
            let fate = path.submit(i, bytes: 1000, at: now)
            if i == 250 {
                #expect(fate == .delivered(at: lastQueued, duplicated: false), "waits for the queue ahead: \(fate)")
            }
            if i == 499 { #expect(fate == .delivered(at: now + .milliseconds(10), duplicated: false), "\(fate)") }
            now += .milliseconds(4)
        }
        while let next = path.nextRelease {
            now = max(now, next)
            path.release(until: now) { arrivals.append(($0, now)) }
        }
        #expect(path.statistics.tailDropped == dropped, "nothing dropped once the cap is gone")
        #expect(arrivals.map(\.index) == arrivals.map(\.index).sorted(), "the order is kept")
    }

    @Test func underTheCapNothingQueues() throws {
        var path = try Self.path { $0.rateBitsPerSecond = 10_000_000 }
        _ = Self.run(&path, count: 1_000, spacing: .milliseconds(2))
        #expect(path.statistics.tailDropped == 0)
        #expect(path.statistics.queueDelay.percentile(99) == 0)
    }

    @Test func outOfRangeSettingsAreOneLineErrors() {
        var p = ImpairmentProfile()
        p.lossPercent = 120
        #expect(throws: ImpairmentError.self) { try p.validated() }
        p = ImpairmentProfile()
        p.meanBurstLength = 0.5
        #expect(throws: ImpairmentError.self) { try p.validated() }
        p = ImpairmentProfile()
        p.rateBitsPerSecond = 10
        #expect(throws: ImpairmentError.self) { try p.validated() }
        p = ImpairmentProfile()
        p.delay = .microseconds(-1)
        #expect(throws: ImpairmentError.self) { try p.validated() }
    }
}
