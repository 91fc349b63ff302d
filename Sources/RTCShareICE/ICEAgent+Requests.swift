// Binding requests from the peer and responses to ours (RFC 8445 §7.2.5, §7.3; RFC 5389 §10.1.2
// for short-term authentication). Nothing a datagram holds can make the agent trap or fail:
// what does not authenticate is dropped and counted.

import RTCShareCore

extension ICEAgent {
    mutating func handleRequest(_ parsed: STUNParsedMessage, _ bytes: UnsafeRawBufferPointer,
                                from source: ICEAddress, local: ICEAddress?, at now: MediaTime) {
        counters.requestsReceived += 1
        let m = parsed.message
        // USERNAME is "<our ufrag>:<theirs>"; MESSAGE-INTEGRITY is keyed with our password.
        guard let username = m.username, username.hasPrefix(localCredentials.ufrag + ":"),
              parsed.verifyIntegrity(bytes, key: localCredentials.key) else {
            counters.unauthenticatedDropped += 1
            return
        }
        guard let base = local ?? locals.first(where: { $0.candidate.type == .host && $0.base.family == source.family })?.base,
              let l = locals.firstIndex(where: { $0.base == base && $0.isPaired }) else {
            counters.malformedDropped += 1  // no local candidate it could have reached
            return
        }
        if !parsed.unknownComprehensionRequired.isEmpty {
            respondError(420, "Unknown Attribute", to: m, from: base, destination: source,
                         unknown: Array(parsed.unknownComprehensionRequired.prefix(16)))
            return
        }
        // §7.3.1.1: role conflict; the larger tie-breaker keeps (or takes) controlling.
        if role == .controlling, let theirs = m.iceControlling {
            if tieBreaker >= theirs {
                counters.roleConflicts += 1
                respondError(487, "Role Conflict", to: m, from: base, destination: source)
                return
            }
            switchRole(to: .controlled)
        } else if role == .controlled, let theirs = m.iceControlled {
            if tieBreaker >= theirs {
                switchRole(to: .controlling)
            } else {
                counters.roleConflicts += 1
                respondError(487, "Role Conflict", to: m, from: base, destination: source)
                return
            }
        }

        var attributes: [STUNAttribute] = [.xorMappedAddress(source)]
        if let s = configuration.software { attributes.append(.software(s)) }
        outgoing.append(Outgoing(message: STUNMessage(type: .bindingSuccess, transactionID: m.transactionID,
                                                      attributes: attributes),
                                 key: .local, destination: source, source: base))
        counters.responsesSent += 1

        guard state == .checking || state == .connected else { return }
        // §7.3.1.3: a source we do not know is a peer-reflexive remote candidate.
        var r = remotes.firstIndex { $0.address == source }
        if r == nil {
            counters.peerReflexiveCandidates += 1
            let priority = m.priority ?? ICECandidate.priority(type: .peerReflexive, localPreference: 65_535)
            remotes.append(ICECandidate(foundation: "prflx\(counters.peerReflexiveCandidates)",
                                        priority: max(1, min(priority, 0x7FFF_FFFF)), address: source, type: .peerReflexive))
            r = remotes.count - 1
            addPair(local: l, remote: r!)
        }
        guard let p = pairs.firstIndex(where: { locals[$0.local].base == base && $0.remote == r! }) else { return }

        // §7.3.1.4: the triggered check.
        if state == .checking {
            switch pairs[p].state {
            case .succeeded:
                break
            case .inProgress:
                // Cancel: no more retransmissions, but a late response still counts.
                if let id = pairs[p].transaction, let t = transactions.firstIndex(where: { $0.id == id }) {
                    transactions[t].retransmits = false
                    transactions[t].expires = now + transactions[t].initialRTO * configuration.finalWaitFactor
                }
                pairs[p].transaction = nil
                trigger(p)
            case .waiting, .frozen, .failed:
                trigger(p)
            }
        }
        // §7.3.1.5: nomination by the controlling peer.
        if role == .controlled && m.useCandidate {
            if pairs[p].state == .succeeded { select(p, at: now) } else { pairs[p].nominateOnSuccess = true }
        }
    }

    mutating func respondError(_ code: Int, _ reason: String, to request: STUNMessage, from base: ICEAddress,
                               destination: ICEAddress, unknown: [UInt16] = []) {
        var attributes: [STUNAttribute] = [.errorCode(code: code, reason: reason)]
        if !unknown.isEmpty { attributes.append(.unknownAttributes(unknown)) }
        if let s = configuration.software { attributes.append(.software(s)) }
        outgoing.append(Outgoing(message: STUNMessage(type: .bindingError, transactionID: request.transactionID,
                                                      attributes: attributes),
                                 key: .local, destination: destination, source: base))
        counters.errorResponsesSent += 1
    }

    mutating func handleResponse(_ parsed: STUNParsedMessage, _ bytes: UnsafeRawBufferPointer,
                                 from source: ICEAddress, at now: MediaTime) {
        counters.responsesReceived += 1
        let m = parsed.message
        guard let t = transactions.firstIndex(where: { $0.id == m.transactionID }) else {
            counters.unknownTransactionDropped += 1
            return
        }
        let tx = transactions[t]
        if case .gather(let base) = tx.kind {
            handleGatheringResponse(parsed, transaction: t, base: base, from: source)
            return
        }
        guard let remote = remoteCredentials, parsed.verifyIntegrity(bytes, key: remote.key) else {
            counters.unauthenticatedDropped += 1
            return
        }
        guard parsed.unknownComprehensionRequired.isEmpty else {
            counters.malformedDropped += 1
            return
        }
        transactions.remove(at: t)
        // A success answer to a request sent once: the path's round trip (checks before media
        // flows measure it with no queue of ours on it).
        if m.type.messageClass == .successResponse, tx.transmissions == 1 {
            let sample = now - tx.firstSentAt
            leastRoundTrip = min(leastRoundTrip ?? sample, sample)
        }
        switch tx.kind {
        case .gather:
            break
        case .consent(let p):
            if m.type.messageClass == .successResponse, source == remotes[pairs[p].remote].address { consentRenewed(at: now) }
        case .check(let p, let useCandidate):
            let current = pairs[p].transaction == tx.id
            if m.type.messageClass == .errorResponse {
                if m.errorCode == 487 {
                    // §7.2.5.1: switch to the role opposite the one the request claimed, check again.
                    counters.roleConflicts += 1
                    switchRole(to: tx.role == .controlling ? .controlled : .controlling)
                    if state == .checking { trigger(p) }
                } else if current {
                    pairFailed(p)
                }
                return
            }
            // §7.2.5.2.1: the response must come from where the request went.
            guard source == tx.outgoing.destination else {
                if current { pairFailed(p) }
                return
            }
            checkSucceeded(p, useCandidate: useCandidate, mapped: m.xorMappedAddress, at: now)
        }
    }
}
