// Consent freshness (RFC 7675 §5.1) on the selected pair: a Binding request every
// `consentInterval` × uniform(0.8, 1.2), each a new transaction. Unanswered, a request is
// retransmitted every `minimumRTO` (500 ms) until the next one starts, which ends its
// retransmissions (a late answer still counts). One lost datagram costs half a second, not a
// whole interval, so a few losses in a row cannot eat the 30 s; and while the path is down the
// requests are what notices its return within half a second (the send core holds video then,
// so nothing else makes the peer answer). No back-off, unlike a check: the cost is two small
// requests a second during an outage, on a pair the peer already agreed to. Any authenticated
// success response from the pair's remote address renews consent (as does a check response on
// that pair). `consentTimeout` after the last renewal, consent is lost: the owner must stop
// sending.
//
// Bounds: one request retransmitting at a time, at most `consentInterval` × 1.2 / `minimumRTO`
// transmissions each (12 by default); a superseded request lives `finalWaitFactor` × its RTO
// after its last transmission, so about two are ever held.

import RTCShareCore

extension ICEAgent {
    mutating func runConsent(at now: MediaTime) {
        guard state == .connected, let p = selectedPairIndex else { return }
        if now - lastConsent >= configuration.consentTimeout {
            state = .consentLost
            transactions.removeAll()
            outgoing.removeAll()
            emit(.consentLost)
            return
        }
        guard now >= nextConsent else { return }
        nextConsent = now + consentSpacing()
        // The new request supersedes the previous one's retransmissions.
        for i in transactions.indices where transactions[i].retransmits {
            if case .consent = transactions[i].kind {
                transactions[i].retransmits = false
                transactions[i].expires = now + transactions[i].initialRTO * configuration.finalWaitFactor
            }
        }
        let (id, o) = checkRequest(p, useCandidate: false)
        begin(Transaction(id: id, kind: .consent(pair: p), role: role, outgoing: o, rto: configuration.minimumRTO,
                          retransmits: true, nextRetransmit: now, expires: now), at: now)
    }

    /// A success answer renewed consent at `now`.
    mutating func consentRenewed(at now: MediaTime) {
        lastConsent = now
        lastConsentAnswer = now
        counters.consentAnswers += 1
    }

    /// `consentInterval` × uniform(0.8, 1.2).
    mutating func consentSpacing() -> MediaDuration {
        let mean = configuration.consentInterval.microseconds
        let spread = mean / 5
        return MediaDuration(microseconds: mean - spread + Int64.random(in: 0...(2 * spread), using: &random))
    }
}
