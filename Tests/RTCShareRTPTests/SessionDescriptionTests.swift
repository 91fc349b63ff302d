import TestSupport
import Testing
@testable import RTCShareRTP

@Suite struct SessionDescriptionTests {
    static func sample() -> SessionDescription {
        var d = SessionDescription(originSessionID: 42, originAddress: "127.0.0.1", connectionAddress: "127.0.0.1")
        var v = MediaDescription(kind: .video, port: 5004, transportProtocol: "RTP/SAVP", payloadTypes: [96])
        v.add("rtpmap", RTPMap(payloadType: 96, encodingName: "VP8", clockRate: 90000).value)
        v.add("rtcp-fb", "96 nack")
        v.add("rtcp-fb", "96 nack pli")
        v.add("extmap", "3 urn:3gpp:video-orientation")
        v.add("crypto", SDESCrypto(suite: "AES_CM_128_HMAC_SHA1_80", keyBase64: "QUJD").value)
        v.add("ssrc", "1234 cname:x")
        v.add("rtcp-mux")
        d.media.append(v)
        var a = MediaDescription(kind: .audio, port: 5006, transportProtocol: "RTP/SAVP", payloadTypes: [111])
        a.add("rtpmap", RTPMap(payloadType: 111, encodingName: "opus", clockRate: 48000, channels: 2).value)
        a.add("fmtp", "111 minptime=10;useinbandfec=1")
        d.media.append(a)
        return d
    }

    @Test func rendersTheLinesReceiversExpect() {
        let text = Self.sample().render()
        #expect(text == """
            v=0\r
            o=- 42 1 IN IP4 127.0.0.1\r
            s=rtcshare\r
            c=IN IP4 127.0.0.1\r
            t=0 0\r
            m=video 5004 RTP/SAVP 96\r
            a=rtpmap:96 VP8/90000\r
            a=rtcp-fb:96 nack\r
            a=rtcp-fb:96 nack pli\r
            a=extmap:3 urn:3gpp:video-orientation\r
            a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:QUJD\r
            a=ssrc:1234 cname:x\r
            a=rtcp-mux\r
            m=audio 5006 RTP/SAVP 111\r
            a=rtpmap:111 opus/48000/2\r
            a=fmtp:111 minptime=10;useinbandfec=1\r

            """)
    }

    @Test func parsesWhatItRendersAndReadsTheAttributes() throws {
        let parsed = try SessionDescription.parse(Self.sample().render())
        #expect(parsed == Self.sample())
        let v = parsed.media[0]
        #expect(v.payloadType(for: "vp8") == 96)
        #expect(v.feedback(for: 96) == ["nack", "nack pli"])
        #expect(v.extensionID(for: "urn:3gpp:video-orientation") == 3)
        #expect(v.cryptos == [SDESCrypto(suite: "AES_CM_128_HMAC_SHA1_80", keyBase64: "QUJD")])
        #expect(v.ssrcs == [1234])
        #expect(v.has("rtcp-mux"))
        #expect(parsed.media[1].rtpMaps == [RTPMap(payloadType: 111, encodingName: "opus", clockRate: 48000, channels: 2)])
        #expect(parsed.media[1].formatParameters(for: 111) == "minptime=10;useinbandfec=1")
    }

    @Test func bareLineFeedsAndMediaLevelConnectionAreRead() throws {
        let text = "v=0\no=- 1 2 IN IP6 ::1\ns=x\nt=0 0\nm=audio 9 RTP/AVP 0\nc=IN IP6 ::1\na=crypto:2 AES_CM_128_HMAC_SHA1_80 inline:QUJD|2^20|1:4\n"
        let d = try SessionDescription.parse(text)
        #expect(d.originVersion == 2)
        #expect(d.connectionAddress == nil)
        #expect(d.media[0].connectionAddress == "::1")
        #expect(d.media[0].cryptos.first?.keyBase64 == "QUJD")
        #expect(d.media[0].cryptos.first?.tag == 2)
    }

    /// Found by fuzz/fuzz-sdp: an application section's formats are not payload types and must
    /// survive a render.
    @Test func anApplicationSectionRendersItsFormats() throws {
        let text = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\n"
        let d = try SessionDescription.parse(text)
        #expect(d.media[0].applicationFormats == ["webrtc-datachannel"])
        #expect(d.media[0].payloadTypes.isEmpty)
        let again = try SessionDescription.parse(d.render())
        #expect(again.media == d.media)
    }

    @Test func theKeyNeverPrints() {
        let c = SDESCrypto(suite: "AES_CM_128_HMAC_SHA1_80", keyBase64: "c2VjcmV0")
        #expect(!"\(c)".contains("c2VjcmV0"))
    }

    @Test(arguments: [
        ("", "sdp is empty"),
        ("v=1\r\n", "sdp line 1: must be v=0"),
        ("v=0\r\nhello\r\n", "sdp line 2: not <letter>=<value>"),
        ("v=0\r\no=- x 1 IN IP4 1.2.3.4\r\n", "sdp line 2: o= needs 6 fields with numeric session id and version"),
        ("v=0\r\no=- 1 1 IN IP4 a\r\nm=video 70000 RTP/AVP 96\r\n", "sdp line 3: m= port must be 0...65535"),
        ("v=0\r\no=- 1 1 IN IP4 a\r\nm=video 5 RTP/AVP 200\r\n", "sdp line 3: payload type '200' is not 0...127"),
        ("v=0\r\no=- 1 1 IN IP4 a\r\nc=IN XX a\r\n", "sdp line 3: c= must be IN IP4|IP6 address"),
        ("v=0\r\no=- 1 1 IN IP4 a\r\nc=IN IP4 /5\r\n", "sdp line 3: c= has no address"),
        ("v=0\r\nm=video 5 RTP/AVP 96\r\n", "sdp line 2: m= before o="),
        ("v=0\r\ns=x\u{1}\r\n", "sdp line 2: control character"),
        ("v=0\r\n", "sdp has no o= line"),
    ])
    func badDescriptionsGiveOneLine(text: String, message: String) {
        #expect(throws: SDPError(message)) { try SessionDescription.parse(text) }
    }

    @Test func oversizedInputIsRefused() {
        let big = "v=0\r\n" + String(repeating: "a=x\r\n", count: 20_000)
        #expect(throws: SDPError.self) { try SessionDescription.parse(big) }
    }

    @Test func randomAndMutatedTextNeverTraps() {
        var rng = SeededRandom(seed: 7)
        let corpus = Array(Self.sample().render().utf8)
        let alphabet = Array("v=0oscmab:/ 1234567890\r\nIPN-".utf8) + [0, 0xC3, 0xA9, 0xFF]
        var parsed = 0
        for _ in 0..<3000 {
            var bytes = corpus
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[at] = alphabet.randomElement(using: &rng)!
                case 1: bytes.remove(at: at)
                default: bytes.insert(alphabet.randomElement(using: &rng)!, at: at)
                }
                if bytes.isEmpty { bytes = [0x76] }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if let d = try? SessionDescription.parse(text) {
                parsed += 1
                // What parses renders and parses to the same model.
                #expect((try? SessionDescription.parse(d.render())) == d)
                _ = d.media.map { ($0.rtpMaps, $0.cryptos, $0.ssrcs, $0.extensionMaps) }
            }
        }
        #expect(parsed > 0)
    }
}
