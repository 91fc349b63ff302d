import RTCShareICE

/// What asking the STUN servers before a WHIP offer found, read from the ICE agent's events:
/// the addresses they saw, the candidates learned, who gave nothing, and one log line saying
/// so. Sans-IO (the edge hands in events and the time it took), so tests drive it with a fake
/// clock.
public struct ServerReflexiveGathering: Sendable {
    public struct Answer: Sendable, Equatable {
        public var server: ICEAddress
        public var base: ICEAddress
        public var mapped: ICEAddress
    }

    public struct Failure: Sendable, Equatable {
        public var server: ICEAddress
        public var reason: String
    }

    public private(set) var answers: [Answer] = []
    public private(set) var candidates: [ICECandidate] = []
    public private(set) var failures: [Failure] = []
    public private(set) var complete = false
    /// Datagrams that came in while gathering and were not STUN (dropped: nothing else runs yet).
    public var otherDatagrams = 0
    /// From the first request to the end of gathering.
    public var elapsedMicroseconds: Int64 = 0

    public init() {}

    public mutating func note(_ event: ICEEvent) {
        switch event {
        case .serverReflexiveAddress(let mapped, let base, let server):
            answers.append(Answer(server: server, base: base, mapped: mapped))
        case .candidateGathered(let c) where c.type == .serverReflexive:
            candidates.append(c)
        case .stunServerFailed(let server, _, let reason):
            failures.append(Failure(server: server, reason: reason))
        case .gatheringComplete:
            complete = true
        default:
            break
        }
    }

    /// One line for the log: what each server said, and what the offer carries as a result.
    public var notice: String {
        // Tenths below 10 ms (a server on the LAN answers in well under one).
        let us = max(0, elapsedMicroseconds)
        let ms = us >= 10_000 ? "\(us / 1_000)" : "\(us / 1_000).\(us / 100 % 10)"
        var parts: [String] = []
        for a in answers {
            if candidates.contains(where: { $0.address == a.mapped }) {
                parts.append("\(a.server) sees \(a.base) as \(a.mapped)")
            } else if a.mapped == a.base {
                parts.append("\(a.server) sees \(a.base) as itself (no NAT between)")
            } else {
                parts.append("\(a.server) sees \(a.base) as \(a.mapped) (already a candidate)")
            }
        }
        for f in failures { parts.append("\(f.server): \(f.reason)") }
        let outcome = candidates.isEmpty
            ? "offering host candidates only"
            : "offering \(candidates.count) server-reflexive candidate\(candidates.count == 1 ? "" : "s") beside the host ones"
        return "STUN in \(ms) ms: " + parts.joined(separator: "; ") + "; " + outcome
    }
}
