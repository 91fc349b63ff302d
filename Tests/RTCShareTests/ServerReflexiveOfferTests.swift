import RTCShareCore
import RTCShareDTLS
import RTCShareICE
import RTCShareWHIP
import TestSupport
import Testing
@testable import RTCShare

/// Gathering before the WHIP offer, sans-IO with a fake clock: the ICE agent asks a STUN server
/// played by the test (behind a NAT that maps 10.0.0.1:5000 to 198.51.100.20:61000), the
/// events become the offer's candidates and one log line, and the offer says `typ srflx raddr
/// … rport …` beside the host candidate, with the srflx candidate as the default.
@Suite struct ServerReflexiveOfferTests {
    static let host = try! ICEAddress(parsing: "10.0.0.1:5000")
    static let server = try! ICEAddress(parsing: "203.0.113.1:3478")
    static let natted = try! ICEAddress(parsing: "198.51.100.20:61000")

    /// Runs gathering to completion against a server that answers after `answerDelay` (nil:
    /// never), the way `WHIPSink.gather` does with a socket and a clock.
    static func gather(answerDelay: ICEDuration?) throws -> (ICEAgent<SeededRandom>, ServerReflexiveGathering) {
        var config = ICEConfiguration()
        config.stunServers = [server]
        var agent = ICEAgent(configuration: config, random: SeededRandom(seed: 7))
        agent.addHostCandidate(host)
        var report = ServerReflexiveGathering()
        var now = ICETime.zero
        var pending: [(ICETime, [UInt8])] = []
        agent.gather(at: now)
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            while let t = buffer.withUnsafeMutableBytes({ agent.pollTransmit(into: $0) }) {
                let request = try buffer.withUnsafeBytes { raw in try STUNMessage.parse(UnsafeRawBufferPointer(rebasing: raw[..<t.count])) }
                guard let delay = answerDelay else { continue }
                var answer = [UInt8](repeating: 0, count: 64)
                let n = try answer.withUnsafeMutableBytes { raw in
                    try STUNMessage(type: .bindingSuccess, transactionID: request.message.transactionID,
                                    attributes: [.xorMappedAddress(natted)]).write(into: raw, fingerprint: true)
                }
                pending.append((now + delay, Array(answer[..<n])))
            }
            while let e = agent.pollEvent() { report.note(e) }
            if agent.isGatheringComplete { break }
            let next = [agent.nextDeadline, pending.first?.0].compactMap { $0 }.min()
            now = try #require(next, "gathering neither completed nor scheduled anything")
            while let (at, bytes) = pending.first, at <= now {
                pending.removeFirst()
                _ = bytes.withUnsafeBytes { agent.handle($0, from: server, at: now) }
            }
            agent.tick(at: now)
        }
        report.elapsedMicroseconds = now.microseconds
        return (agent, report)
    }

    static func offer(_ candidates: [ICECandidate]) throws -> String {
        WebRTCOffer.text(WebRTCOfferConfiguration(
            sessionID: 1, iceUfrag: "rtcs", icePwd: "abcdefghijklmnopqrstuvwx",
            fingerprint: try DTLSFingerprint(hashFunction: .sha256, digest: [UInt8](repeating: 1, count: 32)),
            candidates: candidates.compactMap(WebRTCOfferConfiguration.Candidate.init),
            cname: "c", videoSSRC: 1, rtxSSRC: nil))
    }

    @Test func theOfferCarriesTheServerReflexiveCandidateBesideTheHostOne() throws {
        let (agent, report) = try Self.gather(answerDelay: .milliseconds(30))
        #expect(report.elapsedMicroseconds == 30_000)
        #expect(report.candidates.map(\.address) == [Self.natted])
        #expect(report.notice == "STUN in 30 ms: 203.0.113.1:3478 sees 10.0.0.1:5000 as 198.51.100.20:61000; "
                + "offering 1 server-reflexive candidate beside the host ones")
        let lines = try Self.offer(agent.localCandidates).split(separator: "\r\n")
        #expect(lines.contains("a=candidate:1 1 udp 2130706431 10.0.0.1 5000 typ host"))
        #expect(lines.contains("a=candidate:2 1 udp 1694498815 198.51.100.20 61000 typ srflx raddr 10.0.0.1 rport 5000"))
        // The default candidate (m= port, c= address) is the one reachable from outside.
        #expect(lines.contains("m=video 61000 UDP/TLS/RTP/SAVPF 96"))
        #expect(lines.contains("c=IN IP4 198.51.100.20"))
    }

    @Test func aSilentServerCostsOneSecondAndTheOfferHasHostCandidatesOnly() throws {
        let (agent, report) = try Self.gather(answerDelay: nil)
        #expect(report.elapsedMicroseconds == 1_000_000)
        #expect(report.notice == "STUN in 1000 ms: 203.0.113.1:3478: no answer within 1000 ms; offering host candidates only")
        let offer = try Self.offer(agent.localCandidates)
        #expect(!offer.contains("srflx"))
        #expect(offer.contains("c=IN IP4 10.0.0.1\r\n"))
    }

    @Test func aServerOnTheLANIsTimedInTenthsOfAMillisecond() throws {
        let (_, report) = try Self.gather(answerDelay: ICEDuration(microseconds: 400))
        #expect(report.notice.hasPrefix("STUN in 0.4 ms: "), "\(report.notice)")
    }

    @Test func anAnswerAfterTheBoundIsTooLate() throws {
        let (agent, report) = try Self.gather(answerDelay: .milliseconds(1_200))
        #expect(report.candidates.isEmpty && report.failures.count == 1)
        #expect(agent.localCandidates.count == 1)
    }
}
