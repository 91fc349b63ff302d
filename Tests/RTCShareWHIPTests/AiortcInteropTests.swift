import RTCShareDTLS
import Foundation
import Testing
import RTCShareRTP
@testable import RTCShareWHIP

/// The real check: rtcshare's offer POSTed to aiortc's WHIP server, its answer read strictly,
/// then DELETE. ICE and DTLS do not run here (no media is sent); the exchange and what aiortc
/// agrees to are what is tested. aiortc 1.16 keeps nack, nack pli, goog-remb and RTX, and
/// drops FIR, transport-cc and CVO (see SERVERS.md and the WHIP issue).
@Suite struct AiortcInteropTests {
    @Test func aiortcAcceptsTheOfferAndItsAnswerReadsStrictly() throws {
        let s = try WHIPTestServer.get()
        let offer = WHIPTestOffer.configuration()
        let token = try WHIPToken("interop-token")
        let client = WHIPClient()
        let p = try client.publish(to: s.base + "/whip/interop", offer: WebRTCOffer.text(offer), token: token)
        #expect(p.resourceURL == s.base + "/whip/resource/interop")
        if let path = ProcessInfo.processInfo.environment["RTCSHARE_WHIP_CAPTURE"] {
            try p.answer.write(toFile: path, atomically: true, encoding: .utf8)
        }

        let a = try WebRTCAnswer.parse(p.answer, offer: offer)
        #expect(a.video.codec.name.uppercased() == "VP8")
        #expect(a.video.rtxPayloadType != nil)
        #expect(a.video.accepts(feedback: "nack") && a.video.accepts(feedback: "nack pli") && a.video.accepts(feedback: "goog-remb"))
        #expect(!a.video.accepts(feedback: "ccm fir") && !a.video.accepts(feedback: "transport-cc"))
        #expect(a.video.extensionID(for: RTPVideoOrientation.uri) == nil)
        #expect(a.video.extensionID(for: WebRTCOfferConfiguration.midURI) != nil)
        #expect(a.video.extensionID(for: AbsSendTime.uri) != nil)
        #expect(a.audio?.codec.name.lowercased() == "opus")
        #expect(a.setup == .active)
        #expect(!a.iceLite)
        #expect(a.fingerprints.first?.hashFunction == .sha256)
        #expect(a.candidates.contains { $0.contains("127.0.0.1") })
        print("aiortc answer kept: video \(a.video.codec.name)/\(a.video.codec.payloadType) rtx \(a.video.rtxPayloadType.map(String.init) ?? "-") fb \(a.video.feedback) ext \(a.video.extensions.map(\.uri)); audio \(a.audio.map { "\($0.codec.name)/\($0.codec.payloadType) ext \($0.extensions.map(\.uri))" } ?? "rejected")")
        print("aiortc answer dropped: \(a.dropped)")

        #expect(try client.patch(resource: p.resourceURL, fragment: "a=end-of-candidates\r\n", token: token) == .unsupported)
        try client.delete(resource: p.resourceURL, token: token)
        let deletes = try #require(try s.summary()["deletes"] as? [String])
        #expect(deletes.contains("interop"))
    }
}
