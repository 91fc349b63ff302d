import RTCShare
import RTCShareCore
import TestSupport
import Testing

/// The reconnect policy in fake time: back-off with jitter, Retry-After, permanent against
/// temporary, the attempt limit, and the choice between an ICE restart and a new POST.
struct ReconnectPolicyTests {
    static let t0 = MediaTime(microseconds: 1_000_000_000)

    /// Fails `count` times in a row from `start` (each failure when the previous retry was due);
    /// the delays between them in seconds.
    static func delays(_ policy: inout ReconnectPolicy, count: Int, loss: ReconnectPolicy.Loss = .signalling,
                       seed: UInt64 = 7) -> [Double] {
        var random = SeededRandom(seed: seed)
        var now = t0
        var out: [Double] = []
        for _ in 0..<count {
            guard case .retry(let at, _, _) = policy.failed(.temporary(afterSeconds: nil), loss: loss, sessionHeld: false,
                                                            at: now, random: &random) else { break }
            out.append(Double((at - now).microseconds) / 1e6)
            now = at
        }
        return out
    }

    @Test func delaysDoubleFromOneSecondToThirtyWithinTheJitter() {
        var policy = ReconnectPolicy()
        let delays = Self.delays(&policy, count: 9)
        let nominal: [Double] = [1, 2, 4, 8, 16, 30, 30, 30, 30]
        #expect(delays.count == nominal.count)
        for (d, n) in zip(delays, nominal) {
            #expect(d >= n * 0.8 - 1e-6 && d <= n * 1.2 + 1e-6, "delay \(d) s for nominal \(n) s: \(delays)")
        }
        #expect(policy.attempt == 9)
    }

    @Test func jitterSpreadsBoardsThatLostTheSameServer() {
        // Ten boards' first delays: not all the same second.
        let firsts = (1...10).map { seed -> Double in
            var policy = ReconnectPolicy()
            return Self.delays(&policy, count: 1, seed: UInt64(seed))[0]
        }
        #expect(Set(firsts.map { Int($0 * 100) }).count > 5, "\(firsts)")
    }

    @Test func aPathLossIsTriedAtOnceThenBacksOff() {
        var policy = ReconnectPolicy()
        let delays = Self.delays(&policy, count: 3, loss: .path)
        #expect(delays[0] == 0, "an ICE restart or new POST right after consent is lost: \(delays)")
        #expect(delays[1] >= 0.8 && delays[1] <= 1.2, "\(delays)")
        #expect(delays[2] >= 1.6 && delays[2] <= 2.4, "\(delays)")
    }

    @Test func retryAfterLongerThanTheDelayIsHonouredAndCapped() {
        var random = SeededRandom(seed: 1)
        var policy = ReconnectPolicy()
        guard case .retry(let at, _, _) = policy.failed(.temporary(afterSeconds: 12), loss: .signalling,
                                                        sessionHeld: false, at: Self.t0, random: &random) else {
            Issue.record("gave up on a 503 with Retry-After")
            return
        }
        #expect(at - Self.t0 == .seconds(12))
        guard case .retry(let later, _, _) = policy.failed(.temporary(afterSeconds: 86_400), loss: .signalling,
                                                           sessionHeld: false, at: at, random: &random) else {
            Issue.record("gave up")
            return
        }
        #expect(later - at == .seconds(300), "a day's Retry-After is capped at 300 s")
        // Shorter than the back-off: the back-off stands.
        guard case .retry(let third, _, _) = policy.failed(.temporary(afterSeconds: 0), loss: .signalling,
                                                           sessionHeld: false, at: later, random: &random) else {
            Issue.record("gave up")
            return
        }
        #expect(third - later >= .milliseconds(3_200), "the third delay (nominal 4 s) stands")
    }

