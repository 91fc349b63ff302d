// Server-reflexive gathering (RFC 8445 §5.1.1.2, RFC 8489 §6.2.1): a Binding request from each
// host base to each STUN server of its family, sent from the session's one socket, so the
// mapping the server sees is the one our checks and media will use.
//
// Gathering can run before `start` (`gather`): a WHIP offer is written once, before ICE
// starts, and must already carry the server-reflexive candidates. It is bounded: what has not
// been answered `gatheringTimeout` after the round began is given up (`stunServerFailed`),
// then `gatheringComplete` comes, so the owner never waits longer than that.
//
// A STUN server's answer is unauthenticated (no credentials are shared with it), so it is
// taken only from the address the request went to, for a transaction of ours, and only if it
// names a usable mapped address of the base's family; anything else is dropped and counted
// (the transaction stays open for the real answer). An error answer ends that request.
//
// Candidates (§5.1.1.3, §5.1.3): priority with type preference 100 and the host's local
// preference; foundation per (type, base IP, server IP); a mapped address equal to the base
// (no NAT between us and the server) or to a candidate we have is redundant and not added.

import RTCShareCore

/// One gathering request waiting for its turn (one new transaction per Ta).
struct PendingGathering: Equatable {
    var base: ICEAddress
    var server: ICEAddress
}

extension ICEAgent {
    /// Starts learning server-reflexive candidates now, before the checks start, so the offer
    /// can carry them: drain `pollTransmit` and `pollEvent`, feed answers to `handle`, call
    /// `tick` at `nextDeadline`, until `gatheringComplete` (at most `gatheringTimeout` from
    /// `now`). Without STUN servers `gatheringComplete` comes at once. Does nothing once
    /// gathering or the checks have started.
    public mutating func gather(at now: MediaTime) {
        guard state == .new, !gatheringStarted else { return }
        beginGathering(at: now)
        startPacedTransaction(at: now)  // the first request goes out now, not at the first tick
    }

    /// Whether gathering has finished (answered, failed or given up everywhere).
    public var isGatheringComplete: Bool { gatheringReported }

    mutating func beginGathering(at now: MediaTime) {
        gatheringStarted = true
        gatheringDeadline = now + configuration.gatheringTimeout
        for l in locals where l.candidate.type == .host { queueGathering(from: l.base) }
        reportGatheringIfDone()
    }

    /// Queues a request from `base` to every STUN server of its family. A round that had
    /// finished starts again with a fresh deadline (a host candidate added later).
    mutating func queueGathering(from base: ICEAddress) {
        let servers = configuration.stunServers.filter { $0.family == base.family }
        guard !servers.isEmpty else { return }
        if gatheringReported {
            gatheringReported = false
            gatheringDeadline = nil
        }
        for server in servers where !pendingGathering.contains(PendingGathering(base: base, server: server)) {
            pendingGathering.append(PendingGathering(base: base, server: server))
        }
    }

    mutating func sendGathering(_ request: PendingGathering, at now: MediaTime) {
        if gatheringDeadline == nil { gatheringDeadline = now + configuration.gatheringTimeout }
        let id = STUNTransactionID(using: &random)
        var attributes: [STUNAttribute] = []
        if let s = configuration.software { attributes.append(.software(s)) }
        let o = Outgoing(message: STUNMessage(type: .bindingRequest, transactionID: id, attributes: attributes),
                         key: .none, destination: request.server, source: request.base)
        // RFC 8445 §14.3: RTO = max(500 ms, Ta × candidates); RFC 8489's doubling from there.
        let rto = max(configuration.minimumRTO, configuration.pacing * Int64(max(1, pendingGathering.count + 1)))
        begin(Transaction(id: id, kind: .gather(base: request.base), role: role, outgoing: o, rto: rto,
                          retransmits: true, nextRetransmit: now, expires: now), at: now)
    }

    /// Gives up what is unanswered (or unsent) once the round's deadline has passed.
    mutating func expireGathering(at now: MediaTime) {
        guard !gatheringReported, let deadline = gatheringDeadline, now >= deadline else { return }
        let waited = configuration.gatheringTimeout
        var i = 0
        while i < transactions.count {
            if case .gather(let base) = transactions[i].kind {
                let tx = transactions.remove(at: i)
                gatheringFailed(server: tx.outgoing.destination, base: base, reason: "no answer within \(waited.iceText)")
            } else {
                i += 1
            }
        }
        let unsent = pendingGathering
        pendingGathering.removeAll()
        for request in unsent {
            gatheringFailed(server: request.server, base: request.base, reason: "not asked within \(waited.iceText)")
        }
        reportGatheringIfDone()
    }

    /// A STUN server's answer to transaction `t` (already matched by ID).
    mutating func handleGatheringResponse(_ parsed: STUNParsedMessage, transaction t: Int, base: ICEAddress,
                                          from source: ICEAddress) {
        let server = transactions[t].outgoing.destination
        let m = parsed.message
        guard source == server, parsed.unknownComprehensionRequired.isEmpty else {
            counters.malformedDropped += 1
            return
        }
        if m.type.messageClass == .errorResponse {
            transactions.remove(at: t)
            gatheringFailed(server: server, base: base, reason: "error \(m.errorCode.map(String.init) ?? "without a code")")
            reportGatheringIfDone()
            return
        }
        guard let mapped = m.xorMappedAddress ?? m.mappedAddress, Self.isUsableMapped(mapped, for: base) else {
            counters.malformedDropped += 1  // a forgery or a broken server; the real answer may follow
            return
        }
        transactions.remove(at: t)
        counters.serverReflexiveAnswers += 1
        emit(.serverReflexiveAddress(mapped: mapped, base: base, server: server))
        gathered(mapped, base: base, server: server)
        reportGatheringIfDone()
    }

    /// Same family as the base, a port, not the unspecified address.
    static func isUsableMapped(_ mapped: ICEAddress, for base: ICEAddress) -> Bool {
        guard mapped.family == base.family, mapped.port != 0 else { return false }
        if let v4 = mapped.ipv4 { return v4 != 0 }
        let v6 = mapped.ipv6!
        return v6.high != 0 || v6.low != 0
    }

    /// A server-reflexive candidate (§5.1.1.2); none when it is redundant (§5.1.3).
    mutating func gathered(_ mapped: ICEAddress, base: ICEAddress, server: ICEAddress) {
        guard mapped != base, !locals.contains(where: { $0.candidate.address == mapped }),
              let host = locals.first(where: { $0.base == base && $0.candidate.type == .host }) else { return }
        let c = ICECandidate(foundation: foundation(type: .serverReflexive, base: base, server: server),
                             priority: ICECandidate.priority(type: .serverReflexive, localPreference: host.localPreference),
                             address: mapped, type: .serverReflexive, relatedAddress: base)
        locals.append(LocalCandidate(candidate: c, base: base, localPreference: host.localPreference, server: server))
        emit(.candidateGathered(c))
    }

    mutating func gatheringFailed(server: ICEAddress, base: ICEAddress, reason: String) {
        counters.gatheringFailures += 1
        emit(.stunServerFailed(server: server, base: base, reason: reason))
    }

    mutating func reportGatheringIfDone() {
        guard gatheringStarted, !gatheringReported, pendingGathering.isEmpty else { return }
        guard !transactions.contains(where: { if case .gather = $0.kind { true } else { false } }) else { return }
        gatheringReported = true
        emit(.gatheringComplete)
    }
}
