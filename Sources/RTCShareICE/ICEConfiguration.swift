// Timing and limits of the ICE agent, with the values the RFCs recommend:
//
// - Ta, the pacing of new STUN transactions: 50 ms (RFC 8445 §14.2's default).
// - RTO of a connectivity check: max(500 ms, Ta × (Waiting + In-Progress pairs)) (RFC 8445
//   §14.3), doubled after each transmission, at most Rc = 7 transmissions, then a final wait of
//   Rm = 16 × the first RTO (RFC 5389 §7.2.1): a check that gets no answer fails after 39.5 s
//   at the minimum RTO. Server-reflexive gathering uses the same schedule, cut short by
//   `gatheringTimeout` (1 s: transmissions at 0 and 500 ms): an offer waits for gathering, and
//   a STUN server that has not answered by then is given up on (host candidates still work,
//   and the peer learns our mapped address as peer-reflexive from our checks anyway).
// - The agent fails when no pair was nominated within `connectTimeout` (10 s), long before an
//   unanswered check gives up on its own.
// - Consent (RFC 7675 §5.1): a binding request every 5 s × uniform(0.8, 1.2), each a new
//   transaction, retransmitted every `minimumRTO` until the next one starts; consent is lost
//   30 s after the last success response.

import RTCShareCore

/// How the agent paces and gives up.
public struct ICEConfiguration: Sendable, Equatable {
    /// The role to start in (the WHIP offerer against an ICE-lite server is controlling).
    public var role: ICERole = .controlling
    /// Ta.
    public var pacing = MediaDuration.milliseconds(50)
    /// The least initial RTO of a check or gathering request.
    public var minimumRTO = MediaDuration.milliseconds(500)
    /// Rc: transmissions of one request, the first included.
    public var maxTransmissions = 7
    /// Rm: the wait after the last transmission, in initial RTOs.
    public var finalWaitFactor: Int64 = 16
    /// No nomination this long after `start` fails the agent.
    public var connectTimeout = MediaDuration.seconds(10)
    /// Mean spacing of consent requests (randomised ×0.8...1.2).
    public var consentInterval = MediaDuration.seconds(5)
    /// No consent response this long means consent is lost.
    public var consentTimeout = MediaDuration.seconds(30)
    /// STUN servers to learn server-reflexive candidates from (numeric; nothing is resolved),
    /// each asked from every host base of its family.
    public var stunServers: [ICEAddress] = []
    /// How long gathering may take from its start; what is unanswered by then is given up.
    public var gatheringTimeout = MediaDuration.seconds(1)
    /// Candidate pairs kept at most (RFC 8445 §6.1.2.5 suggests 100).
    public var maxPairs = 100
    /// SOFTWARE on what the agent sends, at most 128 bytes; nil sends none.
    public var software: String?

    public init() {}
}

/// Controlling or controlled (RFC 8445 §6.1.1).
public enum ICERole: Sendable, Equatable {
    case controlling
    case controlled
}
