// Consent freshness (RFC 7675 §5.1) on the selected pair: a Binding request every
// `consentInterval` × uniform(0.8, 1.2), each a new transaction with no retransmission (the
// next request comes soon anyway); any authenticated success response from the pair's remote
// address renews consent (as does a check response on that pair). `consentTimeout` after the
// last renewal, consent is lost: the owner must stop sending.

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
        let (id, o) = checkRequest(p, useCandidate: false)
        begin(Transaction(id: id, kind: .consent(pair: p), role: role, outgoing: o, rto: configuration.minimumRTO,
                          retransmits: false, nextRetransmit: now, expires: now), at: now)
    }

    /// `consentInterval` × uniform(0.8, 1.2).
    mutating func consentSpacing() -> MediaDuration {
        let mean = configuration.consentInterval.microseconds
        let spread = mean / 5
        return MediaDuration(microseconds: mean - spread + Int64.random(in: 0...(2 * spread), using: &random))
    }
}
