import RTCShareDTLS
import Foundation
import Testing
import RTCShareRTP
@testable import RTCShareWHIP

@Suite struct WebRTCAnswerTests {
    static func vector(_ name: String) throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors/\(name)")
        return try String(contentsOf: url, encoding: .utf8)
    }

    let offer = WHIPTestOffer.configuration()

    /// The aiortc vector with one edit per case: `replace` pairs applied in order.
    func aiortc(_ replace: [(String, String)]) throws -> String {
        var text = try Self.vector("aiortc-answer.sdp")
        for (old, new) in replace {
            #expect(text.contains(old), "vector lacks '\(old)'")
            text = text.replacing(old, with: new)
        }
        return text
    }

    func error(_ text: String) -> WHIPError? {
        do { _ = try WebRTCAnswer.parse(text, offer: offer); return nil } catch { return error }
    }

    @Test func aiortcAnswerKeepsVP8RTXAndTheFeedbackItAccepted() throws {
        let a = try WebRTCAnswer.parse(try Self.vector("aiortc-answer.sdp"), offer: offer)
        #expect(a.video.codec == .init(name: "VP8", payloadType: 96, clockRate: 90_000, channels: nil, formatParameters: nil))
        #expect(a.video.rtxPayloadType == 97)
        #expect(a.video.feedback == ["goog-remb", "nack", "nack pli"])
        #expect(a.video.extensions == [.init(id: 1, uri: WebRTCOfferConfiguration.midURI), .init(id: 2, uri: AbsSendTime.uri)])
        #expect(a.audio?.codec.payloadType == 111 && a.audio?.codec.channels == 2)
        #expect(a.audio?.extensions == [.init(id: 1, uri: WebRTCOfferConfiguration.midURI)])
        #expect(a.setup == .active && !a.iceLite)
        #expect(a.iceUfrag == "Mx65" && a.icePwd == "Vf7D4sydXn8W8aFLc4chKs")
        #expect(a.fingerprints.map(\.hashFunction) == [.sha256, .sha384, .sha512])
        #expect(a.fingerprints[0].digest.prefix(3) == [0x84, 0xF0, 0xA3])
        #expect(a.candidates == ["16572de626da4e5384a0ce2d0d93678a 1 udp 2130706431 127.0.0.1 36392 typ host"])
        #expect(a.endOfCandidates && a.connectionAddress == "127.0.0.1")
        #expect(a.rejected.isEmpty)
        #expect(a.dropped.contains("video rtcp-fb ccm fir") && a.dropped.contains("video extmap \(RTPVideoOrientation.uri)"))
    }

    @Test func janusShapedAnswerTakesTheSessionLevelFingerprint() throws {
        let a = try WebRTCAnswer.parse(try Self.vector("janus-answer-handwritten.sdp"), offer: offer)
        #expect(a.video.feedback == ["goog-remb", "transport-cc", "ccm fir", "nack", "nack pli"])
        #expect(a.video.rtxPayloadType == nil)
        #expect(a.video.extensionID(for: TransportSequenceNumber.uri) == 3)
        #expect(a.video.extensionID(for: RTPVideoOrientation.uri) == 4)
        #expect(a.video.extensionID(for: AbsSendTime.uri) == nil)
        #expect(a.fingerprints.count == 1 && a.setup == .active)
        #expect(a.candidates == ["1 1 udp 2015363327 10.99.0.1 41234 typ host"])
        #expect(a.connectionAddress == "10.99.0.1")
        #expect(a.dropped.contains("video rtx"))
    }

    @Test func payloadTypesAreMatchedByNameAndTheAnswersNumbersWin() throws {
        let a = try WebRTCAnswer.parse(try aiortc([
            ("96 97\r\n", "100 101\r\n"), ("rtpmap:96 VP8", "rtpmap:100 vp8"), ("rtcp-fb:96", "rtcp-fb:100"),
            ("rtpmap:97 rtx", "rtpmap:101 rtx"), ("fmtp:97 apt=96", "fmtp:101 apt=100"),
        ]), offer: offer)
        #expect(a.video.codec.payloadType == 100 && a.video.rtxPayloadType == 101)
        #expect(a.video.feedback == ["goog-remb", "nack", "nack pli"])
    }

    @Test func rtxWhoseAptNamesAnotherCodecIsNotKept() throws {
        let a = try WebRTCAnswer.parse(try aiortc([("fmtp:97 apt=96", "fmtp:97 apt=98")]), offer: offer)
        #expect(a.video.rtxPayloadType == nil)
    }

    @Test func theAnswersExtensionIDsAreAuthoritative() throws {
        let a = try WebRTCAnswer.parse(try aiortc([("extmap:2 http://www.webrtc", "extmap:9 http://www.webrtc")]), offer: offer)
        #expect(a.video.extensionID(for: AbsSendTime.uri) == 9)
    }

    @Test func oneIDForTwoExtensionsIsAnError() throws {
        let e = error(try aiortc([("extmap:2 http://www.webrtc", "extmap:1 http://www.webrtc")]))
        #expect(e?.description.contains("extmap id 1 names two extensions") == true)
    }

    @Test func rejectedAudioIsReportedNotFatal() throws {
        let a = try WebRTCAnswer.parse(try aiortc([("m=audio 36392", "m=audio 0")]), offer: offer)
        #expect(a.audio == nil)
        #expect(a.rejected == [.init(mid: "1", kind: .audio, reason: "port 0")])
        #expect(a.dropped.contains("audio rejected (port 0)"))
    }

    @Test func noUsableVideoCodecIsAClearError() throws {
        let e = error(try aiortc([("rtpmap:96 VP8/90000", "rtpmap:96 H264/90000")]))
        #expect(e == .noUsableVideoCodec(offered: ["VP8/90000"]))
        #expect(e?.description == "WHIP answer accepts none of the video codecs offered (VP8/90000)")
        #expect(error(try aiortc([("m=video 36392", "m=video 0")])) == .noUsableVideoCodec(offered: ["VP8/90000"]))
    }

    @Test func setupActpassInAnAnswerIsRefused() throws {
        let e = error(try aiortc([("a=setup:active", "a=setup:actpass")]))
        #expect(e == .badAnswer("a=setup:actpass; an answer must choose active or passive (RFC 5763 §5)"))
    }

    @Test func missingFingerprintIsRefused() throws {
        var text = try Self.vector("aiortc-answer.sdp")
        text = text.split(separator: "\r\n").filter { !$0.hasPrefix("a=fingerprint") }.joined(separator: "\r\n") + "\r\n"
        #expect(error(text) == .badAnswer("has no a=fingerprint; DTLS could not be authenticated"))
    }

    @Test func malformedFingerprintIsRefused() throws {
        let e = error(try aiortc([("a=fingerprint:sha-256 84:F0", "a=fingerprint:sha-256 84:F")]))
        #expect(e == .badAnswer("a=fingerprint is not a known hash with a digest of its length"))
    }

    @Test func missingRTCPMuxIsRefused() throws {
        let e = error(try aiortc([("a=rtcp-mux\r\na=ssrc-group", "a=ssrc-group")]))
        #expect(e == .badAnswer("video section has no a=rtcp-mux; RTP and RTCP must share the socket"))
    }

    @Test func sectionsOutsideTheBundleAreRefused() throws {
        let e = error(try aiortc([("a=group:BUNDLE 0 1", "a=group:BUNDLE 0")]))
        #expect(e == .badAnswer("audio section (mid 1) is not in the answer's BUNDLE group"))
    }

    @Test func aSendingAnswerToASendonlyOfferIsRefused() throws {
        let e = error(try aiortc([("m=video 36392 UDP/TLS/RTP/SAVPF 96 97\r\nc=IN IP4 127.0.0.1\r\na=recvonly",
                                   "m=video 36392 UDP/TLS/RTP/SAVPF 96 97\r\nc=IN IP4 127.0.0.1\r\na=sendrecv")]))
        #expect(e == .badAnswer("video section must be recvonly to a sendonly offer (RFC 3264 §6.1)"))
    }

    @Test func badICECredentialsAreRefused() throws {
        #expect(error(try aiortc([("a=ice-ufrag:Mx65", "a=ice-ufrag:M!")])) == .badAnswer("a=ice-ufrag is not 4...256 ice-chars (RFC 8839)"))
        #expect(error(try aiortc([("a=ice-pwd:Vf7D4sydXn8W8aFLc4chKs", "a=ice-pwd:short")])) == .badAnswer("a=ice-pwd is not 22...256 ice-chars (RFC 8839)"))
    }

    @Test func wrongSectionCountOrMidIsRefused() throws {
        var c = offer
        c.audio = nil
        #expect(throws: WHIPError.badAnswer("has 2 media sections; the offer had 1")) {
            try WebRTCAnswer.parse(try Self.vector("aiortc-answer.sdp"), offer: c)
        }
        #expect(error(try aiortc([("a=mid:0", "a=mid:v")])) == .badAnswer("video section has mid 'v'; '0' was offered"))
    }

    @Test func notSDPIsASyntaxError() {
        guard case .answerSyntax? = error("<html>hello</html>") else { Issue.record("expected answerSyntax"); return }
    }
}
