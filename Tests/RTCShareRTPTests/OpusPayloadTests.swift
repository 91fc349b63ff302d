import Testing
@testable import RTCShareRTP

/// RFC 7587: durations from the TOC byte (RFC 6716 §3.1) and the talkspurt marker.
@Suite struct OpusPayloadTests {
    private func samples(_ bytes: [UInt8]) -> Int? { bytes.withUnsafeBytes { OpusPayload.samples(inPacket: $0) } }

    @Test func durationsFromTheTOC() {
        #expect(samples([0x78]) == 960)           // config 15 (hybrid FB 20 ms), code 0: 1 frame
        #expect(samples([0xFC, 0, 0]) == 960)     // config 31 (CELT FB 20 ms), code 0
        #expect(samples([0x08]) == 960)           // config 1 (SILK NB 20 ms)
        #expect(samples([0x18]) == 2880)          // config 3 (SILK NB 60 ms)
        #expect(samples([0x81]) == 240)           // config 16 (CELT 2.5 ms), code 1: 2 frames
        #expect(samples([0x1B, 0x02]) == 5760)    // config 3 (60 ms), code 3, 2 frames = 120 ms
        #expect(samples([0x1B, 0x03]) == nil)     // 180 ms: too long
        #expect(samples([0xFB, 0x00]) == nil)     // code 3 with 0 frames
        #expect(samples([0xFB]) == nil)           // code 3 without its count byte
        #expect(samples([]) == nil)
    }

    @Test func markerOnFirstPacketAndAfterDTXGaps() {
        var m = OpusMarkerTracker()
        // Typed: Swift 6.0 infers the literals' products as Int otherwise.
        let markers = [(UInt32(0xFFFF_FC40), true),  // first
                       (0, false),                    // 0xFFFFFC40 + 960 wraps to 0
                       (960, false),
                       (UInt32(960 * 10), true),      // packets were left out
                       (UInt32(960 * 11), false)].map { ($0.1, m.marker(timestamp: $0.0, samples: 960)) }
        for (expected, got) in markers { #expect(got == expected) }
    }
}
