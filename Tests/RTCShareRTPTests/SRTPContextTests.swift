import TestSupport
import Testing
@testable import RTCShareRTP

/// Protect/unprotect through libsrtp2: round trips for both profiles, and every way a
/// received packet can be bad ending as `RTPError.srtp`, never a trap.
@Suite struct SRTPContextTests {
    static func key(_ profile: SRTPProfile, seed: UInt64 = 1) -> SRTPMasterKey {
        var rng = SeededRandom(seed: seed)
        return SRTPMasterKey.generate(profile: profile, using: &rng)
    }

    private func status(_ body: () throws(RTPError) -> Void) -> Int32? {
        do {
            try body()
            return nil
        } catch {
            if case .srtp(_, let s) = error { return s }
            return -1
        }
    }

    @Test(arguments: SRTPProfile.allCases)
    func rtpRoundTrips(profile: SRTPProfile) throws {
        var sender = try SRTPContext(key: Self.key(profile), direction: .sender)
        var receiver = try SRTPContext(key: Self.key(profile), direction: .receiver)
        for i in 0..<200 {
            let seq = UInt16(truncatingIfNeeded: 65_500 + i)  // crosses the sequence wrap
            let packet = plainRTPPacket(seq: seq, payload: (0..<(i * 7 % 1200)).map { UInt8(truncatingIfNeeded: $0 ^ i) })
            let protected = try srtpInPlace(packet) { b, n throws(RTPError) in try sender.protectRTP(b, length: n) }
            #expect(protected.count == packet.count + profile.rtpTrailerBytes)
            #expect(protected[12...] != packet[12...] || packet.count == 12)
            let back = try srtpInPlace(protected) { b, n throws(RTPError) in try receiver.unprotectRTP(b, length: n) }
            #expect(back == packet)
        }
    }

    @Test(arguments: SRTPProfile.allCases)
    func rtcpRoundTrips(profile: SRTPProfile) throws {
        var sender = try SRTPContext(key: Self.key(profile), direction: .sender)
        var receiver = try SRTPContext(key: Self.key(profile), direction: .receiver)
        for i in 0..<50 {
            let report = try RTCPSenderReport(info: RTCPSenderInfo(ssrc: 0x0102_0304, ntpTime: NTPTime(rawValue: UInt64(i) << 32),
                                                                   rtpTimestamp: UInt32(i), packetCount: 0, octetCount: 0)).serialized()
            let protected = try srtpInPlace(report) { b, n throws(RTPError) in try sender.protectRTCP(b, length: n) }
            #expect(protected.count == report.count + profile.rtcpTrailerBytes)
            let back = try srtpInPlace(protected) { b, n throws(RTPError) in try receiver.unprotectRTCP(b, length: n) }
            #expect(back == report)
        }
    }

