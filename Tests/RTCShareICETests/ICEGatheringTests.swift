import Testing
import RTCShareCore
@testable import RTCShareICE
import TestSupport

/// Server-reflexive gathering before the checks start (what a WHIP offer needs), with a fake
/// clock and STUN servers played by the test: priorities and foundations, the 1 s bound with
/// RFC 8489 retransmissions inside it, error and hostile answers, and pairing from the base.
@Suite struct ICEGatheringTests {
    static let host = try! ICEAddress(parsing: "10.0.0.1:5000")
    static let serverA = try! ICEAddress(parsing: "203.0.113.1:3478")
    static let serverB = try! ICEAddress(parsing: "203.0.113.2:3478")
    static let mapped = try! ICEAddress(parsing: "198.51.100.20:61000")

    typealias Agent = ICEAgent<SeededRandom>

    static func agent(servers: [ICEAddress], seed: UInt64 = 1) -> Agent {
        var config = ICEConfiguration()
        config.stunServers = servers
        var agent = Agent(configuration: config, random: SeededRandom(seed: seed))
        agent.addHostCandidate(host)
        return agent
    }

    /// What the agent sends at `now` after a tick: (destination, parsed request).
    static func sent(_ agent: inout Agent, at now: ICETime) throws -> [(ICEAddress, STUNParsedMessage)] {
        agent.tick(at: now)
        var out: [(ICEAddress, STUNParsedMessage)] = []
        var buffer = [UInt8](repeating: 0, count: Agent.maximumMessageSize)
        while let t = buffer.withUnsafeMutableBytes({ agent.pollTransmit(into: $0) }) {
            #expect(t.source == host, "gathering goes out from the host base")
            out.append((t.destination, try parseSTUN(Array(buffer[..<t.count]))))
        }
        return out
    }

    static func events(_ agent: inout Agent) -> [ICEEvent] {
        var events: [ICEEvent] = []
        while let e = agent.pollEvent() { events.append(e) }
        return events
    }

    /// A STUN server's success answer naming `mapped`, as bytes.
    static func answer(_ request: STUNParsedMessage, mapped: ICEAddress, xor: Bool = true) throws -> [UInt8] {
        try written(STUNMessage(type: .bindingSuccess, transactionID: request.message.transactionID,
                                attributes: [xor ? .xorMappedAddress(mapped) : .mappedAddress(mapped)]), fingerprint: true)
    }

