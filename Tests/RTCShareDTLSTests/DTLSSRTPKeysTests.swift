import Testing
@testable import RTCShareDTLS
import RTCShareRTP

/// The RFC 5764 §4.2 split of the exporter output, by byte position.
@Suite struct DTLSSRTPKeysTests {
    @Test func aesCMSplitsKeyKeySaltSalt() throws {
        let exported = (0..<60).map { UInt8($0) }  // 16 + 16 + 14 + 14
        let client = try DTLSSRTPKeys(exported: exported, profile: .aesCM128HmacSHA1_80, role: .client)
        let server = try DTLSSRTPKeys(exported: exported, profile: .aesCM128HmacSHA1_80, role: .server)
        let clientWrite = Array(0..<16) + Array(32..<46)   // client key, client salt
        let serverWrite = Array(16..<32) + Array(46..<60)  // server key, server salt
        // Bound before #expect: Swift 6.0's macro cannot hold a `try` inside its comparison.
        let clientKey = try SRTPMasterKey(profile: .aesCM128HmacSHA1_80, bytes: clientWrite.map { UInt8($0) })
        let serverKey = try SRTPMasterKey(profile: .aesCM128HmacSHA1_80, bytes: serverWrite.map { UInt8($0) })
        #expect(client.local == clientKey)
        #expect(client.remote == serverKey)
        #expect(server.local == client.remote)
        #expect(server.remote == client.local)
    }

    @Test func gcmSplitsWithTwelveByteSalts() throws {
        let exported = (0..<56).map { UInt8($0) }  // 16 + 16 + 12 + 12
        let client = try DTLSSRTPKeys(exported: exported, profile: .aeadAES128GCM, role: .client)
        #expect(Array(client.local.masterKey) == (0..<16).map { UInt8($0) })
        #expect(Array(client.local.masterSalt) == (32..<44).map { UInt8($0) })
        #expect(Array(client.remote.masterKey) == (16..<32).map { UInt8($0) })
        #expect(Array(client.remote.masterSalt) == (44..<56).map { UInt8($0) })
    }

    @Test func wrongLengthIsRefused() {
        #expect(throws: DTLSError.keyExport) {
            try DTLSSRTPKeys(exported: [UInt8](repeating: 0, count: 59), profile: .aesCM128HmacSHA1_80, role: .client)
        }
    }

    @Test func descriptionHidesKeys() throws {
        let keys = try DTLSSRTPKeys(exported: [UInt8](repeating: 7, count: 56), profile: .aeadAES128GCM, role: .client)
        #expect(keys.description == "DTLSSRTPKeys(AEAD_AES_128_GCM, redacted)")
    }
}
