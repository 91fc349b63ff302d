// Everything that can go wrong in DTLS-SRTP, as one typed error for the module. The OpenSSL
// statuses are mapped to it in one place (`DTLSTransport.apply`); messages carry OpenSSL's
// reason text at most, never key material.

/// A DTLS-SRTP failure.
public enum DTLSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An `a=fingerprint` value that cannot be used (RFC 8122 §5); says why.
    case malformedFingerprint(String)
    /// OpenSSL could not make the key or the self-signed certificate.
    case certificateGeneration
    /// OpenSSL refused the endpoint's configuration; says what was asked.
    case setup(String)
    /// The peer's certificate does not have the fingerprint the SDP announced.
    case fingerprintMismatch
    /// The peer ended the handshake with a fatal alert (RFC 5246 §7.2 description code).
    case peerAlert(UInt8)
    /// The peer stopped answering: OpenSSL gave up retransmitting.
    case timedOut
    /// Any other handshake failure, with OpenSSL's reason.
    case handshakeFailed(String)
    /// The handshake completed without a common SRTP protection profile (no use_srtp).
    case noSRTPProfile
    /// Exporting the keying material failed after the handshake.
    case keyExport

    public var description: String {
        switch self {
        case .malformedFingerprint(let why): "malformed fingerprint: \(why)"
        case .certificateGeneration: "cannot generate the DTLS certificate"
        case .setup(let what): "cannot set up DTLS: \(what)"
        case .fingerprintMismatch: "the peer's certificate does not match the SDP fingerprint"
        case .peerAlert(let code): "the peer aborted the DTLS handshake (alert \(code))"
        case .timedOut: "the DTLS handshake timed out"
        case .handshakeFailed(let why): "DTLS handshake failed: \(why)"
        case .noSRTPProfile: "the peer agreed on no SRTP protection profile"
        case .keyExport: "cannot export the SRTP keying material"
        }
    }
}
