// The checklist: forming pairs, pacing new transactions, retransmitting and timing them out,
// and the failure and nomination decisions that follow (RFC 8445 §6.1.2–§6.1.4, §7.2, §8.1;
// RFC 5389 §7.2.1 for retransmission).

import RTCShareCore

extension ICEAgent {
    /// Pairs a local candidate (by its base) with a remote one of the same family.
    mutating func addPair(local l: Int, remote r: Int) {
        let base = locals[l].base
        let remote = remotes[r]
        guard locals[l].isPaired, base.family == remote.address.family else { return }
        guard !pairs.contains(where: { locals[$0.local].base == base && remotes[$0.remote].address == remote.address }) else { return }
        guard pairs.count < configuration.maxPairs else { return }
        let foundation = locals[l].candidate.foundation + ":" + remote.foundation
        // §6.1.2.6: one Waiting pair per foundation to begin with, the others Frozen.
        let sibling = pairs.contains { $0.foundation == foundation && $0.state != .failed }
        pairs.append(CandidatePair(local: l, remote: r, foundation: foundation,
                                   priority: pairPriority(local: l, remote: r),
                                   state: sibling ? .frozen : .waiting))
    }

    func pairPriority(local l: Int, remote r: Int) -> UInt64 {
        let ours = locals[l].candidate.priority, theirs = remotes[r].priority
        return role == .controlling ? CandidatePair.priority(controlling: ours, controlled: theirs)
            : CandidatePair.priority(controlling: theirs, controlled: ours)
    }

    mutating func switchRole(to newRole: ICERole) {
        guard role != newRole else { return }
        role = newRole
        counters.roleConflicts += 1
        for i in pairs.indices { pairs[i].priority = pairPriority(local: pairs[i].local, remote: pairs[i].remote) }
        emit(.roleChanged(newRole))
    }

    /// Queues a triggered check of pair `p` (§7.3.1.4), once.
    mutating func trigger(_ p: Int) {
        if pairs[p].state == .frozen || pairs[p].state == .failed { pairs[p].state = .waiting }
        if !triggered.contains(p) { triggered.append(p) }
    }

    var hasTransactionToStart: Bool {
        if !pendingGathering.isEmpty { return true }
        guard state == .checking, remoteCredentials != nil else { return false }
        return !triggered.isEmpty || pairs.contains { $0.state == .waiting || $0.state == .frozen }
    }

    /// Starts at most one new transaction per Ta.
    mutating func startPacedTransaction(at now: MediaTime) {
        guard now >= nextPacing, hasTransactionToStart else { return }
        nextPacing = now + configuration.pacing
        if state == .checking || state == .connected, remoteCredentials != nil, !triggered.isEmpty {
            let p = triggered.removeFirst()
            let nominate = role == .controlling && nominationPair == p
            if state == .checking || nominate { sendCheck(p, useCandidate: nominate, at: now) }
            return
        }
        if !pendingGathering.isEmpty {
            sendGathering(pendingGathering.removeFirst(), at: now)
            return
        }
        guard state == .checking else { return }
        let next = highestPriorityPair(.waiting) ?? highestPriorityPair(.frozen)
        if let p = next { sendCheck(p, useCandidate: false, at: now) }
    }

    func highestPriorityPair(_ s: PairState) -> Int? {
        var best: Int? = nil
        for i in pairs.indices where pairs[i].state == s {
            if best == nil || pairs[i].priority > pairs[best!].priority { best = i }
        }
        return best
    }

    /// RTO for a new check (RFC 8445 §14.3).
    var checkRTO: MediaDuration {
        let active = Int64(pairs.filter { $0.state == .waiting || $0.state == .inProgress }.count)
        return max(configuration.minimumRTO, configuration.pacing * active)
    }

    /// The Binding request of a check or consent request on pair `p`.
    mutating func checkRequest(_ p: Int, useCandidate: Bool) -> (STUNTransactionID, Outgoing) {
        let pair = pairs[p]
        let id = STUNTransactionID(using: &random)
        var attributes: [STUNAttribute] = [
            .username("\(remoteCredentials!.ufrag):\(localCredentials.ufrag)"),
            // §7.1.1: the priority a peer-reflexive candidate of ours would get.
            .priority(ICECandidate.priority(type: .peerReflexive, localPreference: locals[pair.local].localPreference)),
            role == .controlling ? .iceControlling(tieBreaker) : .iceControlled(tieBreaker),
        ]
        if useCandidate { attributes.append(.useCandidate) }
        if let s = configuration.software { attributes.append(.software(s)) }
        let message = STUNMessage(type: .bindingRequest, transactionID: id, attributes: attributes)
        return (id, Outgoing(message: message, key: .remote, destination: remotes[pair.remote].address,
                             source: locals[pair.local].base))
    }

    mutating func sendCheck(_ p: Int, useCandidate: Bool, at now: MediaTime) {
        let rto = checkRTO
        let (id, o) = checkRequest(p, useCandidate: useCandidate)
        pairs[p].state = .inProgress
        pairs[p].transaction = id
        begin(Transaction(id: id, kind: .check(pair: p, useCandidate: useCandidate), role: role, outgoing: o,
                          rto: rto, retransmits: true, nextRetransmit: now, expires: now), at: now)
    }

