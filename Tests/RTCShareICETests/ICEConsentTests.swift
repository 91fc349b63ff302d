import Testing
import RTCShareCore
@testable import RTCShareICE
import TestSupport

/// Consent freshness (RFC 7675) over the simulated link: requests retransmitted while
/// unanswered, bounded, and consent lost 30 s after the last answer, not after a few losses.
@Suite struct ICEConsentTests {
    /// Drops everything A and B send between `from` and `to`.
    private func outage(_ sim: inout ICESimulation, from: ICETime, to: ICETime) {
        sim.run(until: from)
        sim.blackhole = true
        sim.run(until: to)
        sim.blackhole = false
    }

    @Test func aLostConsentRequestIsRetransmittedAndItsAnswerRenewsConsent() throws {
        var sim = ICESimulation(seed: 21)
        sim.run(until: .seconds(10))
        #expect(sim.a.state == .connected)
        let answered = try #require(sim.a.lastConsentAnswer)
        let due = sim.a.nextConsent
        #expect(due > sim.now)
        let retransmissions = sim.a.counters.retransmissions
        // Only the first transmission of the next request is lost.
        outage(&sim, from: due - .milliseconds(1), to: due + .milliseconds(1))
        sim.run(until: due + .seconds(2))
        let renewed = try #require(sim.a.lastConsentAnswer)
        #expect(renewed > answered)
        // Retransmitted one minimum RTO later, answered one round trip (20 ms) after that.
        #expect(renewed >= due + .milliseconds(500) && renewed <= due + .milliseconds(521),
                "\((renewed - due).microseconds) µs")
        #expect(sim.a.counters.retransmissions == retransmissions + 1)
    }

    @Test func unansweredRequestsRepeatEveryHalfSecondUntilTheNextAndStayBounded() throws {
        var sim = ICESimulation(seed: 22)
        sim.run(until: .seconds(10))
        let before = sim.a.counters
        sim.blackhole = true
        var heldAtMost = 0
        for step in 1...(20 * 20) {
            sim.run(until: .seconds(10) + .milliseconds(Int64(step) * 50))
            heldAtMost = max(heldAtMost, sim.a.transactions.count)
        }
        let requests = sim.a.counters.requestsSent - before.requestsSent
        let retransmissions = sim.a.counters.retransmissions - before.retransmissions
        // A request every 4...6 s, each sent again every 500 ms until the next starts: two
        // datagrams a second in all.
        #expect(requests >= 3 && requests <= 6, "\(requests) requests")
        #expect(requests + retransmissions >= 38 && requests + retransmissions <= 41,
                "\(requests) requests, \(retransmissions) resent in 20 s")
        // The one retransmitting and the superseded ones waiting for a late answer (8 s).
        #expect(heldAtMost <= 3, "\(heldAtMost) transactions held")
        // Back within 24 s (the last answer was at most 6 s before): consent is renewed, never lost.
        sim.blackhole = false
        sim.run(until: .seconds(60))
        #expect(sim.a.state == .connected)
        #expect(try #require(sim.a.lastConsentAnswer) > .seconds(30))
    }

    @Test func consentIsLostThirtySecondsAfterTheLastAnswer() throws {
        for seed: UInt64 in 23...30 {
            var sim = ICESimulation(seed: seed)
            sim.run(until: .seconds(10) + .milliseconds(Int64(seed) * 300))
            sim.blackhole = true
            sim.run(until: .seconds(60))
            let last = try #require(sim.a.lastConsentAnswer)
            let lost = sim.eventsA.first { if case .consentLost = $0.1 { true } else { false } }
            #expect(lost?.0 == last + .seconds(30), "seed \(seed)")
            #expect(sim.a.state == .consentLost)
            #expect(sim.a.transactions.isEmpty && sim.a.nextDeadline == nil)
        }
    }

    @Test func theLastAnswerIsUnknownUntilThePeerAnswersAfterSelection() throws {
        var sim = ICESimulation(seed: 31)
        #expect(sim.a.lastConsentAnswer == nil)
        sim.run(until: .seconds(3))
        // The nominating check's answer selected the pair; consent answers come after it.
        #expect(sim.a.lastConsentAnswer == nil || sim.a.counters.consentAnswers > 0)
        sim.run(until: .seconds(8))
        #expect(sim.a.counters.consentAnswers >= 1)
        #expect(try #require(sim.a.lastConsentAnswer) > .seconds(3))
    }
}
