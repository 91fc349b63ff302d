import CSRTP
import RTCShareCore

// SRTP and SRTCP protection through libsrtp2 (RFC 3711, RFC 7714), in place in the caller's
// packet buffer.
//
// Invariants:
// - `srtp_init` runs exactly once per process, before the first session is created (a
//   Swift `static let` is initialised once, thread-safely).
// - A sender context protects any SSRC (`ssrc_any_outbound`); a receiver context unprotects
//   any SSRC (`ssrc_any_inbound`). libsrtp clones a stream per SSRC on first use and
//   allocates for it with malloc: that memory is budgeted by measurement, not pooled.
// - A context is not thread-safe: it is `~Copyable` and every operation is `mutating`, so
//   one owner uses it at a time.
// - Protect needs `SRTPProfile.requiredTailroom` bytes of room after the packet (libsrtp2's
//   documented worst case); unprotect only shortens the packet.
// - Untrusted input never traps: lengths and the RTP header layout are checked here before
//   libsrtp sees the bytes, and every libsrtp failure becomes `RTPError.srtp` with its status.

/// Which way a context works.
public enum SRTPDirection: Sendable {
    /// Protects what we send.
    case sender
    /// Unprotects what the peer sends.
    case receiver
}

/// One libsrtp2 session: one master key, one direction.
public struct SRTPContext: ~Copyable {
    /// Replay window (packets) for received SRTP: generous, since video arrives in bursts and
    /// can be reordered. libsrtp accepts 64..<32768.
    public static let defaultReplayWindow = 1024

    private static let libraryStatus: Int32 = Int32(bitPattern: srtp_init().rawValue)

    private var session: OpaquePointer
    public let profile: SRTPProfile
    public let direction: SRTPDirection

    /// The version of the libsrtp2 in use, for `--build-info`.
    public static var libraryVersion: String { String(cString: srtp_get_version_string()) }

    /// Creates a session for `key`'s profile.
    public init(key: SRTPMasterKey, direction: SRTPDirection,
                replayWindow: Int = SRTPContext.defaultReplayWindow) throws(RTPError) {
        guard Self.libraryStatus == 0 else { throw .srtp("srtp_init failed", status: Self.libraryStatus) }
        guard (64..<0x8000).contains(replayWindow) else {
            throw .srtp("replay window \(replayWindow) is outside 64..<32768", status: Self.badParam)
        }
        var created: OpaquePointer? = nil
        let status = Self.withPolicy(key: key, direction: direction, replayWindow: replayWindow) { policy in
            srtp_create(&created, &policy)
        }
        guard status == 0, let created else { throw .srtp("cannot create session", status: status) }
        self.session = created
        self.profile = key.profile
        self.direction = direction
    }

    deinit { srtp_dealloc(session) }

    /// Replaces the key of every stream (a re-key), keeping sequence and rollover state.
    /// The new key must be of the same profile.
    public mutating func update(key: SRTPMasterKey, replayWindow: Int = SRTPContext.defaultReplayWindow) throws(RTPError) {
        guard key.profile == profile else {
            throw .invalidKey("re-key from \(profile.name) to \(key.profile.name)")
        }
        let session = self.session
        let status = Self.withPolicy(key: key, direction: direction, replayWindow: replayWindow) { policy in
            srtp_update(session, &policy)
        }
        guard status == 0 else { throw .srtp("cannot update key", status: status) }
    }

    /// Fills a libsrtp policy for `key` and runs `body` with it; the key bytes are only
    /// borrowed for the call (libsrtp copies what it derives).
    private static func withPolicy(key: SRTPMasterKey, direction: SRTPDirection, replayWindow: Int,
                                   _ body: (inout srtp_policy_t) -> srtp_err_status_t) -> Int32 {
        var policy = srtp_policy_t()
        switch key.profile {
        case .aesCM128HmacSHA1_80:
            // The `..._aes_cm_128_hmac_sha1_80` setter is a macro for the default.
            srtp_crypto_policy_set_rtp_default(&policy.rtp)
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        }
        policy.ssrc.type = direction == .sender ? ssrc_any_outbound : ssrc_any_inbound
        policy.window_size = UInt(replayWindow)
        // Retransmissions (NACK → RTX, or a resend of the same packet) may protect the same
        // sequence number again with the same payload; without this libsrtp refuses them as
        // replays. Only the sender needs it; a receiver must keep rejecting replays.
        policy.allow_repeat_tx = direction == .sender ? 1 : 0
        var material = key.material
        return material.withUnsafeMutableBufferPointer { bytes in
            policy.key = bytes.baseAddress
            let status = body(&policy)
            policy.key = nil
            return Int32(bitPattern: status.rawValue)
        }
    }

    // MARK: RTP

    /// Protects the RTP packet in `buffer[0..<length]` in place; returns the SRTP length
    /// (`length + profile.rtpTrailerBytes`). `buffer` must have `SRTPProfile.requiredTailroom`
    /// bytes of room after the packet.
    public mutating func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(RTPError) -> Int {
        try checkProtect(buffer, length: length, rtcp: false)
        try Self.checkRTPHeader(buffer, length: length, trailer: 0)
        return try run(buffer, length: length, "protect RTP") { s, p, n in srtp_protect(s, p, n) }
    }

