import Testing
@testable import RTCShareICE
import TestSupport

/// Addresses, credentials, candidate lines and priorities.
@Suite struct ICECandidateTests {
    @Test func addressesParseAndFormatCanonically() throws {
        #expect(try ICEAddress(parsing: "192.0.2.1:3478").description == "192.0.2.1:3478")
        #expect(try ICEAddress(parsing: "[2001:DB8:0:0:1:0:0:1]:9").description == "[2001:db8::1:0:0:1]:9")
        #expect(try ICEAddress(host: "::", port: 1).host == "::")
        #expect(try ICEAddress(host: "::1", port: 1).host == "::1")
        #expect(try ICEAddress(host: "::ffff:192.0.2.1", port: 1).host == "::ffff:c000:201")
        #expect(try ICEAddress(host: "1:2:3:4:5:6:7:8", port: 1).host == "1:2:3:4:5:6:7:8")
        for bad in ["1.2.3", "1.2.3.256", "01.2.3.4", "1:2:3:4:5:6:7:8:9", "1::2::3", ":1:2", "1:", "host.local", "", "::g"] {
            #expect(throws: ICEError.self) { try ICEAddress(host: bad, port: 1) }
        }
        #expect(throws: ICEError.self) { try ICEAddress(parsing: "::1:80") }
    }

    @Test func candidateLineParsesFieldByField() throws {
        let c = try #require(try ICECandidate.parse(sdpAttribute:
            "a=candidate:842163049 1 udp 1677729535 203.0.113.7 46154 typ srflx raddr 10.0.0.2 rport 46154 generation 0 network-cost 999"))
        #expect(c.foundation == "842163049")
        #expect(c.component == 1)
        #expect(c.priority == 1_677_729_535)
        // Bound before #expect: Swift 6.0's macro cannot hold a `try` inside its comparison.
        let (address, related) = (try ICEAddress(parsing: "203.0.113.7:46154"), try ICEAddress(parsing: "10.0.0.2:46154"))
        #expect(c.address == address)
        #expect(c.type == .serverReflexive)
        #expect(c.relatedAddress == related)
        #expect(c.sdpAttribute == "candidate:842163049 1 udp 1677729535 203.0.113.7 46154 typ srflx raddr 10.0.0.2 rport 46154")
        #expect(try ICECandidate.parse(sdpAttribute: c.sdpAttribute) == c)
    }

    @Test func lineEndingsSeparateFields() throws {
        // fuzz-candidate: a line with its SDP line ending was refused ("typ relay\r\n" read
        // as type "relay\r\n"), since CR LF is a single Character.
        let c = try #require(try ICECandidate.parse(sdpAttribute: "candidate:r 1 udp 2 :: 3 typ relay"))
        #expect(try ICECandidate.parse(sdpAttribute: "a=candidate:r 1 udp 2 :: 3 typ relay\r\n") == c)
        #expect(try ICECandidate.parse(sdpAttribute: "candidate:r 1 udp 2 :: 3 typ relay\n") == c)
        #expect(try ICECandidate.parse(sdpAttribute: "candidate:r\r\n1\r\nudp 2 :: 3 typ relay") == c)
    }

    @Test func ignoresTCPAndNamesRefusesBrokenLines() throws {
        #expect(try ICECandidate.parse(sdpAttribute: "candidate:1 1 TCP 2128609279 10.0.0.1 9 typ host tcptype active") == nil)
        #expect(try ICECandidate.parse(sdpAttribute: "candidate:1 1 udp 2122260223 3f1d.local 5000 typ host") == nil)
        #expect(try ICECandidate.parse(sdpAttribute: "candidate:1 1 UDP 2122260223 [::1] 5000 typ host") == nil)
        #expect(try ICECandidate.parse(sdpAttribute: "candidate:1 1 UDP 2122260223 ::1 5000 typ host")?.address.port == 5000)
        for bad in ["candidate:1 1 udp 1 10.0.0.1 5000 type host", "candidate:1 0 udp 1 10.0.0.1 5000 typ host",
                    "candidate:1 1 udp 0 10.0.0.1 5000 typ host", "candidate:1 1 udp 1 10.0.0.1 70000 typ host",
                    "candidate:1 1 udp 1 10.0.0.1 5000 typ nat", "candidate:1 1 udp 1 10.0.0.1", "c=IN IP4 1.2.3.4",
                    "candidate:f*o 1 udp 1 10.0.0.1 5000 typ host"] {
            #expect(throws: ICEError.self) { try ICECandidate.parse(sdpAttribute: bad) }
        }
    }

    @Test func prioritiesFollowRFC8445() {
        // §5.1.2.1 with the recommended type preferences.
        #expect(ICECandidate.priority(type: .host, localPreference: 65535) == 2_130_706_431)
        #expect(ICECandidate.priority(type: .serverReflexive, localPreference: 65535) == 1_694_498_815)
        #expect(ICECandidate.priority(type: .peerReflexive, localPreference: 65535) == 1_862_270_975)
        #expect(ICECandidate.priority(type: .relayed, localPreference: 0, component: 2) == 254)
        // §6.1.2.3.
        #expect(CandidatePair.priority(controlling: 10, controlled: 20) == (10 << 32) + 40)
        #expect(CandidatePair.priority(controlling: 20, controlled: 10) == (10 << 32) + 41)
    }

    @Test func generatedCredentialsUseIceCharsAndLengths() throws {
        var rng = SeededRandom(seed: 1)
        let c = ICECredentials.generate(using: &rng)
        #expect(c.ufrag.count == 8 && c.password.count == 24)
        #expect(try ICECredentials(ufrag: c.ufrag, password: c.password) == c)
        #expect(!c.description.contains(c.password))
        #expect(throws: ICEError.self) { try ICECredentials(ufrag: "abc", password: c.password) }
        #expect(throws: ICEError.self) { try ICECredentials(ufrag: "abcd", password: "short") }
        #expect(throws: ICEError.self) { try ICECredentials(ufrag: "ab:d", password: c.password) }
    }
}
