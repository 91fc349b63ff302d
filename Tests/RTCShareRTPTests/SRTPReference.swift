import COpenSSL
@testable import RTCShareRTP

// An independent SRTP/SRTCP computation (RFC 3711 §4.1.1, §4.2, §4.3; RFC 7714 §8, §9) over
// OpenSSL's AES and HMAC-SHA1, written from the RFC text, to check what libsrtp2 produces.
// Slow and allocating on purpose: clarity over speed.

/// Bytes from hex text; spaces and newlines are ignored.
func hexBytes(_ text: String) -> [UInt8] {
    let digits = text.utf8.filter { !$0.isASCIIWhitespace }
    precondition(digits.count % 2 == 0, "odd hex")
    return stride(from: 0, to: digits.count, by: 2).map { i in
        UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16)!
    }
}

extension UInt8 {
    fileprivate var isASCIIWhitespace: Bool { self == 0x20 || self == 0x0A || self == 0x09 || self == 0x0D }
}

/// Big-endian bytes of the low `count` bytes of `value`.
func beBytes(_ value: UInt64, count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * (count - 1 - $0))) }
}

enum Reference {
    /// AES-128 of one block.
    static func aesBlock(key: [UInt8], _ block: [UInt8]) -> [UInt8] {
        precondition(key.count == 16 && block.count == 16)
        let ctx = EVP_CIPHER_CTX_new()!
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: 32)
        var n: Int32 = 0
        precondition(EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nil, key, nil) == 1)
        EVP_CIPHER_CTX_set_padding(ctx, 0)
        precondition(EVP_EncryptUpdate(ctx, &out, &n, block, 16) == 1 && n == 16)
        return Array(out[0..<16])
    }

    /// AES in counter mode (RFC 3711 §4.1.1): block i is AES(key, iv + i), the counter a
    /// 128-bit big-endian integer.
    static func keystream(key: [UInt8], iv: [UInt8], count: Int) -> [UInt8] {
        var counter = iv
        var out: [UInt8] = []
        out.reserveCapacity(count + 16)
        while out.count < count {
            out += aesBlock(key: key, counter)
            var i = 15
            while i >= 0 {
                counter[i] &+= 1
                if counter[i] != 0 { break }
                i -= 1
            }
        }
        return Array(out[0..<count])
    }

    static func hmacSHA1(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 20)
        var n: UInt32 = 0
        _ = HMAC(EVP_sha1(), key, Int32(key.count), data, data.count, &out, &n)
        precondition(n == 20)
        return out
    }

    /// AES-128-GCM: ciphertext and 16-byte tag.
    static func gcm(key: [UInt8], iv: [UInt8], aad: [UInt8], plaintext: [UInt8]) -> (ciphertext: [UInt8], tag: [UInt8]) {
        let ctx = EVP_CIPHER_CTX_new()!
        defer { EVP_CIPHER_CTX_free(ctx) }
        var n: Int32 = 0
        precondition(EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), nil, nil, nil) == 1)
        precondition(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, Int32(iv.count), nil) == 1)
        precondition(EVP_EncryptInit_ex(ctx, nil, nil, key, iv) == 1)
        precondition(EVP_EncryptUpdate(ctx, nil, &n, aad, Int32(aad.count)) == 1)
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        precondition(EVP_EncryptUpdate(ctx, &out, &n, plaintext, Int32(plaintext.count)) == 1)
        var total = Int(n)
        out.withUnsafeMutableBufferPointer { p in
            precondition(EVP_EncryptFinal_ex(ctx, p.baseAddress! + total, &n) == 1)
        }
        total += Int(n)
        var tag = [UInt8](repeating: 0, count: 16)
        precondition(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, &tag) == 1)
        return (Array(out[0..<total]), tag)
    }

    /// The SRTP key derivation (RFC 3711 §4.3.1, key derivation rate 0): AES-CM under the
    /// master key with IV = ((label << 48) XOR master_salt) << 16. A 12-byte (AEAD) master salt
    /// is taken as its 14-byte zero-padded form (RFC 7714 §11).
    static func derive(masterKey: [UInt8], masterSalt: [UInt8], label: UInt8, count: Int) -> [UInt8] {
        var x = masterSalt + [UInt8](repeating: 0, count: 14 - masterSalt.count)
        x[7] ^= label
        return keystream(key: masterKey, iv: x + [0, 0], count: count)
    }

    struct SessionKeys {
        var cipher: [UInt8]
        var auth: [UInt8]
        var salt: [UInt8]
    }

    /// SRTP (labels 0, 1, 2) or SRTCP (3, 4, 5) session keys.
    static func sessionKeys(profile: SRTPProfile, masterKey: [UInt8], masterSalt: [UInt8], rtcp: Bool) -> SessionKeys {
        let base: UInt8 = rtcp ? 3 : 0
        let saltBytes = profile == .aesCM128HmacSHA1_80 ? 14 : 12
        return SessionKeys(cipher: derive(masterKey: masterKey, masterSalt: masterSalt, label: base, count: 16),
                           auth: derive(masterKey: masterKey, masterSalt: masterSalt, label: base + 1, count: 20),
                           salt: derive(masterKey: masterKey, masterSalt: masterSalt, label: base + 2, count: saltBytes))
    }

    /// RTP header length (fixed part, CSRCs, extension).
    static func rtpHeaderLength(_ p: [UInt8]) -> Int {
        var n = 12 + 4 * Int(p[0] & 0x0F)
        if p[0] & 0x10 != 0 { n += 4 + 4 * (Int(p[n + 2]) << 8 | Int(p[n + 3])) }
        return n
    }

    /// SRTP with AES_CM_128_HMAC_SHA1_80 (RFC 3711 §3.1, §4.1.1, §4.2) given session keys.
    static func protectRTPCM(_ packet: [UInt8], keys: SessionKeys, roc: UInt32) -> [UInt8] {
        let h = rtpHeaderLength(packet)
        let seq = UInt64(packet[2]) << 8 | UInt64(packet[3])
        let index = UInt64(roc) << 16 | seq
        var iv = keys.salt + [0, 0]
        for (i, b) in (packet[8..<12]).enumerated() { iv[4 + i] ^= b }  // SSRC
        for (i, b) in beBytes(index, count: 6).enumerated() { iv[8 + i] ^= b }
        let ks = keystream(key: keys.cipher, iv: iv, count: packet.count - h)
        let encrypted = Array(packet[0..<h]) + zip(packet[h...], ks).map { $0 ^ $1 }
        let tag = hmacSHA1(key: keys.auth, encrypted + beBytes(UInt64(roc), count: 4))
        return encrypted + tag[0..<10]
    }

    /// SRTCP with AES_CM_128_HMAC_SHA1_80 (RFC 3711 §3.4, §4.1.1): encrypted from octet 8,
    /// then E || index, then the tag over all of it.
    static func protectRTCPCM(_ packet: [UInt8], keys: SessionKeys, index: UInt32) -> [UInt8] {
        var iv = keys.salt + [0, 0]
        for (i, b) in (packet[4..<8]).enumerated() { iv[4 + i] ^= b }
        for (i, b) in beBytes(UInt64(index), count: 6).enumerated() { iv[8 + i] ^= b }
        let ks = keystream(key: keys.cipher, iv: iv, count: packet.count - 8)
        let body = Array(packet[0..<8]) + zip(packet[8...], ks).map { $0 ^ $1 }
        let trailer = body + beBytes(UInt64(0x8000_0000 | index), count: 4)
        return trailer + hmacSHA1(key: keys.auth, trailer)[0..<10]
    }

    /// SRTP with AEAD_AES_128_GCM (RFC 7714 §8): IV = (00 00 || SSRC || ROC || SEQ) XOR salt,
    /// AAD = the header; header || ciphertext || tag.
    static func protectRTPGCM(_ packet: [UInt8], key: [UInt8], salt: [UInt8], roc: UInt32) -> [UInt8] {
        let h = rtpHeaderLength(packet)
        let iv0: [UInt8] = [0, 0] + packet[8..<12] + beBytes(UInt64(roc), count: 4) + packet[2..<4]
        let iv = zip(iv0, salt).map { $0 ^ $1 }
        let (c, tag) = gcm(key: key, iv: iv, aad: Array(packet[0..<h]), plaintext: Array(packet[h...]))
        return Array(packet[0..<h]) + c + tag
    }

    /// SRTCP with AEAD_AES_128_GCM (RFC 7714 §9): IV = (00 00 || SSRC || 00 00 || index) XOR
    /// salt, AAD = the first 8 octets || E || index; then ciphertext || tag || E || index.
    static func protectRTCPGCM(_ packet: [UInt8], key: [UInt8], salt: [UInt8], index: UInt32) -> [UInt8] {
        let iv0: [UInt8] = [0, 0] + packet[4..<8] + [0, 0] + beBytes(UInt64(index), count: 4)
        let iv = zip(iv0, salt).map { $0 ^ $1 }
        let eIndex = beBytes(UInt64(0x8000_0000 | index), count: 4)
        let (c, tag) = gcm(key: key, iv: iv, aad: Array(packet[0..<8]) + eIndex, plaintext: Array(packet[8...]))
        return Array(packet[0..<8]) + c + tag + eIndex
    }
}

/// Runs an in-place SRTP operation on a copy of `bytes` in a buffer with the required tailroom.
func srtpInPlace(_ bytes: [UInt8], _ op: (UnsafeMutableRawBufferPointer, Int) throws(RTPError) -> Int) throws(RTPError) -> [UInt8] {
    var buffer = bytes + [UInt8](repeating: 0, count: SRTPProfile.requiredTailroom)
    let result = buffer.withUnsafeMutableBytes { raw in
        Result { () throws(RTPError) in try op(raw, bytes.count) }
    }
    let n = try result.get()
    return Array(buffer[0..<n])
}

/// A plain RTP packet: V=2, PT 96, the given sequence number, timestamp, SSRC, payload.
func plainRTPPacket(seq: UInt16, timestamp: UInt32 = 0x1234_5678, ssrc: UInt32 = 0xCAFE_BABE,
               payload: [UInt8]) -> [UInt8] {
    [0x80, 96] + beBytes(UInt64(seq), count: 2) + beBytes(UInt64(timestamp), count: 4)
        + beBytes(UInt64(ssrc), count: 4) + payload
}
