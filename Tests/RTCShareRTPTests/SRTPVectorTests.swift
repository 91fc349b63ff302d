import Testing
@testable import RTCShareRTP

/// Known answers: RFC 3711 Appendix B.2/B.3 and RFC 7714 §16.1.1/§17.1.1 reproduced by the
/// OpenSSL reference (`Reference`), then `SRTPContext` (libsrtp2) checked byte for byte
/// against that reference from a master key.
@Suite struct SRTPVectorTests {
    // RFC 3711 B.3.
    static let masterKey = hexBytes("E1F97A0D3E018BE0D64FA32C06DE4139")
    static let masterSalt = hexBytes("0EC675AD498AFEEBB6960B3AABE6")

    @Test func appendixB2KeystreamIsReproduced() {
        let key = hexBytes("2B7E151628AED2A6ABF7158809CF4F3C")
        // Session salt F0F1…FD, SSRC 0, index 0: the IV is the salt shifted left 16 bits.
        let iv = hexBytes("F0F1F2F3F4F5F6F7F8F9FAFBFCFD0000")
        #expect(Reference.keystream(key: key, iv: iv, count: 48) == hexBytes("""
            E03EAD0935C95E80E166B16DD92B4EB4 D23513162B02D0F72A43A2FE4A5F97AB 41E95B3BB0A2E8DD477901E4FCA894C0
            """))
        // The end of the 65282-block segment: counters …FEFF, …FF00, …FF01.
        let tail = hexBytes("F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF")
        #expect(Reference.keystream(key: key, iv: tail, count: 48) == hexBytes("""
            EC8CDF7398607CB0F2D21675EA9EA1E4 362B7C3C6773516318A077D7FC5073AE 6A2CC3787889374FBEB4C81B17BA6C44
            """))
    }

    @Test func appendixB3KeyDerivationIsReproduced() {
        let keys = Reference.sessionKeys(profile: .aesCM128HmacSHA1_80, masterKey: Self.masterKey,
                                         masterSalt: Self.masterSalt, rtcp: false)
        #expect(keys.cipher == hexBytes("C61E7A93744F39EE10734AFE3FF7A087"))
        #expect(keys.salt == hexBytes("30CBBC08863D8C85D49DB34A9AE1"))
        #expect(keys.auth == hexBytes("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4"))
    }

    private var cmKey: SRTPMasterKey {
        try! SRTPMasterKey(profile: .aesCM128HmacSHA1_80, bytes: Self.masterKey + Self.masterSalt)
    }

    @Test func aesCMProtectIsHeaderThenKeystreamXorThenHmacTag() throws {
        var sender = try SRTPContext(key: cmKey, direction: .sender)
        let keys = Reference.sessionKeys(profile: .aesCM128HmacSHA1_80, masterKey: Self.masterKey,
                                         masterSalt: Self.masterSalt, rtcp: false)
        for (i, length) in [0, 1, 15, 16, 17, 160, 1200].enumerated() {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ i) }
            let packet = plainRTPPacket(seq: 0x1234 &+ UInt16(i), payload: payload)
            let protected = try srtpInPlace(packet) { b, n throws(RTPError) in try sender.protectRTP(b, length: n) }
            #expect(protected.count == packet.count + 10)
            #expect(protected == Reference.protectRTPCM(packet, keys: keys, roc: 0))
        }
    }

    @Test func aesCMProtectRTCPIsEncryptedWithEFlagIndexAndTag() throws {
        var sender = try SRTPContext(key: cmKey, direction: .sender)
        let keys = Reference.sessionKeys(profile: .aesCM128HmacSHA1_80, masterKey: Self.masterKey,
                                         masterSalt: Self.masterSalt, rtcp: true)
        let report = try RTCPSenderReport(info: RTCPSenderInfo(ssrc: 0xCAFE_BABE, ntpTime: NTPTime(rawValue: 0xE94D_7A80_8000_0000),
                                                               rtpTimestamp: 1, packetCount: 2, octetCount: 3)).serialized()
        for _ in 0..<3 {
            let protected = try srtpInPlace(report) { b, n throws(RTPError) in try sender.protectRTCP(b, length: n) }
            #expect(protected.count == report.count + 14)
            let word = protected[report.count..<report.count + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            #expect(word & 0x8000_0000 != 0, "E flag: the compound is encrypted")
            #expect(protected == Reference.protectRTCPCM(report, keys: keys, index: word & 0x7FFF_FFFF))
        }
    }

    // RFC 7714 §16.1.1 / §17.1.1: session key and salt given directly.
    static let gcmKey = hexBytes("000102030405060708090a0b0c0d0e0f")
    static let gcmSalt = hexBytes("517569642070726f2071756f")
    static let gcmRTP = hexBytes("""
        8040f17b 8041f8d3 5501a0b2 47616c6c 69612065 7374206f 6d6e6973 20646976
        69736120 696e2070 61727465 73207472 6573
        """)
    static let gcmRTCP = hexBytes("""
        81c8000d 4d617273 4e545031 4e545032 52545020 0000042a 0000e930 4c756e61
        deadbeef deadbeef deadbeef deadbeef deadbeef
        """)

    @Test func rfc7714Section16RTPVectorIsReproduced() {
        #expect(Reference.protectRTPGCM(Self.gcmRTP, key: Self.gcmKey, salt: Self.gcmSalt, roc: 0) == hexBytes("""
            8040f17b 8041f8d3 5501a0b2 f24de3a3 fb34de6c acba861c 9d7e4bca be633bd5 0d294e6f 42a5f47a
            51c7d19b 36de3adf 8833899d 7f27beb1 6a9152cf 765ee439 0cce
            """))
    }

    @Test func rfc7714Section17RTCPVectorIsReproduced() {
        #expect(Reference.protectRTCPGCM(Self.gcmRTCP, key: Self.gcmKey, salt: Self.gcmSalt, index: 0x5d4) == hexBytes("""
            81c8000d 4d617273 63e94885 dcdab67c a727d766 2f6b7e99 7ff5c0f7 6c06f32d c676a5f1 730d6fda
            4ce09b46 86303ded 0bb9275b c84aa458 96cf4d2f c5abf872 45d9eade 800005d4
            """))
    }

    @Test func gcmProtectMatchesRFC7714ComputationFromDerivedKeys() throws {
        // libsrtp takes a master key and salt and derives the session keys (RFC 7714 §11), so
        // the §16 session material cannot be fed to it directly: use it as master material.
        let master = try SRTPMasterKey(profile: .aeadAES128GCM, bytes: Self.gcmKey + Self.gcmSalt)
        var sender = try SRTPContext(key: master, direction: .sender)
        let rtp = Reference.sessionKeys(profile: .aeadAES128GCM, masterKey: Self.gcmKey, masterSalt: Self.gcmSalt, rtcp: false)
        let protected = try srtpInPlace(Self.gcmRTP) { b, n throws(RTPError) in try sender.protectRTP(b, length: n) }
        #expect(protected == Reference.protectRTPGCM(Self.gcmRTP, key: rtp.cipher, salt: rtp.salt, roc: 0))

        let rtcp = Reference.sessionKeys(profile: .aeadAES128GCM, masterKey: Self.gcmKey, masterSalt: Self.gcmSalt, rtcp: true)
        let srtcp = try srtpInPlace(Self.gcmRTCP) { b, n throws(RTPError) in try sender.protectRTCP(b, length: n) }
        #expect(srtcp.count == Self.gcmRTCP.count + 20)
        let word = srtcp.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        #expect(word & 0x8000_0000 != 0)
        #expect(srtcp == Reference.protectRTCPGCM(Self.gcmRTCP, key: rtcp.cipher, salt: rtcp.salt, index: word & 0x7FFF_FFFF))
    }
}
