import Testing
import RTCShareDTLS

/// `a=fingerprint` values (RFC 8122 §5): what we write and what we accept.
@Suite struct DTLSFingerprintTests {
    @Test func certificateFingerprintIsUppercaseColonSeparatedSHA256() throws {
        let certificate = try DTLSCertificate()
        let fingerprint = certificate.fingerprint()
        let text = fingerprint.attributeValue
        #expect(fingerprint.digest.count == 32)
        #expect(text.hasPrefix("sha-256 "))
        let hex = text.dropFirst("sha-256 ".count).split(separator: ":", omittingEmptySubsequences: false)
        #expect(hex.count == 32)
        #expect(hex.allSatisfy { $0.count == 2 && $0.allSatisfy { "0123456789ABCDEF".contains($0) } })
        #expect(fingerprint.sdpAttribute == "a=fingerprint:" + text)
        #expect(try DTLSFingerprint(attributeValue: text) == fingerprint)
    }

    @Test func twoCertificatesDiffer() throws {
        #expect(try DTLSCertificate().fingerprint() != DTLSCertificate().fingerprint())
    }

    @Test(arguments: DTLSFingerprint.HashFunction.allCases)
    func everyHashRoundTrips(hash: DTLSFingerprint.HashFunction) throws {
        let fingerprint = try DTLSCertificate().fingerprint(hash)
        #expect(fingerprint.digest.count == hash.digestBytes)
        #expect(try DTLSFingerprint(attributeValue: fingerprint.attributeValue) == fingerprint)
    }

    @Test func byteTable() throws {
        // "sha-1" SP then 20 bytes, as RFC 8122 §5's example writes them.
        let text = "sha-1 4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AB"
        let f = try DTLSFingerprint(attributeValue: text)
        #expect(f.hashFunction == .sha1)
        #expect(f.digest == [0x4A, 0xAD, 0xB9, 0xB1, 0x3F, 0x82, 0x18, 0x3B, 0x54, 0x02,
                             0x12, 0xDF, 0x3E, 0x5D, 0x49, 0x6B, 0x19, 0xE5, 0x7C, 0xAB])
        #expect(f.attributeValue == text)
    }

    @Test func lowercaseHexAndUppercaseHashNameAreAccepted() throws {
        let f = try DTLSFingerprint(attributeValue: "SHA-1 4a:ad:b9:b1:3f:82:18:3b:54:02:12:df:3e:5d:49:6b:19:e5:7c:ab")
        #expect(f.attributeValue == "sha-1 4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AB")
    }

    @Test(arguments: [
        "",                                                                        // nothing
        "sha-256",                                                                 // no digest
        "md5 4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B",                     // unsupported hash
        "sha-1 4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C",          // 19 bytes
        "sha-1 4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AB:CD",    // 21 bytes
        "sha-1 4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AG",       // not hex
        "sha-1 4A-AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AB",       // wrong separator
        "sha-1  4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AB",      // two spaces
        "sha-1 4AAD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AB:",       // colon misplaced
        "sha-1 4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AB ",      // trailing space
    ])
    func malformedValuesAreRefused(text: String) {
        #expect(throws: DTLSError.self) { try DTLSFingerprint(attributeValue: text) }
    }

    @Test func digestOfTheWrongLengthIsRefused() {
        #expect(throws: DTLSError.malformedFingerprint("sha-256 needs 32 bytes, got 20")) {
            try DTLSFingerprint(hashFunction: .sha256, digest: [UInt8](repeating: 1, count: 20))
        }
    }
}
