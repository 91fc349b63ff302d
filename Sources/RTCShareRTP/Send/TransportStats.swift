/// What a network output knows of its path to the receiver.
public struct TransportStats: Sendable, Equatable {
    public var packetsSent = 0
    public var bytesSent: UInt64 = 0
    /// Packets the socket would not take (send buffer full) and that were dropped.
    public var sendDrops = 0
    /// Round-trip time from the last receiver report (LSR/DLSR), if any came.
    public var roundTripMicroseconds: Int64?
    /// Fraction lost in the last receiver report, 0...1, and the cumulative count.
    public var fractionLost: Double?
    public var cumulativeLost: Int = 0
    /// Interarrival jitter of the last receiver report, in microseconds.
    public var jitterMicroseconds: Int64?
    public var receiverReports = 0
    public var nacksReceived = 0
    public var packetsRetransmitted = 0
    /// Bytes of those resends on the wire (RTX or plain).
    public var bytesRetransmitted: UInt64 = 0
    /// NACKed packets not resent because they had been resent less than a round trip before.
    public var retransmitsSuppressed = 0
    /// NACKed packets not resent: no longer held, or over the retransmission budget.
    public var retransmitsMissed = 0
    public var retransmitsOverBudget = 0
    /// Times feedback came back after an outage (a silence longer than the peer's regular
    /// spacing, `FeedbackReturnWatch`); each asked for a keyframe at once.
    public var feedbackReturns = 0
    /// Of those over the budget, packets owed (each once), and owed ones resent later.
    public var retransmitsDeferred = 0
    public var deferredRetransmitted = 0
    /// Second copies sent of a resend asked for again (the first resend was lost).
    public var resendsDoubled = 0
    /// NACKed numbers not sent yet (still in the pacer's queue, or not made): ignored. A
    /// receiver that infers a loss from transport-wide gaps asks so now and then.
    public var nacksAheadOfSent = 0
    public var pliReceived = 0
    public var firReceived = 0
    /// The last REMB bitrate, in kbit/s.
    public var rembKbps: Int?
    /// Incoming packets dropped: malformed RTCP, failed SRTCP authentication, not RTCP at all.
    public var malformedReceived = 0
    public var unauthenticatedReceived = 0
    /// Video frames handed in before the connection was up (no keys yet), not sent.
    public var framesDroppedConnecting = 0
    /// Video frames handed in while the path was silent (an outage), not sent (all but one a
    /// second, `RTPSender.silentProbeInterval`).
    public var framesHeldWhileSilent = 0
    /// Transport-wide feedback packets read, and the delay-based estimate they gave (kbit/s).
    public var transportFeedbackReceived = 0
    public var delayBasedKbps: Int?
    /// Video packets that waited in the pacer, and those gone from the history before their turn.
    public var packetsPaced = 0
    public var pacedPacketsExpired = 0
    /// Queued video packets sent ahead of the pacer's rate because the packet history needed
    /// their room — bytes, or the index slot of many small packets (a burst larger than what it
    /// holds beside those queued before it). The pacer's queue has no other bound on room.
    public var pacedSentEarly = 0

    public init() {}
}
