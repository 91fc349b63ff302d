// A candidate pair of the checklist (RFC 8445 §6.1.2) and a STUN request transaction.
//
// Pair priority (§6.1.2.3), with G the controlling agent's candidate priority and D the
// controlled agent's: 2^32 × min(G, D) + 2 × max(G, D) + (G > D ? 1 : 0). It depends on the
// role, so a role switch recomputes it.

import RTCShareCore

/// §6.1.2.6's states.
enum PairState: Equatable {
    case frozen
    case waiting
    case inProgress
    case succeeded
    case failed
}

struct CandidatePair {
    var local: Int
    var remote: Int
    var foundation: String
    var priority: UInt64
    var state: PairState
    /// The live check's transaction, while one is in flight.
    var transaction: STUNTransactionID?
    /// Controlled: the peer sent USE-CANDIDATE on this pair before our check of it succeeded.
    var nominateOnSuccess = false

    static func priority(controlling g: UInt32, controlled d: UInt32) -> UInt64 {
        (UInt64(min(g, d)) << 32) + 2 * UInt64(max(g, d)) + (g > d ? 1 : 0)
    }
}

/// One outstanding request of ours.
struct Transaction {
    enum Kind: Equatable {
        /// A connectivity check; `useCandidate` when it nominates.
        case check(pair: Int, useCandidate: Bool)
        /// A consent freshness request on the selected pair.
        case consent(pair: Int)
        /// A binding request to the STUN server, from this base.
        case gather(base: ICEAddress)
    }

    var id: STUNTransactionID
    var kind: Kind
    /// The role the request claimed (for a 487 answer, §7.2.5.1).
    var role: ICERole
    var outgoing: Outgoing
    var transmissions = 1
    /// When the first transmission went (an answer to it alone gives a round trip: Karn).
    var firstSentAt = MediaTime(microseconds: 0)
    var rto: MediaDuration
    var initialRTO = MediaDuration(microseconds: 0)
    var retransmits: Bool
    var nextRetransmit: MediaTime
    var expires: MediaTime
}
