// HMAC-SHA1 (RFC 2104) over libcrypto's SHA-1, for STUN's MESSAGE-INTEGRITY (RFC 5389 §15.4).
//
// Why not OpenSSL's HMAC_* calls: they are deprecated in OpenSSL 3 and the EVP_MAC replacement
// needs parameter arrays; HMAC is two hashes, and the EVP digest calls are stable in every
// version Debian ships. Incremental (several `update`s) because the integrity of a received
// message is computed over its header with the length field patched, without copying it.

import CDTLSShims

/// A 20-byte SHA-1 HMAC, held inline.
public struct STUNDigest: Hashable, Sendable {
    public static let size = 20
    var a: UInt64
    var b: UInt64
    var c: UInt32

    init(_ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == Self.size, "an HMAC-SHA1 digest is 20 bytes")
        a = bytes.stunU64(0)
        b = bytes.stunU64(8)
        c = bytes.stunU32(16)
    }

    func write(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) {
        buffer.stunPut64(a, at: offset)
        buffer.stunPut64(b, at: offset + 8)
        buffer.stunPut32(c, at: offset + 16)
    }
}

/// A running HMAC-SHA1 over one key.
struct HMACSHA1: ~Copyable {
    private static let blockSize = 64
    private let inner: UnsafeMutableRawPointer
    private var outerPad = [UInt8](repeating: 0x5C, count: HMACSHA1.blockSize)

    init(key: [UInt8]) {
        guard let ctx = rtcs_crypto_sha1_new() else {
            fatalError("libcrypto: no SHA-1 context: \(String(cString: rtcs_openssl_load_error()))")
        }
        inner = ctx
        var k = key
        if k.count > Self.blockSize { k = Self.sha1(k) }
        var innerPad = [UInt8](repeating: 0x36, count: Self.blockSize)
        for i in 0..<k.count {
            innerPad[i] ^= k[i]
            outerPad[i] ^= k[i]
        }
        Self.check(rtcs_crypto_sha1_init(inner), "SHA-1 init")
        innerPad.withUnsafeBytes { update($0) }
    }

    deinit { rtcs_crypto_sha1_free(inner) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        Self.check(rtcs_crypto_sha1_update(inner, bytes.baseAddress, bytes.count), "SHA-1 update")
    }

    consuming func finish() -> STUNDigest {
        var innerHash = [UInt8](repeating: 0, count: STUNDigest.size)
        innerHash.withUnsafeMutableBytes { out in
            Self.check(rtcs_crypto_sha1_final(inner, out.baseAddress!.assumingMemoryBound(to: UInt8.self)), "SHA-1 final")
        }
        let outer = Self.sha1(outerPad + innerHash)
        return outer.withUnsafeBytes { STUNDigest($0) }
    }

    private static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: STUNDigest.size)
        bytes.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { o in
                check(rtcs_crypto_sha1(input.baseAddress, input.count, o.baseAddress!.assumingMemoryBound(to: UInt8.self)),
                      "SHA-1")
            }
        }
        return out
    }

    /// libcrypto fails these only when out of memory, missing or misbuilt; nothing to recover.
    private static func check(_ status: Int32, _ call: String) {
        if status != 1 { fatalError("libcrypto: \(call) failed") }
    }
}