    /// Unprotects the SRTP packet in `buffer[0..<length]` in place; returns the RTP length.
    /// Authentication failures, replays and packets too short are errors, never traps.
    public mutating func unprotectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(RTPError) -> Int {
        try checkUnprotect(buffer, length: length)
        try Self.checkRTPHeader(buffer, length: length, trailer: profile.rtpTrailerBytes)
        return try run(buffer, length: length, "unprotect RTP") { s, p, n in srtp_unprotect(s, p, n) }
    }

    // MARK: RTCP

    /// Protects the compound RTCP packet in `buffer[0..<length]` in place (encrypted, E flag
    /// set); returns the SRTCP length (`length + profile.rtcpTrailerBytes`).
    public mutating func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(RTPError) -> Int {
        try checkProtect(buffer, length: length, rtcp: true)
        guard length >= 8 else { throw .srtp("RTCP packet of \(length) bytes is too short", status: Self.badParam) }
        return try run(buffer, length: length, "protect RTCP") { s, p, n in srtp_protect_rtcp(s, p, n) }
    }

    /// Unprotects the SRTCP packet in `buffer[0..<length]` in place; returns the RTCP length.
    public mutating func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(RTPError) -> Int {
        try checkUnprotect(buffer, length: length)
        let minimum = 8 + profile.rtcpTrailerBytes
        guard length >= minimum else {
            throw .srtp("SRTCP packet of \(length) bytes is too short (at least \(minimum))", status: Self.badParam)
        }
        return try run(buffer, length: length, "unprotect RTCP") { s, p, n in srtp_unprotect_rtcp(s, p, n) }
    }

    // MARK: checks

    private static let badParam = Int32(bitPattern: srtp_err_status_bad_param.rawValue)

    private func checkProtect(_ buffer: UnsafeMutableRawBufferPointer, length: Int, rtcp: Bool) throws(RTPError) {
        guard direction == .sender else { throw .srtp("protect on a receiver context", status: Self.badParam) }
        guard length >= 0, length <= Int(Int32.max) - SRTPProfile.requiredTailroom,
              buffer.count - length >= SRTPProfile.requiredTailroom, buffer.baseAddress != nil else {
            throw .bufferTooSmall(needed: max(0, length) + SRTPProfile.requiredTailroom, available: buffer.count)
        }
    }

    private func checkUnprotect(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(RTPError) {
        guard direction == .receiver else { throw .srtp("unprotect on a sender context", status: Self.badParam) }
        guard length >= 0, length <= buffer.count, length <= Int(Int32.max), buffer.baseAddress != nil else {
            throw .srtp("packet length \(length) outside its \(buffer.count)-byte buffer", status: Self.badParam)
        }
    }

    /// Checks the RTP header (RFC 3550 §5.1, §5.3.1): version 2, CSRCs and the extension
    /// within the packet, with `trailer` bytes of tag after the payload.
    private static func checkRTPHeader(_ buffer: UnsafeMutableRawBufferPointer, length: Int,
                                       trailer: Int) throws(RTPError) {
        guard length >= 12 + trailer else {
            throw .srtp("RTP packet of \(length) bytes is too short (at least \(12 + trailer))", status: badParam)
        }
        let r = RTPReader(UnsafeRawBufferPointer(buffer))
        let b0 = try r.u8(at: 0)
        guard b0 >> 6 == 2 else { throw .srtp("RTP version \(b0 >> 6)", status: badParam) }
        var header = 12 + 4 * Int(b0 & 0x0F)
        if b0 & 0x10 != 0 {
            guard length >= header + 4 + trailer else {
                throw .srtp("RTP extension header past the packet end", status: badParam)
            }
            header += 4 + 4 * Int(try r.u16(at: header + 2))
        }
        guard header + trailer <= length else {
            throw .srtp("RTP header of \(header) bytes in a \(length)-byte packet", status: badParam)
        }
    }

    private mutating func run(_ buffer: UnsafeMutableRawBufferPointer, length: Int, _ what: String,
                              _ call: (OpaquePointer, UnsafeMutableRawPointer, UnsafeMutablePointer<Int32>) -> srtp_err_status_t)
        throws(RTPError) -> Int
    {
        var n = Int32(length)
        let status = call(session, buffer.baseAddress!, &n)
        guard status == srtp_err_status_ok else {
            let code = Int32(bitPattern: status.rawValue)
            throw .srtp("\(what): \(Self.meaning(code))", status: code)
        }
        return Int(n)
    }

    /// A few words for the statuses seen on the packet path.
    static func meaning(_ status: Int32) -> String {
        switch status {
        case 2: "bad parameter"
        case 7: "authentication failed"
        case 8: "cipher failed"
        case 9: "replayed packet"
        case 10: "packet older than the replay window"
        case 13: "no stream for this SSRC"
        case 15: "key expired"
        case 21: "parse error"
        case 25: "bad MKI"
        default: "libsrtp error"
        }
    }
}
