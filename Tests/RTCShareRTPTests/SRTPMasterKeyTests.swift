import Testing
@testable import RTCShareRTP

/// Keying material: strict base64 both ways, lengths per profile, and no key bytes in any
/// text a log could hold.
@Suite struct SRTPMasterKeyTests {
    @Test func base64MatchesRFC4648Section10() {
        let cases = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
                     "foobar": "Zm9vYmFy"]
        for (plain, encoded) in cases {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
        let all = (0...255).map { UInt8($0) }
        #expect(Base64.decode(Base64.encode(all)) == all)
    }

    @Test func base64DecodingIsStrict() {
        for bad in ["Zg=", "Zg", "Zh==", "Zm9=", "Zm9v YmFy", "Zm9v\n", "Zg==Zg==", "Z===", "====", "@@@@", "Zm9v-_8=", "Zm=v"] {
            #expect(Base64.decode(bad) == nil, "\(bad) accepted")
        }
    }

    @Test func sdesInlineKeyDecodesToThirtyBytes() throws {
        // RFC 4568 §9 example key.
        let key = try SRTPMasterKey(profile: .aesCM128HmacSHA1_80, base64: "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz")
        #expect(key.masterKey.count == 16 && key.masterSalt.count == 14)
        #expect(key.base64 == "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz")
    }

    @Test func wrongLengthOrBadTextIsOneClearError() {
        #expect(throws: RTPError.invalidKey("AEAD_AES_128_GCM needs 28 bytes of key and salt, got 30")) {
            try SRTPMasterKey(profile: .aeadAES128GCM, base64: "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz")
        }
        #expect(throws: RTPError.invalidKey("not valid base64 (RFC 4648, padded, no whitespace)")) {
            try SRTPMasterKey(profile: .aesCM128HmacSHA1_80, base64: "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGV")
        }
    }

    @Test func keysNeverAppearInDescriptions() {
        let key = SRTPMasterKey.generate(profile: .aesCM128HmacSHA1_80)
        var dumped = ""
        dump(key, to: &dumped)
        let hexText = key.masterKey.map { String($0, radix: 16) }.joined()
        for text in [key.description, String(reflecting: key), "\(key)", dumped, String(describing: [key])] {
            #expect(!text.contains(key.base64))
            #expect(!text.contains(hexText))
            #expect(!text.contains("\(Array(key.masterKey))"))
        }
    }

    @Test func generatedKeysDiffer() {
        let a = SRTPMasterKey.generate(profile: .aeadAES128GCM)
        let b = SRTPMasterKey.generate(profile: .aeadAES128GCM)
        #expect(a != b)
        #expect(a.base64.utf8.count == 40)
    }
}
