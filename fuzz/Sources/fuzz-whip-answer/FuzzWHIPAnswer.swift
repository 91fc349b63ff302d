// WebRTCAnswer.parse: the SDP answer a WHIP server returns — untrusted text from the network —
// read strictly against a fixed offer (VP8 96 + RTX 97, Opus 111, the four header extensions).
//
// Oracles, on an accepted answer: a video codec named as offered (VP8/90000) with a payload
// type in 0...127; an RTX payload type, if kept, in 0...127 and other than the codec's;
// kept feedback and extensions are a subset of what was offered, extension IDs in 1...14 and
// one URI per ID across the bundle; at least one fingerprint, each of its hash's length;
// ICE credentials of legal lengths; `setup` is active or passive (the type allows nothing else).
// A refused answer gives an error whose one-line description is non-empty.
//
// Input: the bytes as UTF-8 (invalid sequences become U+FFFD, as the HTTP client's
// String(validating:) would refuse them instead; both paths end in the same parser).

import RTCShareDTLS
import FuzzSupport
import RTCShareRTP
import RTCShareWHIP

@main
enum FuzzWHIPAnswer {
    static func main() { runLibFuzzer(fuzzWHIPAnswer) }
}

private let offer: WebRTCOfferConfiguration = {
    var c = WebRTCOfferConfiguration(
        sessionID: 1, iceUfrag: "rtcs", icePwd: "abcdefghijklmnopqrstuvwx",
        fingerprint: try! DTLSFingerprint(hashFunction: .sha256, digest: [UInt8](repeating: 7, count: 32)),
        candidates: [.init(address: "127.0.0.1", port: 50000, priority: 2_130_706_431, foundation: "1")],
        cname: "c", videoSSRC: 1, rtxSSRC: 2)
    c.audio = .init(ssrc: 3)
    return c
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWHIPAnswer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    let answer: WebRTCAnswer
    do {
        answer = try WebRTCAnswer.parse(text, offer: offer)
    } catch {
        fuzzCheck(!error.description.isEmpty && !error.description.contains("\n"), "error is not one line")
        return 0
    }
    let v = answer.video
    fuzzCheck(v.kind == .video && v.codec.name.uppercased() == "VP8" && v.codec.clockRate == 90_000, "video codec \(v.codec)")
    fuzzCheck((0...127).contains(v.codec.payloadType), "video payload type \(v.codec.payloadType)")
    if let rtx = v.rtxPayloadType {
        fuzzCheck((0...127).contains(rtx) && rtx != v.codec.payloadType, "rtx payload type \(rtx)")
    }
    var uriOf: [Int: String] = [:]
    for m in [v] + (answer.audio.map { [$0] } ?? []) {
        let offered = m.kind == .video ? WebRTCOfferConfiguration.videoFeedback : WebRTCOfferConfiguration.audioFeedback
        fuzzCheck(m.feedback.allSatisfy(offered.contains), "feedback \(m.feedback) not offered")
        let uris = (m.kind == .video ? offer.videoExtensions : offer.audioExtensions).map(\.uri)
        for e in m.extensions {
            fuzzCheck((1...14).contains(e.id) && uris.contains(e.uri), "extension \(e)")
            fuzzCheck(uriOf[e.id] == nil || uriOf[e.id] == e.uri, "extmap id \(e.id) for two URIs")
            uriOf[e.id] = e.uri
        }
    }
    if let a = answer.audio {
        fuzzCheck(a.codec.name.lowercased() == "opus" && a.codec.clockRate == 48_000 && a.codec.channels == 2, "audio codec")
    }
    fuzzCheck(!answer.fingerprints.isEmpty, "accepted without a fingerprint")
    for f in answer.fingerprints {
        fuzzCheck((try? DTLSFingerprint(attributeValue: f.attributeValue)) == f, "fingerprint does not round-trip")
    }
    fuzzCheck(answer.setup == .active || answer.setup == .passive, "setup")
    fuzzCheck((4...256).contains(answer.iceUfrag.utf8.count) && (22...256).contains(answer.icePwd.utf8.count), "ICE credentials")
    for c in answer.candidates { consume(c) }
    for d in answer.dropped { consume(d) }
    consume(answer.connectionAddress ?? "")
    consume(answer.iceLite)
    return 0
}
