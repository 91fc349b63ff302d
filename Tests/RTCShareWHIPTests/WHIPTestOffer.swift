import RTCShareDTLS
@testable import RTCShareWHIP

/// A fixed offer configuration: the byte-table tests and the vectors are written against it.
enum WHIPTestOffer {
    static let digest: [UInt8] = (0..<32).map { UInt8($0 * 7 & 0xFF) }

    static func configuration(audio: Bool = true, rtx: Bool = true, port: Int = 50000) -> WebRTCOfferConfiguration {
        var c = WebRTCOfferConfiguration(
            sessionID: 4242, iceUfrag: "rtcs", icePwd: "abcdefghijklmnopqrstuvwx",
            fingerprint: try! DTLSFingerprint(hashFunction: .sha256, digest: digest),
            candidates: [.init(address: "127.0.0.1", port: port, priority: 2_130_706_431, foundation: "1")],
            cname: "rtcshare-cname", videoSSRC: 1111, rtxSSRC: rtx ? 2222 : nil)
        if audio { c.audio = .init(ssrc: 3333) }
        return c
    }
}
