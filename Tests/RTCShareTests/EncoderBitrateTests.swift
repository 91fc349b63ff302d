@testable import RTCShare
import Testing

/// The encoder's ask from the network target: the transport's measured overhead off, never
/// under half the target.
@Suite struct EncoderBitrateTests {
    @Test func withNothingMeasuredTheEncoderIsAskedForTheTarget() {
        #expect(EncoderBitrate().askKbps(target: 800) == 800)
        var e = EncoderBitrate()
        e.second(encodedKbps: 700, sentKbps: nil)  // no network output (a file)
        #expect(e.askKbps(target: 800) == 800)
    }

    @Test func theTransportsOverheadComesOffTheTarget() {
        var e = EncoderBitrate()
        // 60 kbit/s of audio and headers on top of what the encoder made, three seconds.
        for _ in 0..<3 { e.second(encodedKbps: 700, sentKbps: 760) }
        #expect(e.overheadKbps > 50 && e.overheadKbps <= 60)
        #expect(e.askKbps(target: 800) <= 750 && e.askKbps(target: 800) >= 740)
        // The overhead goes away (audio stopped): the ask comes back.
        for _ in 0..<12 { e.second(encodedKbps: 700, sentKbps: 700) }
        #expect(e.askKbps(target: 800) >= 799)
    }

    @Test func theAskNeverFallsUnderHalfTheTarget() {
        var e = EncoderBitrate()
        for _ in 0..<10 { e.second(encodedKbps: 100, sentKbps: 900) }
        #expect(e.askKbps(target: 800) == 400)
        #expect(e.askKbps(target: 1) == 1)
    }
}
