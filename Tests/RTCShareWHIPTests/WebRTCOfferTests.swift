import RTCShareDTLS
import Testing
import RTCShareRTP
@testable import RTCShareWHIP

@Suite struct WebRTCOfferTests {
    @Test func writesTheLinesOfASendonlyBundledOffer() {
        let text = WebRTCOffer.text(WHIPTestOffer.configuration())
        let fp = WHIPTestOffer.configuration().fingerprint.attributeValue
        let transport = """
            c=IN IP4 127.0.0.1\r
            a=candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host\r
            a=end-of-candidates\r
            a=ice-ufrag:rtcs\r
            a=ice-pwd:abcdefghijklmnopqrstuvwx\r
            a=fingerprint:\(fp)\r
            a=setup:actpass\r

            """
        #expect(text == """
            v=0\r
            o=- 4242 2 IN IP4 127.0.0.1\r
            s=-\r
            t=0 0\r
            a=group:BUNDLE 0 1\r
            a=msid-semantic:WMS rtcshare\r
            m=video 50000 UDP/TLS/RTP/SAVPF 96 97\r

            """ + transport + """
            a=mid:0\r
            a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid\r
            a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time\r
            a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01\r
            a=extmap:4 urn:3gpp:video-orientation\r
            a=sendonly\r
            a=msid:rtcshare screen\r
            a=rtcp-mux\r
            a=rtcp-rsize\r
            a=content:slides\r
            a=rtpmap:96 VP8/90000\r
            a=rtcp-fb:96 goog-remb\r
            a=rtcp-fb:96 transport-cc\r
            a=rtcp-fb:96 ccm fir\r
            a=rtcp-fb:96 nack\r
            a=rtcp-fb:96 nack pli\r
            a=rtpmap:97 rtx/90000\r
            a=fmtp:97 apt=96\r
            a=ssrc-group:FID 1111 2222\r
            a=ssrc:1111 cname:rtcshare-cname\r
            a=ssrc:1111 msid:rtcshare screen\r
            a=ssrc:2222 cname:rtcshare-cname\r
            a=ssrc:2222 msid:rtcshare screen\r
            m=audio 50000 UDP/TLS/RTP/SAVPF 111\r

            """ + transport + """
            a=mid:1\r
            a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid\r
            a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time\r
            a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01\r
            a=sendonly\r
            a=msid:rtcshare audio\r
            a=rtcp-mux\r
            a=rtcp-rsize\r
            a=rtpmap:111 opus/48000/2\r
            a=fmtp:111 minptime=10;useinbandfec=1\r
            a=rtcp-fb:111 transport-cc\r
            a=ssrc:3333 cname:rtcshare-cname\r
            a=ssrc:3333 msid:rtcshare audio\r

            """)
    }

    @Test func everyLineEndsInCRLF() {
        let text = WebRTCOffer.text(WHIPTestOffer.configuration())
        #expect(text.hasSuffix("\r\n"))
        #expect(!text.replacing("\r\n", with: "").contains("\n"))
        #expect(!text.replacing("\r\n", with: "").contains("\r"))
    }

    @Test func parsesBackWithTheSharedParser() throws {
        let offer = WebRTCOffer.make(WHIPTestOffer.configuration())
        let again = try SessionDescription.parse(offer.render())
        #expect(again == offer)
        let video = again.media[0]
        #expect(video.payloadType(for: "VP8") == 96)
        #expect(video.formatParameters(for: 97) == "apt=96")
        #expect(video.feedback(for: 96) == ["goog-remb", "transport-cc", "ccm fir", "nack", "nack pli"])
        #expect(video.extensionID(for: RTPVideoOrientation.uri) == 4)
        #expect(video.ssrcs == [1111, 2222])
        #expect(again.media[1].payloadType(for: "opus") == 111)
    }

    @Test func withoutRTXOrAudioOffersOnlyWhatIsSent() throws {
        let text = WebRTCOffer.text(WHIPTestOffer.configuration(audio: false, rtx: false))
        #expect(text.contains("a=group:BUNDLE 0\r\n"))
        #expect(text.contains("m=video 50000 UDP/TLS/RTP/SAVPF 96\r\n"))
        #expect(!text.contains("rtx"))
        #expect(!text.contains("ssrc-group"))
        #expect(!text.contains("m=audio"))
    }

    @Test func withoutCandidatesUsesThePlaceholderAddress() {
        var c = WHIPTestOffer.configuration()
        c.candidates = []
        let text = WebRTCOffer.text(c)
        #expect(text.contains("m=video 9 UDP/TLS/RTP/SAVPF 96 97\r\nc=IN IP4 0.0.0.0\r\na=end-of-candidates\r\n"))
    }

    @Test func fingerprintRoundTripsThroughItsSDPValue() throws {
        let f = try DTLSFingerprint(hashFunction: .sha256, digest: WHIPTestOffer.digest)
        #expect(f.attributeValue.hasPrefix("sha-256 00:07:0E:15:"))
        #expect(try DTLSFingerprint(attributeValue: f.attributeValue) == f)
        #expect(try DTLSFingerprint(attributeValue: f.attributeValue.lowercased()) == f)
        #expect((try? DTLSFingerprint(attributeValue: "sha-256 00:07")) == nil)          // too short
        #expect((try? DTLSFingerprint(attributeValue: "md5 " + Array(repeating: "00", count: 16).joined(separator: ":"))) == nil)
        #expect((try? DTLSFingerprint(attributeValue: f.attributeValue.replacing("00:", with: "0G:"))) == nil)
    }
}
