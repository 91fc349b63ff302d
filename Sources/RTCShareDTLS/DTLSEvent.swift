// What a DTLS transport tells its owner, drained with `DTLSTransport.pollEvent()`. At most one
// of `failed` and `closed` ever follows `connected`; after either, nothing more comes.

/// A change the owner of a `DTLSTransport` acts on.
public enum DTLSEvent: Sendable, Equatable {
    /// The handshake completed and SRTP keys are ready for the SRTP contexts.
    case connected(DTLSSRTPKeys)
    /// The association failed; the transport is inert from now on.
    case failed(DTLSError)
    /// The peer sent close_notify; the transport is inert from now on.
    case closed
}
