// SessionDescription.parse: an SDP from a file (`rtcshare receive --sdp`) or, later, a WHIP
// answer — untrusted text. On success every typed accessor the receiver uses is read (rtpmap,
// fmtp, rtcp-fb, extmap, crypto, ssrc) and each inline SRTP key goes through
// SRTPMasterKey(profile:base64:); then ReceiveConfiguration(sessionDescription:host:), which is
// what `rtcshare receive --sdp` builds from it (host fixed to 127.0.0.1: no name lookups). The
// description is also rendered and must parse again, with as many media sections.
//
// Input: the bytes as UTF-8 (invalid sequences become U+FFFD, as String(decoding:) does for a
// file read).

import FuzzSupport
import RTCShare
import RTCShareRTP
import RTCShareReceive

@main
enum FuzzSDP {
    static func main() { runLibFuzzer(fuzzSDP) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSDP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    let sdp: SessionDescription
    do {
        sdp = try SessionDescription.parse(text)
    } catch {
        consume(error.description)
        return 0
    }
    visit(sdp)
    do {
        let c = try ReceiveConfiguration(sessionDescription: sdp, host: "127.0.0.1")
        consumeDescription(c.videoListen)
        consumeDescription(c.audioListen as Any)
        consume(c.videoPayloadType ^ (c.rtxPayloadType ?? 0) ^ c.audioPayloadType)
        consume(c.audioChannels)
        consume((c.videoSSRC ?? 0) ^ (c.rtxSSRC ?? 0) ^ (c.audioSSRC ?? 0))
        consume(c.rtcpMux)
        consumeDescription(c.protection as Any)
    } catch {
        consumeDescription(error)
    }
    // Render and read back: must not trap whatever was accepted.
    let rendered = sdp.render()
    consume(rendered)
    do {
        let again = try SessionDescription.parse(rendered)
        fuzzCheck(again.media.count == sdp.media.count, "rendered SDP has \(again.media.count) media, not \(sdp.media.count)")
    } catch {
        fuzzCheck(false, "an accepted SDP renders to one that is refused: \(error)")
    }
    return 0
}

private func visit(_ sdp: SessionDescription) {
    consume(sdp.originSessionID ^ sdp.originVersion)
    consume(sdp.originAddress)
    consume(sdp.sessionName)
    consume(sdp.connectionAddress ?? "")
    for a in sdp.attributes {
        consume(a.name)
        consume(a.value ?? "")
    }
    for m in sdp.media {
        fuzzCheck((0...65_535).contains(m.port), "m= port \(m.port) accepted")
        fuzzCheck(m.payloadTypes.allSatisfy { (0...127).contains($0) }, "payload types \(m.payloadTypes) accepted")
        consume(m.kind.rawValue)
        consume(m.transportProtocol)
        consume(m.bandwidthKbps ?? -1)
        consume(m.connectionAddress ?? "")
        for map in m.rtpMaps {
            fuzzCheck((0...127).contains(map.payloadType) && map.clockRate > 0, "rtpmap \(map.value)")
            consume(map.value)
            consume(m.formatParameters(for: map.payloadType) ?? "")
            for fb in m.feedback(for: map.payloadType) { consume(fb) }
        }
        consume(m.payloadType(for: "VP8") ?? -1)
        consume(m.payloadType(for: "opus") ?? -1)
        consume(m.payloadType(for: "rtx") ?? -1)
        for e in m.extensionMaps {
            fuzzCheck((1...255).contains(e.id), "extmap id \(e.id)")
            consume(e.uri)
        }
        for uri in [AbsSendTime.uri, TransportSequenceNumber.uri, RTPVideoOrientation.uri] {
            consume(m.extensionID(for: uri) ?? -1)
        }
        for s in m.ssrcs { consume(s) }
        for c in m.cryptos {
            consume(c.tag)
            consumeDescription(c)
            guard let profile = SRTPProfile(name: c.suite) else { continue }
            do {
                let key = try SRTPMasterKey(profile: profile, base64: c.keyBase64)
                fuzzCheck(key.masterKey.count + key.masterSalt.count == profile.keyingMaterialBytes,
                          "SRTP key of \(key.masterKey.count)+\(key.masterSalt.count) bytes for \(profile)")
                // Canonical base64 only: the key text must round-trip.
                fuzzCheck(key.base64 == c.keyBase64, "SRTP key base64 does not round-trip")
            } catch {
                consumeDescription(error)
            }
        }
        consume(m.has("rtcp-mux"))
    }
}
