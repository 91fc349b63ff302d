// SRTP master keying material (RFC 3711 §8.2): a master key and a master salt, as one run of
// bytes (key then salt) the way SDES `a=crypto ... inline:` (RFC 4568 §6.1) and
// `--srtp-key` carry it in base64.
//
// Invariants: the bytes are always exactly `profile.keyingMaterialBytes` long; they never
// appear in `description`, `debugDescription`, `dump` or an error message.

/// Master key + salt for one profile. Key bytes are never printed.
public struct SRTPMasterKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    public let profile: SRTPProfile
    /// Key then salt, `profile.keyingMaterialBytes` long.
    let material: [UInt8]

    /// Keying material from raw bytes (key then salt).
    public init(profile: SRTPProfile, bytes: [UInt8]) throws(RTPError) {
        guard bytes.count == profile.keyingMaterialBytes else {
            throw .invalidKey("\(profile.name) needs \(profile.keyingMaterialBytes) bytes of key and salt, got \(bytes.count)")
        }
        self.profile = profile
        self.material = bytes
    }

    /// Keying material from its base64 text (RFC 4648 §4, padded, no whitespace).
    public init(profile: SRTPProfile, base64: some StringProtocol) throws(RTPError) {
        guard let bytes = Base64.decode(base64) else {
            throw .invalidKey("not valid base64 (RFC 4648, padded, no whitespace)")
        }
        try self.init(profile: profile, bytes: bytes)
    }

    /// Fresh random keying material from `generator` (cryptographically secure for real use).
    public static func generate(profile: SRTPProfile, using generator: inout some RandomNumberGenerator) -> SRTPMasterKey {
        var bytes = [UInt8](repeating: 0, count: profile.keyingMaterialBytes)
        var i = 0
        while i < bytes.count {
            var word = generator.next()
            for _ in 0..<8 where i < bytes.count {
                bytes[i] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                i += 1
            }
        }
        return try! SRTPMasterKey(profile: profile, bytes: bytes)
    }

    /// Fresh keying material from the system's CSPRNG (getrandom(2) on Linux).
    public static func generate(profile: SRTPProfile) -> SRTPMasterKey {
        var system = SystemRandomNumberGenerator()
        return generate(profile: profile, using: &system)
    }

    /// The keying material as base64, for `a=crypto` and `--srtp-key`. Treat it as a secret.
    public var base64: String { Base64.encode(material) }

    /// The master key bytes.
    public var masterKey: ArraySlice<UInt8> { material[..<profile.masterKeyBytes] }

    /// The master salt bytes.
    public var masterSalt: ArraySlice<UInt8> { material[profile.masterKeyBytes...] }

    public var description: String { "SRTPMasterKey(\(profile.name), \(material.count) bytes, redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["profile": profile], displayStyle: .struct) }
}

/// Base64 with the standard alphabet (RFC 4648 §4). Decoding is strict: padding required,
/// length a multiple of 4, no whitespace, and the unused low bits of the last symbol zero, so
/// every accepted text is the one `encode` would write.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let b0 = UInt32(bytes[i])
            let b1 = n > 1 ? UInt32(bytes[i + 1]) : 0
            let b2 = n > 2 ? UInt32(bytes[i + 2]) : 0
            let v = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(v >> 18 & 63)])
            out.append(alphabet[Int(v >> 12 & 63)])
            out.append(n > 1 ? alphabet[Int(v >> 6 & 63)] : UInt8(ascii: "="))
            out.append(n > 2 ? alphabet[Int(v & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func value(_ c: UInt8) -> UInt32? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(c - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(c - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(c - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }

    /// The bytes of `text`, or nil if it is not canonical padded base64.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var i = 0
        while i < chars.count {
            let last = i + 4 == chars.count
            let pads = last ? (chars[i + 3] == UInt8(ascii: "=") ? (chars[i + 2] == UInt8(ascii: "=") ? 2 : 1) : 0) : 0
            var v: UInt32 = 0
            for k in 0..<4 {
                if k >= 4 - pads {
                    v <<= 6
                    continue
                }
                guard let d = value(chars[i + k]) else { return nil }
                v = v << 6 | d
            }
            out.append(UInt8(truncatingIfNeeded: v >> 16))
            if pads < 2 { out.append(UInt8(truncatingIfNeeded: v >> 8)) }
            if pads < 1 { out.append(UInt8(truncatingIfNeeded: v)) }
            // Canonical form: the bits the padding hides must be zero.
            if pads == 2, v & 0xFFFF != 0 { return nil }
            if pads == 1, v & 0xFF != 0 { return nil }
            i += 4
        }
        return out
    }
}
