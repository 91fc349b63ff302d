// A certificate fingerprint as SDP carries it (RFC 8122 §5):
//
//     fingerprint-attribute = "fingerprint" ":" hash-func SP fingerprint
//     fingerprint           = 2UHEX *(":" 2UHEX)
//
// We write lowercase hash names (as browsers do) and uppercase hex; we read hash names and hex in
// either case, since peers differ. The digest length must be the hash's: a truncated or
// overlong fingerprint is refused, never padded or cut.
//
// Invariant: `digest.count == hashFunction.digestBytes`.

/// A hash of a DTLS certificate, the trust anchor a WebRTC peer is checked against.
public struct DTLSFingerprint: Sendable, Equatable, CustomStringConvertible {
    /// The hash functions accepted (those in use by WebRTC stacks).
    public enum HashFunction: String, Sendable, CaseIterable {
        case sha1 = "sha-1"
        case sha256 = "sha-256"
        case sha384 = "sha-384"
        case sha512 = "sha-512"

        /// Bytes of digest.
        public var digestBytes: Int {
            switch self {
            case .sha1: 20
            case .sha256: 32
            case .sha384: 48
            case .sha512: 64
            }
        }
    }

    public let hashFunction: HashFunction
    public let digest: [UInt8]

    /// A fingerprint from its digest; the length must fit the hash.
    public init(hashFunction: HashFunction, digest: [UInt8]) throws(DTLSError) {
        guard digest.count == hashFunction.digestBytes else {
            throw .malformedFingerprint("\(hashFunction.rawValue) needs \(hashFunction.digestBytes) bytes, got \(digest.count)")
        }
        self.hashFunction = hashFunction
        self.digest = digest
    }

    /// Parses the value of an `a=fingerprint:` attribute, e.g. `sha-256 AB:CD:...`.
    public init(attributeValue: some StringProtocol) throws(DTLSError) {
        let text = Array(attributeValue.utf8)
        guard let space = text.firstIndex(of: UInt8(ascii: " ")) else {
            throw .malformedFingerprint("no space between hash function and digest")
        }
        let name = String(decoding: text[..<space], as: UTF8.self).lowercased()
        guard let hash = HashFunction(rawValue: name) else {
            throw .malformedFingerprint("unsupported hash function \"\(name.prefix(16))\"")
        }
        let hex = text[(space + 1)...]
        // Exactly "XX" then ":XX" per byte.
        guard hex.count == hash.digestBytes * 3 - 1 else {
            throw .malformedFingerprint("\(hash.rawValue) digest text must be \(hash.digestBytes * 3 - 1) characters, got \(hex.count)")
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(hash.digestBytes)
        var i = hex.startIndex
        while i < hex.endIndex {
            if i > hex.startIndex {
                guard hex[i] == UInt8(ascii: ":") else { throw .malformedFingerprint("expected ':' between bytes") }
                i += 1
            }
            guard let high = Self.nibble(hex[i]), let low = Self.nibble(hex[i + 1]) else {
                throw .malformedFingerprint("not a hex byte")
            }
            digest.append(high << 4 | low)
            i += 2
        }
        try self.init(hashFunction: hash, digest: digest)
    }

    /// The attribute value: hash name, a space, uppercase hex bytes joined by colons.
    public var attributeValue: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = Array(hashFunction.rawValue.utf8)
        out.append(UInt8(ascii: " "))
        for (n, byte) in digest.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ":")) }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The whole SDP line body: `a=fingerprint:sha-256 AB:CD:...`.
    public var sdpAttribute: String { "a=fingerprint:" + attributeValue }

    public var description: String { attributeValue }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
