import Testing
import RTCShareCore
@testable import RTCShareICE

/// TURN's framing and URIs, read and written in place (RFC 8656 §11–§12, RFC 7064/7065).
struct TURNWireTests {
    let peer = try! ICEAddress(host: "198.51.100.7", port: 40_000)

    @Test func channelDataRoundTripsAndPadsOnStreamsOnly() {
        let payload: [UInt8] = [0x80, 1, 2, 3, 4]
        var buffer = [UInt8](repeating: 0xEE, count: 64)
        let udp = payload.withUnsafeBytes { p in
            buffer.withUnsafeMutableBytes { TURNWire.writeChannelData(p, channel: 0x4001, padded: false, into: $0) }
        }
        #expect(udp == 9)
        let stream = payload.withUnsafeBytes { p in
            buffer.withUnsafeMutableBytes { TURNWire.writeChannelData(p, channel: 0x4001, padded: true, into: $0) }
        }
        #expect(stream == 12)
        #expect(Array(buffer[0..<12]) == [0x40, 0x01, 0, 5, 0x80, 1, 2, 3, 4, 0, 0, 0])
        buffer.withUnsafeBytes { b in
            let read = TURNWire.readChannelData(UnsafeRawBufferPointer(rebasing: b[0..<12]))
            #expect(read?.channel == 0x4001 && read?.data == 4..<9)
            #expect(TURNWire.frameLength(UnsafeRawBufferPointer(rebasing: b[0..<4])) == 12)
            // A length that claims more than is there is refused.
            #expect(TURNWire.readChannelData(UnsafeRawBufferPointer(rebasing: b[0..<8])) == nil)
        }
    }

    @Test func sendIndicationCarriesThePeerAndTheData() throws {
        let payload = Array("hello relay".utf8)
        var buffer = [UInt8](repeating: 0, count: 128)
        var r = SplitMix64(seed: 7)
        let id = STUNTransactionID(using: &r)
        let n = try #require(payload.withUnsafeBytes { p in
            buffer.withUnsafeMutableBytes { TURNWire.writeSendIndication(p, to: peer, transactionID: id, into: $0) }
        })
        try buffer.withUnsafeBytes { b in
            let bytes = UnsafeRawBufferPointer(rebasing: b[0..<n])
            let parsed = try STUNMessage.parse(bytes)
            #expect(parsed.message.type == STUNMessageType(method: STUNMessageType.sendMethod, class: .indication))
            #expect(parsed.message.attributes.contains(.xorPeerAddress(peer)))
            #expect(TURNWire.frameLength(UnsafeRawBufferPointer(rebasing: b[0..<4])) == n)
        }
        // The same bytes as a Data indication (only the method differs) read back in place.
        buffer[1] = UInt8(STUNMessageType(method: STUNMessageType.dataMethod, class: .indication).rawValue & 0xFF)
        buffer.withUnsafeBytes { b in
            let read = TURNWire.readDataIndication(UnsafeRawBufferPointer(rebasing: b[0..<n]))
            #expect(read?.peer == peer)
            #expect(read.map { Array(b[$0.data]) } == payload)
        }
    }

    @Test func streamFramesOutOfStepAreRefused() {
        let garbage: [UInt8] = [0x99, 0, 0, 4]
        garbage.withUnsafeBytes { #expect(TURNWire.frameLength($0) == nil) }
        let stunOddLength: [UInt8] = [0x01, 0x01, 0, 6]
        stunOddLength.withUnsafeBytes { #expect(TURNWire.frameLength($0) == nil) }
    }

    @Test(arguments: [
        ("turn:192.0.2.1", ICEServerScheme.turn, "192.0.2.1", UInt16(3478), TURNTransport.udp),
        ("turn:192.0.2.1:3479?transport=tcp", .turn, "192.0.2.1", 3479, .tcp),
        ("turns:turn.example.net", .turns, "turn.example.net", 5349, .tls),
        ("turns:[2001:db8::1]:443?transport=tcp", .turns, "2001:db8::1", 443, .tls),
        ("TURN:192.0.2.1?transport=UDP", .turn, "192.0.2.1", 3478, .udp),
    ])
    func turnURIsParse(text: String, scheme: ICEServerScheme, host: String, port: UInt16, transport: TURNTransport) throws {
        let uri = try ICEServerURI(parsing: text)
        #expect(uri.scheme == scheme && uri.host == host && uri.port == port && uri.transport == transport)
    }

    @Test(arguments: ["http://x", "turn:", "turn:host:0", "turns:h?transport=udp", "stun:1.2.3.4?transport=udp",
                      "turn:h?transport=sctp", "turn:[::1", "turn:a b", "turn:::1:3478"])
    func badURIsAreRefusedWithAReason(text: String) {
        #expect(throws: ICEError.self) { try ICEServerURI(parsing: text) }
    }

    /// RFC 5769 §2.4's long-term credentials: MD5("user:realm:pass") keys the integrity.
    @Test func longTermKeyIsTheMD5OfUserRealmPassword() throws {
        let c = try TURNCredentials(username: "user", password: "pass")
        // MD5("user:realm:pass") = 8493fbc53ba582fb4c044c456bdc40eb
        #expect(c.key(realm: "realm", algorithm: .md5)
            == [0x84, 0x93, 0xfb, 0xc5, 0x3b, 0xa5, 0x82, 0xfb, 0x4c, 0x04, 0x4c, 0x45, 0x6b, 0xdc, 0x40, 0xeb])
        #expect(c.key(realm: "realm", algorithm: .sha256).count == 32)
        #expect(!c.description.contains("pass)") && c.description.contains("password (4 chars)"))
    }

    @Test func thePasswordAlgorithmChosenIsTheFirstKnown() {
        #expect(TURNClient<SplitMix64>.chooseAlgorithm(nil) == .md5)
        #expect(TURNClient<SplitMix64>.chooseAlgorithm([0, 2, 0, 0, 0, 1, 0, 0]) == .sha256)
        #expect(TURNClient<SplitMix64>.chooseAlgorithm([0, 9, 0, 4, 1, 2, 3, 4, 0, 1, 0, 0]) == .md5)
    }
}
