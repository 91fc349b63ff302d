// The SRTP protection profiles rtcshare speaks, with the sizes a caller plans buffers and
// MTU by. Names are those of SDES `a=crypto` (RFC 4568 §6.2, RFC 7714 §14.1); DTLS-SRTP
// profile ids are those of RFC 5764 §4.1.2 and RFC 7714 §14.2.

/// An SRTP protection profile.
public enum SRTPProfile: Sendable, CaseIterable, CustomStringConvertible {
    /// AES-128 counter mode with an 80-bit HMAC-SHA1 tag (RFC 3711): the profile every SRTP
    /// peer supports.
    case aesCM128HmacSHA1_80
    /// AES-128-GCM with a 16-byte tag (RFC 7714): cheaper per packet where AES-NI helps.
    case aeadAES128GCM

    /// The SDES crypto-suite name.
    public var name: String {
        switch self {
        case .aesCM128HmacSHA1_80: "AES_CM_128_HMAC_SHA1_80"
        case .aeadAES128GCM: "AEAD_AES_128_GCM"
        }
    }

    public var description: String { name }

    /// The profile an SDES crypto-suite name stands for.
    public init?(name: String) {
        switch name {
        case "AES_CM_128_HMAC_SHA1_80": self = .aesCM128HmacSHA1_80
        case "AEAD_AES_128_GCM": self = .aeadAES128GCM
        default: return nil
        }
    }

    /// The DTLS-SRTP protection profile id.
    public var dtlsProfileID: UInt16 {
        switch self {
        case .aesCM128HmacSHA1_80: 0x0001
        case .aeadAES128GCM: 0x0007
        }
    }

    public var masterKeyBytes: Int { 16 }

    public var masterSaltBytes: Int {
        switch self {
        case .aesCM128HmacSHA1_80: 14
        case .aeadAES128GCM: 12
        }
    }

    /// Key then salt, as `a=crypto` and `--srtp-key` carry them: 30 or 28 bytes.
    public var keyingMaterialBytes: Int { masterKeyBytes + masterSaltBytes }

    /// Bytes of authentication tag after an SRTP packet.
    public var tagBytes: Int {
        switch self {
        case .aesCM128HmacSHA1_80: 10
        case .aeadAES128GCM: 16
        }
    }

    /// Bytes protect adds to an RTP packet: the tag (no MKI is used). Budget this in the MTU.
    public var rtpTrailerBytes: Int { tagBytes }

    /// Bytes protect adds to an RTCP packet: the E flag + 31-bit SRTCP index word and the tag.
    public var rtcpTrailerBytes: Int { 4 + tagBytes }

    /// Room a caller's buffer must have after the packet for an in-place protect, whatever the
    /// profile: libsrtp2 documents that `srtp_protect` may write up to `SRTP_MAX_TRAILER_LEN`
    /// (144) bytes past the packet and `srtp_protect_rtcp` 4 more, so `SRTPContext` insists on
    /// that much even though only `rtpTrailerBytes`/`rtcpTrailerBytes` end up in the packet.
    public static let requiredTailroom = 148
}