    /// An attempt that took its whole 5 s timeout has waited already: the next follows at once
    /// while the delay is shorter than that, and waits the rest once it is longer.
    @Test func aDelayCountsFromWhenTheFailedAttemptBegan() {
        var random = SeededRandom(seed: 9)
        var policy = ReconnectPolicy()
        var started = Self.t0
        var waits: [Double] = []
        for _ in 0..<7 {
            let failedAt = started + .seconds(5)  // the POST's connect timeout
            guard case .retry(let at, _, _) = policy.failed(.temporary(afterSeconds: nil), loss: .signalling,
                                                            sessionHeld: false, at: failedAt, attemptStartedAt: started,
                                                            random: &random) else {
                Issue.record("gave up")
                return
            }
            waits.append(Double((at - failedAt).microseconds) / 1e6)
            started = at
        }
        // Nominal 1, 2, 4 s: at once; 8 s: about 3 s more; 16 s: about 11; then 30: about 25.
        #expect(waits[0] == 0 && waits[1] == 0 && waits[2] == 0, "\(waits)")
        #expect(waits[3] > 1 && waits[3] < 5, "\(waits)")
        #expect(waits[4] > 7 && waits[4] < 15, "\(waits)")
        #expect(waits[5] > 19 && waits[5] < 32, "\(waits)")
    }

    @Test func aPermanentFailureGivesUpAtOnce() {
        var random = SeededRandom(seed: 1)
        var policy = ReconnectPolicy()
        #expect(policy.failed(.permanent, loss: .signalling, sessionHeld: false, at: Self.t0, random: &random) == .giveUp)
    }

    @Test func theLimitCountsAttemptsInARowAndOffNeverRetries() {
        var limited = ReconnectPolicy.Configuration()
        limited.limit = .attempts(3)
        var policy = ReconnectPolicy(configuration: limited)
        #expect(Self.delays(&policy, count: 10).count == 3)
        var off = ReconnectPolicy.Configuration()
        off.limit = .off
        var never = ReconnectPolicy(configuration: off)
        #expect(Self.delays(&never, count: 10).isEmpty)
    }

    @Test func aConnectionThatHeldResetsTheBackOffOneThatDroppedAtOnceDoesNot() {
        var random = SeededRandom(seed: 3)
        var policy = ReconnectPolicy()
        _ = Self.delays(&policy, count: 5)  // the nominal delay is at 30 s now
        var now = Self.t0 + .seconds(100)
        policy.connected(at: now)
        now = now + .seconds(2)  // lost again 2 s later: not stable
        guard case .retry(let at, let attempt, _) = policy.failed(.temporary(afterSeconds: nil), loss: .session,
                                                                  sessionHeld: false, at: now, random: &random) else {
            Issue.record("gave up")
            return
        }
        #expect(attempt == 1, "attempts count from the last connection")
        #expect(at - now >= .seconds(24), "a server that drops at once is not hammered: \((at - now).microseconds) µs")
        policy.connected(at: at)
        let held = at + .seconds(60)
        guard case .retry(let again, _, _) = policy.failed(.temporary(afterSeconds: nil), loss: .session,
                                                           sessionHeld: false, at: held, random: &random) else {
            Issue.record("gave up")
            return
        }
        #expect(again - held <= .milliseconds(1_200), "a connection that held a minute starts from 1 s again")
    }

    @Test func iceRestartOnlyWhereTheSessionIsHeldThePathFailedAndTheServerTakesIt() {
        var random = SeededRandom(seed: 5)
        func way(_ policy: inout ReconnectPolicy, _ loss: ReconnectPolicy.Loss, held: Bool) -> ReconnectPolicy.Way? {
            guard case .retry(_, _, let way) = policy.failed(.temporary(afterSeconds: nil), loss: loss, sessionHeld: held,
                                                             at: Self.t0, random: &random) else { return nil }
            return way
        }
        var policy = ReconnectPolicy()
        #expect(way(&policy, .path, held: true) == .iceRestart)
        #expect(way(&policy, .path, held: false) == .newSession)
        #expect(way(&policy, .session, held: true) == .newSession, "DTLS closed: the server's session is gone")
        #expect(way(&policy, .signalling, held: true) == .newSession)
        #expect(way(&policy, .iceRestart, held: true) == .newSession, "an ICE restart that failed: a new POST")
        policy.iceRestartAnswered(taken: false)  // 405 to the PATCH
        #expect(way(&policy, .path, held: true) == .newSession)
    }
}
