import Testing
import RTCShareDTLS
import RTCShareRTP

/// Two real OpenSSL endpoints handshaking over an in-memory link.
@Suite struct DTLSTransportTests {
    @Test(arguments: [DTLSRole.client, .server], SRTPProfile.allCases)
    func handshakeYieldsCrossMatchingKeysThatWork(firstRole: DTLSRole, profile: SRTPProfile) throws {
        let ids = Identities()
        // The side made first (and so driven first by `pump`) takes either role.
        var a = try ids.transport(firstRole, profiles: [profile])
        var b = try ids.transport(firstRole == .client ? .server : .client, profiles: [profile])
        pump(&a, &b)
        #expect(a.state == .connected)
        #expect(b.state == .connected)
        let aKeys = try #require(keys(in: events(&a)))
        let bKeys = try #require(keys(in: events(&b)))
        #expect(aKeys.profile == profile)
        #expect(aKeys.local == bKeys.remote)
        #expect(aKeys.remote == bKeys.local)
        #expect(aKeys.local != aKeys.remote)

        let packet = rtpPacket(seq: 7, payload: Array(repeating: 0x5A, count: 100))
        let ab = try srtpRoundTrip(packet, key: aKeys.local, peerKey: bKeys.remote)
        #expect(ab.wire.count == packet.count + profile.rtpTrailerBytes)
        #expect(ab.wire[12..<packet.count] != packet[12...])
        #expect(ab.out == packet)
        #expect(try srtpRoundTrip(packet, key: bKeys.local, peerKey: aKeys.remote).out == packet)
        // A key from the wrong side does not authenticate.
        #expect(throws: RTPError.self) { try srtpRoundTrip(packet, key: aKeys.local, peerKey: aKeys.remote) }
    }

    @Test func theServersPreferenceDecidesTheProfile() throws {
        let ids = Identities()
        var client = try ids.transport(.client)
        var server = try ids.transport(.server, profiles: [.aesCM128HmacSHA1_80, .aeadAES128GCM])
        pump(&client, &server)
        // The server picks by its own order: here it prefers AES-CM.
        #expect(keys(in: events(&client))?.profile == .aesCM128HmacSHA1_80)
        var client2 = try ids.transport(.client, profiles: [.aesCM128HmacSHA1_80, .aeadAES128GCM])
        var server2 = try ids.transport(.server)
        pump(&client2, &server2)
        #expect(keys(in: events(&server2))?.profile == .aeadAES128GCM)
    }

    @Test func noCommonProfileFailsBothSides() throws {
        let ids = Identities()
        var client = try ids.transport(.client, profiles: [.aeadAES128GCM])
        var server = try ids.transport(.server, profiles: [.aesCM128HmacSHA1_80])
        pump(&client, &server)
        #expect(client.state == .failed(.noSRTPProfile))
        #expect(server.state == .failed(.noSRTPProfile))
    }

    @Test func clientRefusesAServerWithTheWrongFingerprint() throws {
        let ids = Identities()
        let stranger = try DTLSCertificate()
        var config = ids.configuration(.client)
        config.remoteFingerprint = stranger.fingerprint()
        var client = try DTLSTransport(certificate: ids.client, configuration: config)
        var server = try ids.transport(.server)
        pump(&client, &server)
        #expect(client.state == .failed(.fingerprintMismatch))
        #expect(events(&client) == [.failed(.fingerprintMismatch)])
        // The client's bad_certificate alert (42) reaches the server.
        #expect(server.state == .failed(.peerAlert(42)))
    }

    @Test func serverRefusesAClientWithTheWrongFingerprint() throws {
        let ids = Identities()
        var config = ids.configuration(.server)
        config.remoteFingerprint = try DTLSFingerprint(hashFunction: .sha256, digest: [UInt8](repeating: 0xAB, count: 32))
        var server = try DTLSTransport(certificate: ids.server, configuration: config)
        var client = try ids.transport(.client)
        pump(&client, &server)
        #expect(server.state == .failed(.fingerprintMismatch))
        guard case .failed = client.state else {
            Issue.record("client should fail, is \(client.state)")
            return
        }
    }

    @Test func otherHashFunctionsWork() throws {
        let ids = Identities()
        var config = ids.configuration(.client)
        config.remoteFingerprint = ids.server.fingerprint(.sha512)
        var client = try DTLSTransport(certificate: ids.client, configuration: config)
        var config2 = ids.configuration(.server)
        config2.remoteFingerprint = ids.client.fingerprint(.sha1)
        var server = try DTLSTransport(certificate: ids.server, configuration: config2)
        pump(&client, &server)
        #expect(client.state == .connected && server.state == .connected)
    }

    @Test func everyDatagramFitsASmallMTU() throws {
        let ids = Identities()
        let mtu = 300  // the certificate message must be fragmented
        var client = try ids.transport(.client, mtu: mtu)
        var server = try ids.transport(.server, mtu: mtu)
        var largest = 0
        for _ in 0..<32 {
            let moved = deliver(from: &client, to: &server, lose: { largest = max(largest, $0.count); return false })
                + deliver(from: &server, to: &client, lose: { largest = max(largest, $0.count); return false })
            if moved == 0 { break }
        }
        #expect(client.state == .connected && server.state == .connected)
        #expect(largest <= mtu)
        #expect(largest > 200)
    }