    /// Sends the first transmission of `tx` and schedules the rest (RFC 5389 §7.2.1).
    mutating func begin(_ tx: Transaction, at now: MediaTime) {
        var t = tx
        t.initialRTO = t.rto
        t.firstSentAt = now
        outgoing.append(t.outgoing)
        counters.requestsSent += 1
        schedule(&t, sentAt: now)
        transactions.append(t)
    }

    func schedule(_ t: inout Transaction, sentAt now: MediaTime) {
        if case .consent = t.kind, t.retransmits {
            // Consent: every RTO, no back-off, until the next request supersedes it
            // (ICEAgent+Consent.swift).
            t.nextRetransmit = now + t.rto
        } else if t.retransmits && t.transmissions < configuration.maxTransmissions {
            t.nextRetransmit = now + t.rto
            t.rto = t.rto * 2
        } else {
            t.retransmits = false
        }
        // Past the last transmission, wait Rm × the initial RTO.
        if !t.retransmits { t.expires = now + t.initialRTO * configuration.finalWaitFactor }
    }

    /// Retransmits what is due and times out what has waited long enough.
    mutating func runTransactions(at now: MediaTime) {
        var i = 0
        while i < transactions.count {
            if transactions[i].retransmits && transactions[i].nextRetransmit <= now {
                transactions[i].transmissions += 1
                outgoing.append(transactions[i].outgoing)
                counters.retransmissions += 1
                schedule(&transactions[i], sentAt: now)
                i += 1
            } else if !transactions[i].retransmits && transactions[i].expires <= now {
                let tx = transactions.remove(at: i)
                timedOut(tx)
            } else {
                i += 1
            }
        }
    }

    mutating func timedOut(_ tx: Transaction) {
        switch tx.kind {
        case .check(let p, _):
            if pairs[p].transaction == tx.id { pairFailed(p) }
        case .gather(let base):
            gatheringFailed(server: tx.outgoing.destination, base: base,
                            reason: "no answer to \(tx.transmissions) requests")
        case .consent:
            break  // consent is judged by time since the last success, not per request
        }
    }

    mutating func pairFailed(_ p: Int) {
        pairs[p].state = .failed
        pairs[p].transaction = nil
        counters.pairsFailed += 1
        triggered.removeAll { $0 == p }
    }

    /// §8.1.2: when every pair failed and nothing is left to try, ICE failed.
    mutating func checkAllFailed() {
        guard state == .checking, !pairs.isEmpty, remoteCredentials != nil, triggered.isEmpty,
              pairs.allSatisfy({ $0.state == .failed }) else { return }
        fail(.allPairsFailed(pairs: pairs.count))
    }

    /// A check of pair `p` succeeded: the pair is valid (§7.2.5.3).
    mutating func checkSucceeded(_ p: Int, useCandidate: Bool, mapped: ICEAddress?, at now: MediaTime) {
        pairs[p].state = .succeeded
        pairs[p].transaction = nil
        // §7.2.5.3.3: unfreeze the pairs of the same foundation.
        for i in pairs.indices where pairs[i].foundation == pairs[p].foundation && pairs[i].state == .frozen {
            pairs[i].state = .waiting
        }
        if let mapped, mapped != locals[pairs[p].local].base, !locals.contains(where: { $0.candidate.address == mapped }) {
            learnLocalPeerReflexive(mapped, base: pairs[p].local)
        }
        if state == .connected {
            if selectedPairIndex == p { consentRenewed(at: now) }
            return
        }
        if role == .controlling {
            if useCandidate {
                select(p, at: now)
            } else if nominationPair == nil || nominationPair == p {
                // Regular nomination: repeat this first valid pair's check with USE-CANDIDATE, ahead
                // of anything else queued (again if a triggered check replaced the nominating one).
                nominationPair = p
                triggered.removeAll { $0 == p }
                triggered.insert(p, at: 0)
            }
        } else if pairs[p].nominateOnSuccess {
            select(p, at: now)
        }
    }

    /// A local peer-reflexive candidate (our address as the peer saw it), sharing `base`'s
    /// base; it is not paired on its own (§7.2.5.3.1).
    mutating func learnLocalPeerReflexive(_ mapped: ICEAddress, base l: Int) {
        let b = locals[l]
        let c = ICECandidate(foundation: foundation(type: .peerReflexive, base: b.base, server: nil),
                             priority: ICECandidate.priority(type: .peerReflexive, localPreference: b.localPreference),
                             address: mapped, type: .peerReflexive, relatedAddress: b.base)
        locals.append(LocalCandidate(candidate: c, base: b.base, localPreference: b.localPreference))
    }

    var selectedPairIndex: Int? {
        guard let s = selectedPair else { return nil }
        return pairs.firstIndex { locals[$0.local].base == s.localBase && remotes[$0.remote].address == s.remote.address }
    }

    /// Nominates pair `p`: ICE is connected; checks stop, consent starts.
    mutating func select(_ p: Int, at now: MediaTime) {
        guard state == .checking else { return }
        let pair = pairs[p]
        let local = locals.last { $0.base == locals[pair.local].base && $0.candidate.type == .peerReflexive }
            ?? locals[pair.local]
        selectedPair = ICESelectedPair(local: local.candidate, localBase: local.base, remote: remotes[pair.remote])
        state = .connected
        triggered.removeAll()
        for i in transactions.indices {
            if case .check = transactions[i].kind { transactions[i].retransmits = false }
        }
        lastConsent = now
        nextConsent = now + consentSpacing()
        emit(.connected(selectedPair!))
    }
}