    @Test(arguments: SRTPProfile.allCases)
    func anyTamperedByteFailsAuthentication(profile: SRTPProfile) throws {
        var sender = try SRTPContext(key: Self.key(profile), direction: .sender)
        let packet = plainRTPPacket(seq: 7, payload: Array(repeating: 0x55, count: 40))
        let protected = try srtpInPlace(packet) { b, n throws(RTPError) in try sender.protectRTP(b, length: n) }
        for i in 0..<protected.count {
            // A fresh receiver each time, so a replay is never the reason.
            var receiver = try SRTPContext(key: Self.key(profile), direction: .receiver)
            var bad = protected
            bad[i] ^= 0x01
            let s = status { () throws(RTPError) in _ = try srtpInPlace(bad) { b, n throws(RTPError) in try receiver.unprotectRTP(b, length: n) } }
            #expect(s != nil, "byte \(i) flipped went unnoticed")
            if i >= 12 { #expect(s == 7, "auth failure expected for byte \(i), got \(String(describing: s))") }
        }
    }

    @Test(arguments: SRTPProfile.allCases)
    func replayedPacketsAreRefused(profile: SRTPProfile) throws {
        var sender = try SRTPContext(key: Self.key(profile), direction: .sender)
        var receiver = try SRTPContext(key: Self.key(profile), direction: .receiver)
        let packet = plainRTPPacket(seq: 1000, payload: [1, 2, 3])
        let protected = try srtpInPlace(packet) { b, n throws(RTPError) in try sender.protectRTP(b, length: n) }
        _ = try srtpInPlace(protected) { b, n throws(RTPError) in try receiver.unprotectRTP(b, length: n) }
        #expect(status { () throws(RTPError) in _ = try srtpInPlace(protected) { b, n throws(RTPError) in try receiver.unprotectRTP(b, length: n) } } == 9)

        let rtcp = try RTCPReceiverReport(ssrc: 5).serialized()
        let srtcp = try srtpInPlace(rtcp) { b, n throws(RTPError) in try sender.protectRTCP(b, length: n) }
        _ = try srtpInPlace(srtcp) { b, n throws(RTPError) in try receiver.unprotectRTCP(b, length: n) }
        #expect(status { () throws(RTPError) in _ = try srtpInPlace(srtcp) { b, n throws(RTPError) in try receiver.unprotectRTCP(b, length: n) } } == 9)
    }

    @Test(arguments: SRTPProfile.allCases)
    func retransmissionMayReprotectTheSameSequenceNumber(profile: SRTPProfile) throws {
        var sender = try SRTPContext(key: Self.key(profile), direction: .sender)
        var receiver = try SRTPContext(key: Self.key(profile), direction: .receiver)
        let packet = plainRTPPacket(seq: 42, payload: Array(repeating: 9, count: 100))
        let first = try srtpInPlace(packet) { b, n throws(RTPError) in try sender.protectRTP(b, length: n) }
        _ = try srtpInPlace(plainRTPPacket(seq: 43, payload: [0])) { b, n throws(RTPError) in try sender.protectRTP(b, length: n) }
        let again = try srtpInPlace(packet) { b, n throws(RTPError) in try sender.protectRTP(b, length: n) }
        #expect(again == first, "same seq, same payload: same bytes (allow_repeat_tx)")
        #expect(try srtpInPlace(again) { b, n throws(RTPError) in try receiver.unprotectRTP(b, length: n) } == packet)
    }

    @Test(arguments: SRTPProfile.allCases)
    func shortPacketsAreErrorsNotTraps(profile: SRTPProfile) throws {
        var receiver = try SRTPContext(key: Self.key(profile), direction: .receiver)
        for length in 0..<(12 + profile.rtpTrailerBytes) {
            let bytes = [0x80] + [UInt8](repeating: 0, count: max(0, length - 1))
            let s = status { () throws(RTPError) in _ = try srtpInPlace(Array(bytes.prefix(length))) { b, n throws(RTPError) in try receiver.unprotectRTP(b, length: n) } }
            #expect(s == 2)
        }
        for length in 0..<(8 + profile.rtcpTrailerBytes) {
            let bytes = [UInt8](repeating: 0x80, count: length)
            #expect(status { () throws(RTPError) in _ = try srtpInPlace(bytes) { b, n throws(RTPError) in try receiver.unprotectRTCP(b, length: n) } } == 2)
        }
        // A header claiming 15 CSRCs, or an extension longer than the packet.
        var csrcs = plainRTPPacket(seq: 1, payload: [UInt8](repeating: 0, count: 30))
        csrcs[0] = 0x8F
        #expect(status { () throws(RTPError) in _ = try srtpInPlace(csrcs) { b, n throws(RTPError) in try receiver.unprotectRTP(b, length: n) } } == 2)
        var ext = plainRTPPacket(seq: 1, payload: [0xBE, 0xDE, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 30))
        ext[0] = 0x90
        #expect(status { () throws(RTPError) in _ = try srtpInPlace(ext) { b, n throws(RTPError) in try receiver.unprotectRTP(b, length: n) } } == 2)
    }

    @Test func protectNeedsTheDocumentedTailroom() throws {
        var sender = try SRTPContext(key: Self.key(.aesCM128HmacSHA1_80), direction: .sender)
        var buffer = plainRTPPacket(seq: 1, payload: [1, 2, 3]) + [UInt8](repeating: 0, count: SRTPProfile.requiredTailroom - 1)
        let result = buffer.withUnsafeMutableBytes { b in Result { () throws(RTPError) in try sender.protectRTP(b, length: 15) } }
        #expect(throws: RTPError.bufferTooSmall(needed: 15 + SRTPProfile.requiredTailroom, available: buffer.count)) { try result.get() }
    }

    @Test func directionsAreNotMixed() throws {
        var sender = try SRTPContext(key: Self.key(.aeadAES128GCM), direction: .sender)
        var receiver = try SRTPContext(key: Self.key(.aeadAES128GCM), direction: .receiver)
        let packet = plainRTPPacket(seq: 1, payload: [UInt8](repeating: 0, count: 40))
        #expect(status { () throws(RTPError) in _ = try srtpInPlace(packet) { b, n throws(RTPError) in try receiver.protectRTP(b, length: n) } } == 2)
        #expect(status { () throws(RTPError) in _ = try srtpInPlace(packet) { b, n throws(RTPError) in try sender.unprotectRTP(b, length: n) } } == 2)
    }

    @Test func aWrongKeyFailsAuthenticationAndARekeyRecovers() throws {
        var sender = try SRTPContext(key: Self.key(.aesCM128HmacSHA1_80, seed: 1), direction: .sender)
        var other = try SRTPContext(key: Self.key(.aesCM128HmacSHA1_80, seed: 2), direction: .receiver)
        let packet = plainRTPPacket(seq: 1, payload: [1, 2, 3, 4])
        let protected = try srtpInPlace(packet) { b, n throws(RTPError) in try sender.protectRTP(b, length: n) }
        #expect(status { () throws(RTPError) in _ = try srtpInPlace(protected) { b, n throws(RTPError) in try other.unprotectRTP(b, length: n) } } == 7)

        var rng = SeededRandom(seed: 2)
        try sender.update(key: SRTPMasterKey.generate(profile: .aesCM128HmacSHA1_80, using: &rng))
        let next = try srtpInPlace(plainRTPPacket(seq: 2, payload: [5])) { b, n throws(RTPError) in try sender.protectRTP(b, length: n) }
        #expect(try srtpInPlace(next) { b, n throws(RTPError) in try other.unprotectRTP(b, length: n) } == plainRTPPacket(seq: 2, payload: [5]))
        #expect(throws: RTPError.self) {
            try sender.update(key: SRTPMasterKey.generate(profile: .aeadAES128GCM))
        }
    }

    @Test func trailerSizesMatchTheProfiles() {
        #expect(SRTPProfile.aesCM128HmacSHA1_80.rtpTrailerBytes == 10)
        #expect(SRTPProfile.aesCM128HmacSHA1_80.rtcpTrailerBytes == 14)
        #expect(SRTPProfile.aeadAES128GCM.rtpTrailerBytes == 16)
        #expect(SRTPProfile.aeadAES128GCM.rtcpTrailerBytes == 20)
        #expect(SRTPProfile.aesCM128HmacSHA1_80.keyingMaterialBytes == 30)
        #expect(SRTPProfile.aeadAES128GCM.keyingMaterialBytes == 28)
        #expect(SRTPProfile(name: "AEAD_AES_128_GCM") == .aeadAES128GCM)
        #expect(SRTPProfile(name: "AES_CM_128_HMAC_SHA1_32") == nil)
        #expect(SRTPContext.libraryVersion.hasPrefix("libsrtp2"))
    }
}