    @Test func lostFirstFlightIsResentOnTimeout() async throws {
        let ids = Identities()
        var client = try ids.transport(.client, timeout: .milliseconds(100))
        var server = try ids.transport(.server, timeout: .milliseconds(100))
        #expect(deliver(from: &client, to: &server, lose: { _ in true }) == 1)  // the ClientHello is lost
        #expect(server.pollTransmit() == nil)
        client.handleTimeout()  // not due yet: nothing happens
        #expect(client.pollTransmit() == nil)
        let timeout = client.nextTimeout
        let wait = try #require(timeout)
        #expect(wait > .zero && wait <= .milliseconds(100))
        // A fixed wait on purpose: DTLS's retransmission timer runs on the real clock, and its
        // expiry is what is under test.
        try await Task.sleep(for: wait + .milliseconds(5))
        client.handleTimeout()
        #expect(client.statistics.retransmissions == 1)
        pump(&client, &server)
        #expect(client.state == .connected && server.state == .connected)
        #expect(server.nextTimeout == nil)
        #expect(client.nextTimeout == nil)
    }

    @Test func garbageIsCountedAndIgnored() throws {
        let ids = Identities()
        var client = try ids.transport(.client)
        var server = try ids.transport(.server)
        let garbage: [[UInt8]] = [
            [],                                                          // empty
            [0x00, 0x01, 0x02],                                          // STUN-like, too short
            Array(repeating: 0x16, count: 40),                           // handshake type, bad version
            [22, 254, 253, 0, 0, 0, 0, 0, 0, 0, 0, 0, 50, 1, 2],        // length past the end
            [22, 254, 253, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 9, 0xFF],      // a whole record, then junk
            Array(repeating: 0x17, count: DTLSTransport.maximumDatagramBytes + 1),  // over the cap
        ]
        for g in garbage { server.handle(datagram: g) }
        pump(&client, &server)
        for g in garbage { client.handle(datagram: g) }
        #expect(client.state == .connected && server.state == .connected)
        #expect(server.statistics.datagramsDropped == UInt64(garbage.count))
        #expect(client.statistics.datagramsDropped == UInt64(garbage.count))

        // Well-framed records OpenSSL cannot authenticate are its to drop, silently.
        var rng = SystemRandomNumberGenerator()
        for n in 0..<50 {
            var record: [UInt8] = [23, 254, 253, 0, 1, 0, 0, 0, 0, 0, UInt8(n), 0, 40]
            record += (0..<40).map { _ in UInt8.random(in: 0...255, using: &rng) }
            client.handle(datagram: record)
            server.handle(datagram: record)
        }
        #expect(client.state == .connected && server.state == .connected)
        #expect(events(&client).count == 1 && events(&server).count == 1)  // just `connected`
    }

    @Test func closeNotifyReachesThePeer() throws {
        let ids = Identities()
        var client = try ids.transport(.client)
        var server = try ids.transport(.server)
        pump(&client, &server)
        _ = events(&client)
        _ = events(&server)
        client.close()
        #expect(client.state == .closed)
        #expect(deliver(from: &client, to: &server) == 1)
        #expect(server.state == .closed)
        #expect(events(&server) == [.closed])
        #expect(events(&client).isEmpty)
        // Both are inert now.
        let dropped = server.statistics.datagramsDropped
        server.handle(datagram: [22, 254, 253, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(server.statistics.datagramsDropped == dropped + 1)
        server.handleTimeout()
        #expect(server.nextTimeout == nil)
        #expect(server.pollTransmit() == nil)
    }

    @Test func afterFailureEverythingIsInert() throws {
        let ids = Identities()
        var config = ids.configuration(.client)
        config.remoteFingerprint = try DTLSCertificate().fingerprint()
        var client = try DTLSTransport(certificate: ids.client, configuration: config)
        var server = try ids.transport(.server)
        // Record what the server sends so it can be replayed at the failed client.
        var replay: [[UInt8]] = []
        _ = deliver(from: &client, to: &server)
        while let d = server.pollTransmit() { replay.append(d); client.handle(datagram: d) }
        #expect(client.state == .failed(.fingerprintMismatch))
        _ = events(&client)
        let before = client.statistics
        for d in replay { client.handle(datagram: d) }
        client.handleTimeout()
        client.close()
        #expect(client.state == .failed(.fingerprintMismatch))
        #expect(client.nextTimeout == nil)
        #expect(events(&client).isEmpty)
        #expect(client.statistics.datagramsDropped == before.datagramsDropped + UInt64(replay.count))
    }

    @Test func badConfigurationIsRefused() throws {
        let ids = Identities()
        #expect(throws: DTLSError.self) { _ = try ids.transport(.client, mtu: 100) }
        #expect(throws: DTLSError.self) { _ = try ids.transport(.client, profiles: []) }
        #expect(throws: DTLSError.self) { _ = try ids.transport(.client, timeout: .zero) }
    }
}