    @Test func gatheringBeforeStartWritesOneServerReflexiveCandidatePerMapping() throws {
        var agent = Self.agent(servers: [Self.serverA, Self.serverB])
        agent.gather(at: .zero)
        #expect(agent.state == .new)
        // One new transaction per Ta: server A at 0, server B 50 ms later.
        let first = try Self.sent(&agent, at: .zero)
        #expect(first.map(\.0) == [Self.serverA])
        #expect(agent.nextDeadline == .milliseconds(50))
        let second = try Self.sent(&agent, at: .milliseconds(50))
        #expect(second.map(\.0) == [Self.serverB])
        #expect(first[0].1.message.type == .bindingRequest && first[0].1.message.username == nil)

        // Both see the same mapping (an endpoint-independent NAT): one candidate, not two.
        _ = try Self.answer(first[0].1, mapped: Self.mapped).withUnsafeBytes {
            agent.handle($0, from: Self.serverA, at: .milliseconds(60))
        }
        _ = try Self.answer(second[0].1, mapped: Self.mapped, xor: false).withUnsafeBytes {
            agent.handle($0, from: Self.serverB, at: .milliseconds(70))
        }
        let srflx = ICECandidate(foundation: "2", priority: 1_694_498_815, address: Self.mapped, type: .serverReflexive,
                                 relatedAddress: Self.host)
        #expect(Self.events(&agent) == [
            .serverReflexiveAddress(mapped: Self.mapped, base: Self.host, server: Self.serverA),
            .candidateGathered(srflx),
            .serverReflexiveAddress(mapped: Self.mapped, base: Self.host, server: Self.serverB),
            .gatheringComplete,
        ])
        // RFC 8445 §5.1.2.1: (2^24 × 100) + (2^8 × 65535) + (256 − 1).
        #expect(srflx.priority == 100 << 24 | 65_535 << 8 | 255)
        #expect(agent.localCandidates.map(\.sdpAttribute) == [
            "candidate:1 1 udp 2130706431 10.0.0.1 5000 typ host",
            "candidate:2 1 udp 1694498815 198.51.100.20 61000 typ srflx raddr 10.0.0.1 rport 5000",
        ])
        #expect(agent.isGatheringComplete && agent.nextDeadline == nil && agent.state == .new)
        #expect(agent.counters.serverReflexiveAnswers == 2 && agent.counters.gatheringFailures == 0)
        // Checks start later without gathering again.
        agent.start(at: .milliseconds(100))
        #expect(try Self.sent(&agent, at: .milliseconds(100)).isEmpty)
    }

    @Test func twoServersSeeingTwoMappingsGiveTwoFoundations() throws {
        var agent = Self.agent(servers: [Self.serverA, Self.serverB])
        agent.gather(at: .zero)
        let a = try Self.sent(&agent, at: .zero)[0].1
        let b = try Self.sent(&agent, at: .milliseconds(50))[0].1
        let other = try ICEAddress(parsing: "198.51.100.21:62000")
        _ = try Self.answer(a, mapped: Self.mapped).withUnsafeBytes { agent.handle($0, from: Self.serverA, at: .milliseconds(60)) }
        _ = try Self.answer(b, mapped: other).withUnsafeBytes { agent.handle($0, from: Self.serverB, at: .milliseconds(70)) }
        let srflx = agent.localCandidates.filter { $0.type == .serverReflexive }
        #expect(srflx.map(\.address) == [Self.mapped, other])
        // §5.1.1.3: same type and base, different STUN server IP → different foundations.
        #expect(Set(srflx.map(\.foundation)).count == 2)
        #expect(!srflx.map(\.foundation).contains(agent.localCandidates[0].foundation))
    }

    @Test func anUnansweredServerIsRetransmittedToThenGivenUpAfterOneSecond() throws {
        var agent = Self.agent(servers: [Self.serverA])
        agent.gather(at: .zero)
        var sends: [ICETime] = []
        var events: [(ICETime, ICEEvent)] = []
        var now = ICETime.zero
        for _ in 0..<20 {
            sends += try Self.sent(&agent, at: now).map { _ in now }
            events += Self.events(&agent).map { (now, $0) }
            guard let next = agent.nextDeadline else { break }
            now = next
        }
        // RFC 8489 §6.2.1 with RTO 500 ms: 0, 500 ms (the next would be at 1.5 s, past the bound).
        #expect(sends == [.zero, .milliseconds(500)])
        #expect(events.map(\.0) == [.seconds(1), .seconds(1)])
        #expect(events.map(\.1) == [
            .stunServerFailed(server: Self.serverA, base: Self.host, reason: "no answer within 1000 ms"),
            .gatheringComplete,
        ])
        #expect(agent.localCandidates.count == 1 && agent.nextDeadline == nil)
        #expect(agent.counters.retransmissions == 1 && agent.counters.gatheringFailures == 1)
    }

    @Test func anErrorAnswerEndsThatRequest() throws {
        var agent = Self.agent(servers: [Self.serverA])
        agent.gather(at: .zero)
        let request = try Self.sent(&agent, at: .zero)[0].1
        let error = try written(STUNMessage(type: .bindingError, transactionID: request.message.transactionID,
                                            attributes: [.errorCode(code: 400, reason: "Bad Request")]))
        _ = error.withUnsafeBytes { agent.handle($0, from: Self.serverA, at: .milliseconds(20)) }
        #expect(Self.events(&agent) == [
            .stunServerFailed(server: Self.serverA, base: Self.host, reason: "error 400"), .gatheringComplete,
        ])
    }

    @Test func forgedAndMalformedAnswersAreDroppedAndCountedAndTheRealOneStillCounts() throws {
        var agent = Self.agent(servers: [Self.serverA])
        agent.gather(at: .zero)
        let request = try Self.sent(&agent, at: .zero)[0].1
        let id = request.message.transactionID
        let stranger = try ICEAddress(parsing: "192.0.2.66:3478")
        let v6 = try ICEAddress(parsing: "[2001:db8::1]:4000")
        let hostile: [([UInt8], ICEAddress)] = [
            (try Self.answer(request, mapped: Self.mapped), stranger),  // not from the server asked
            (try written(STUNMessage(type: .bindingSuccess, transactionID: STUNTransactionID(high: 1, low: 2),
                                     attributes: [.xorMappedAddress(Self.mapped)])), Self.serverA),  // no such transaction
            (try written(STUNMessage(type: .bindingSuccess, transactionID: id, attributes: [])), Self.serverA),  // no address
            (try Self.answer(request, mapped: v6), Self.serverA),  // another family than the base
            (try Self.answer(request, mapped: try ICEAddress(parsing: "0.0.0.0:4000")), Self.serverA),
            (try Self.answer(request, mapped: try ICEAddress(parsing: "198.51.100.20:0")), Self.serverA),
        ]
        for (bytes, source) in hostile {
            _ = bytes.withUnsafeBytes { agent.handle($0, from: source, at: .milliseconds(10)) }
        }
        // Truncations of a real answer: every prefix that still looks like STUN.
        let real = try Self.answer(request, mapped: Self.mapped)
        for n in 0..<real.count {
            _ = Array(real[..<n]).withUnsafeBytes { agent.handle($0, from: Self.serverA, at: .milliseconds(10)) }
        }
        #expect(Self.events(&agent).isEmpty)
        #expect(agent.counters.malformedDropped >= 5 && agent.counters.unknownTransactionDropped == 1)
        _ = real.withUnsafeBytes { agent.handle($0, from: Self.serverA, at: .milliseconds(20)) }
        #expect(agent.localCandidates.last?.address == Self.mapped)
        #expect(Self.events(&agent).last == .gatheringComplete)
    }

    @Test func aMappingEqualToTheBaseIsAnswerButNoCandidate() throws {
        var agent = Self.agent(servers: [Self.serverA])
        agent.gather(at: .zero)
        let request = try Self.sent(&agent, at: .zero)[0].1
        _ = try Self.answer(request, mapped: Self.host).withUnsafeBytes { agent.handle($0, from: Self.serverA, at: .milliseconds(5)) }
        #expect(Self.events(&agent) == [
            .serverReflexiveAddress(mapped: Self.host, base: Self.host, server: Self.serverA), .gatheringComplete,
        ])
        #expect(agent.localCandidates.count == 1)
    }

    @Test func withoutServersGatheringCompletesAtOnce() {
        var agent = Self.agent(servers: [])
        agent.gather(at: .zero)
        #expect(Self.events(&agent) == [.gatheringComplete])
        #expect(agent.nextDeadline == nil)
    }

    @Test func checksGoOutFromTheHostBaseNeverFromTheServerReflexiveAddress() throws {
        var agent = Self.agent(servers: [Self.serverA])
        agent.gather(at: .zero)
        let request = try Self.sent(&agent, at: .zero)[0].1
        _ = try Self.answer(request, mapped: Self.mapped).withUnsafeBytes { agent.handle($0, from: Self.serverA, at: .milliseconds(5)) }
        _ = Self.events(&agent)
        var peer = ICEAgent(configuration: ICEConfiguration(), random: SeededRandom(seed: 9))
        let remote = peer.addHostCandidate(try ICEAddress(parsing: "203.0.113.9:7000"))
        agent.setRemoteCredentials(peer.localCredentials)
        agent.addRemoteCandidate(remote)
        agent.start(at: .milliseconds(100))
        // One pair (host base ↔ remote): the srflx candidate is pruned to its base (§6.1.2.4).
        #expect(agent.pairs.count == 1)
        let checks = try Self.sent(&agent, at: .milliseconds(100))
        #expect(checks.map(\.0) == [remote.address])
        #expect(checks.first?.1.message.useCandidate == false)
    }
}
