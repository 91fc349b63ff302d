// TURN's long-term credentials (RFC 8489 §9.2): a username and password the server knows, and
// the realm and nonce it hands out in a 401. MESSAGE-INTEGRITY is HMAC-SHA1 keyed with
// MD5(username ":" realm ":" password); a server that offers SHA-256 in PASSWORD-ALGORITHMS
// (RFC 8489 §9.2.4) gets SHA-256 of the same string as the key and a PASSWORD-ALGORITHM
// attribute. The password is used as given (UTF-8): SASLprep (RFC 4013) leaves the ASCII
// passwords TURN services hand out unchanged. Neither the password nor the key is ever printed.

import CDTLSShims

/// A TURN server's username and password.
public struct TURNCredentials: Sendable, Equatable, CustomStringConvertible {
    public var username: String
    public var password: String

    /// Longest username or password taken (RFC 8489 §14.3 limits USERNAME to 513 bytes).
    public static let maximumBytes = 509

    public init(username: String, password: String) throws(ICEError) {
        guard !username.isEmpty, username.utf8.count <= Self.maximumBytes else {
            throw .invalidCredentials("a TURN username must be 1...\(Self.maximumBytes) bytes")
        }
        guard password.utf8.count <= Self.maximumBytes else {
            throw .invalidCredentials("a TURN password must be at most \(Self.maximumBytes) bytes")
        }
        self.username = username
        self.password = password
    }

    public var description: String { "username \(username), password (\(password.utf8.count) chars)" }

    /// The password algorithms of RFC 8489 §18.5.
    public enum Algorithm: UInt16, Sendable {
        case md5 = 1
        case sha256 = 2
    }

    /// The key for `realm` (RFC 8489 §9.2.2).
    public func key(realm: String, algorithm: Algorithm) -> [UInt8] {
        let text = Array("\(username):\(realm):\(password)".utf8)
        var out = [UInt8](repeating: 0, count: 32)
        let n = text.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { o in
                rtcs_crypto_digest(algorithm == .md5 ? Int32(RTCS_DIGEST_MD5) : Int32(RTCS_DIGEST_SHA256),
                                   input.baseAddress, input.count, o.baseAddress!.assumingMemoryBound(to: UInt8.self), 32)
            }
        }
        // libcrypto fails a digest only when it cannot be loaded or is misbuilt: nothing to recover.
        guard n == (algorithm == .md5 ? 16 : 32) else {
            fatalError("libcrypto: digest failed: \(String(cString: rtcs_openssl_load_error()))")
        }
        return Array(out[0..<n])
    }
}
