// Counters of one DTLS association, for logs and tests. Nothing here is fatal: dropping is how
// a datagram transport copes with bad or excess input.

/// What a `DTLSTransport` has seen and done.
public struct DTLSStatistics: Sendable, Equatable {
    /// Datagrams handed to OpenSSL.
    public var datagramsReceived: UInt64 = 0
    /// Datagrams refused before OpenSSL: not whole DTLS records, over the size cap, or arriving
    /// after the association ended.
    public var datagramsDropped: UInt64 = 0
    /// Datagrams drained by `pollTransmit`.
    public var datagramsSent: UInt64 = 0
    /// Datagrams lost because the output queue was full (the owner did not drain it).
    public var transmitOverflows: UInt64 = 0
    /// Flights resent on timer expiry.
    public var retransmissions: UInt64 = 0
}
