import RTCShareRTP

// What a caller decides before a DTLS association starts, from the SDP exchange (RFC 8842
// a=setup, RFC 8122 a=fingerprint) and the path (MTU).

/// Which side of the DTLS handshake we take.
public enum DTLSRole: Sendable, Equatable {
    /// We send the ClientHello: our SDP says `a=setup:active` (a WHIP client gets this when the
    /// server answers `a=setup:passive`).
    case client
    /// We wait for the ClientHello: our SDP says `a=setup:passive`.
    case server
}

/// Settings of one DTLS-SRTP association.
public struct DTLSConfiguration: Sendable {
    public var role: DTLSRole
    /// The peer's fingerprint from its SDP; its certificate must hash to it.
    public var remoteFingerprint: DTLSFingerprint
    /// Largest datagram written, in bytes of UDP payload. 1200 fits any path WebRTC uses
    /// (IPv6 minimum 1280 less headers and TURN framing). 256 ... `DTLSTransport.maximumDatagramBytes`.
    public var mtu: Int
    /// SRTP profiles offered in use_srtp, preferred first. As a server OpenSSL picks the first of
    /// these the client offers. Chrome and Firefox offer AEAD_AES_128_GCM ahead of
    /// AES_CM_128_HMAC_SHA1_80, so GCM first is what a browser pair negotiates too.
    public var srtpProfiles: [SRTPProfile]
    /// First retransmission timeout; it doubles on each expiry up to 60 s (RFC 6347 §4.2.4.1
    /// recommends 1 s).
    public var initialRetransmitTimeout: Duration

    public init(role: DTLSRole, remoteFingerprint: DTLSFingerprint, mtu: Int = 1200,
                srtpProfiles: [SRTPProfile] = [.aeadAES128GCM, .aesCM128HmacSHA1_80],
                initialRetransmitTimeout: Duration = .seconds(1)) {
        self.role = role
        self.remoteFingerprint = remoteFingerprint
        self.mtu = mtu
        self.srtpProfiles = srtpProfiles
        self.initialRetransmitTimeout = initialRetransmitTimeout
    }
}

extension SRTPProfile {
    /// OpenSSL's use_srtp name for the profile.
    var openSSLName: String {
        switch self {
        case .aesCM128HmacSHA1_80: "SRTP_AES128_CM_SHA1_80"
        case .aeadAES128GCM: "SRTP_AEAD_AES_128_GCM"
        }
    }
}
