/// A certificate fingerprint as SDP carries it (`a=fingerprint:sha-256 AB:CD:…`, RFC 8122 §5):
/// a hash function name and the digest.
///
/// Parsing is strict because the DTLS handshake trusts this value: a known hash function, a
/// digest of exactly its length, upper- or lower-case hex pairs separated by colons.
public struct DTLSFingerprint: Sendable, Equatable, CustomStringConvertible {
    /// Lowercase hash function name from RFC 8122's registry (`sha-256`).
    public var hashFunction: String
    public var digest: [UInt8]

    /// Digest lengths of the hash functions accepted (RFC 8122 §5 lists these; md2/md5 are
    /// refused as broken).
    static let digestLengths = ["sha-1": 20, "sha-224": 28, "sha-256": 32, "sha-384": 48, "sha-512": 64]

    public init(sha256 digest: [UInt8]) {
        precondition(digest.count == 32, "a SHA-256 digest is 32 bytes")
        hashFunction = "sha-256"
        self.digest = digest
    }

    /// Reads the value of an `a=fingerprint` attribute (`sha-256 AB:CD:…`); nil if it is not a
    /// known hash function with a well-formed digest of the right length.
    public init?(sdpValue: String) {
        let parts = sdpValue.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else { return nil }
        let name = parts[0].lowercased()
        guard let length = Self.digestLengths[name] else { return nil }
        let pairs = parts[1].split(separator: ":", omittingEmptySubsequences: false)
        guard pairs.count == length else { return nil }
        var digest: [UInt8] = []
        digest.reserveCapacity(length)
        for pair in pairs {
            guard pair.utf8.count == 2, let byte = UInt8(pair, radix: 16) else { return nil }
            digest.append(byte)
        }
        hashFunction = name
        self.digest = digest
    }

    /// `sha-256 AB:CD:…`, upper-case hex as RFC 8122 writes it.
    public var sdpValue: String {
        let hex: [Character] = Array("0123456789ABCDEF")
        return hashFunction + " " + digest.map { String([hex[Int($0 >> 4)], hex[Int($0 & 15)]]) }.joined(separator: ":")
    }

    public var description: String { sdpValue }
}
