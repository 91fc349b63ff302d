import RTCShareDTLS
import RTCShareRTP

// Two endpoints in one process, datagrams carried in memory: a link that can lose what it is
// told to, and the helpers to run a handshake to its end.

/// Moves every queued datagram from `from` into `to`; `lose` drops the ones it returns true for.
/// Returns how many datagrams were taken out of `from`.
@discardableResult
func deliver(from: inout DTLSTransport, to: inout DTLSTransport, lose: ([UInt8]) -> Bool = { _ in false }) -> Int {
    var n = 0
    while let datagram = from.pollTransmit() {
        n += 1
        if !lose(datagram) { to.handle(datagram: datagram) }
    }
    return n
}

/// Exchanges datagrams until neither side has anything to send.
func pump(_ a: inout DTLSTransport, _ b: inout DTLSTransport) {
    for _ in 0..<32 {
        let moved = deliver(from: &a, to: &b) + deliver(from: &b, to: &a)
        if moved == 0 { return }
    }
}

func events(_ t: inout DTLSTransport) -> [DTLSEvent] {
    var out: [DTLSEvent] = []
    while let e = t.pollEvent() { out.append(e) }
    return out
}

func keys(in events: [DTLSEvent]) -> DTLSSRTPKeys? {
    for case .connected(let keys) in events { return keys }
    return nil
}

/// A client and a server that trust each other's certificates.
struct Identities: ~Copyable {
    let client = try! DTLSCertificate()
    let server = try! DTLSCertificate()

    func configuration(_ role: DTLSRole, profiles: [SRTPProfile] = [.aeadAES128GCM, .aesCM128HmacSHA1_80],
                       mtu: Int = 1200, timeout: Duration = .seconds(1)) -> DTLSConfiguration {
        DTLSConfiguration(role: role,
                          remoteFingerprint: role == .client ? server.fingerprint() : client.fingerprint(),
                          mtu: mtu, srtpProfiles: profiles, initialRetransmitTimeout: timeout)
    }

    func transport(_ role: DTLSRole, profiles: [SRTPProfile] = [.aeadAES128GCM, .aesCM128HmacSHA1_80],
                   mtu: Int = 1200, timeout: Duration = .seconds(1)) throws(DTLSError) -> DTLSTransport {
        let config = configuration(role, profiles: profiles, mtu: mtu, timeout: timeout)
        if role == .client { return try DTLSTransport(certificate: client, configuration: config) }
        return try DTLSTransport(certificate: server, configuration: config)
    }
}

/// An RTP packet (RFC 3550 §5.1, version 2, no CSRC) in a buffer with SRTP tailroom.
func rtpPacket(seq: UInt16, payload: [UInt8]) -> [UInt8] {
    var p: [UInt8] = [0x80, 96, UInt8(seq >> 8), UInt8(seq & 0xFF), 0, 0, 0x10, 0, 0xCA, 0xFE, 0xBA, 0xBE]
    p += payload
    return p
}

/// Protects `packet` with a sender context of `key` and unprotects it with a receiver context
/// of `peerKey`; returns what went on the wire and what came out.
func srtpRoundTrip(_ packet: [UInt8], key: SRTPMasterKey, peerKey: SRTPMasterKey) throws -> (wire: [UInt8], out: [UInt8]) {
    var sender = try SRTPContext(key: key, direction: .sender)
    var receiver = try SRTPContext(key: peerKey, direction: .receiver)
    var buffer = packet + [UInt8](repeating: 0, count: SRTPProfile.requiredTailroom)
    let protected = try buffer.withUnsafeMutableBytes { b throws(RTPError) in try sender.protectRTP(b, length: packet.count) }
    let wire = Array(buffer[..<protected])
    let length = try buffer.withUnsafeMutableBytes { b throws(RTPError) in try receiver.unprotectRTP(b, length: protected) }
    return (wire, Array(buffer[..<length]))
}
