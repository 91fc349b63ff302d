import Testing
@testable import RTCShareRTP

/// Which transport-wide gaps count as video lost above the newest video packet.
@Suite struct TransportGapInferenceTests {
    @Test func aGapBetweenTwoConsecutiveAudioPacketsAboveTheNewestVideoIsVideoLost() {
        var g = TransportGapInference()
        g.audioArrived(transportSequence: 1, sequenceNumber: 500)
        g.videoArrived(transportSequence: 2, sequenceNumber: 40)
        // 3 (video 41) lost; audio 501 is 4.
        #expect(g.audioArrived(transportSequence: 4, sequenceNumber: 501) == 1)
        // More evidence adds up: 5 and 6 lost before audio 502 at 7.
        #expect(g.audioArrived(transportSequence: 7, sequenceNumber: 502) == 3)
        // Video 44 arrives (8): the count starts again above it.
        g.videoArrived(transportSequence: 8, sequenceNumber: 44)
        #expect(g.missingVideo == 0)
        #expect(g.audioArrived(transportSequence: 9, sequenceNumber: 503) == 0)
    }

    @Test func numbersBetweenAudioPacketsThatAreNotConsecutiveAreNotEvidence() {
        var g = TransportGapInference()
        g.videoArrived(transportSequence: 10, sequenceNumber: 1)
        g.audioArrived(transportSequence: 11, sequenceNumber: 70)
        // Audio 71 lost (12): 13 may be it, so audio 72 at 14 says nothing.
        #expect(g.audioArrived(transportSequence: 14, sequenceNumber: 72) == 0)
        // From 72 on the pair is consecutive again.
        #expect(g.audioArrived(transportSequence: 16, sequenceNumber: 73) == 1)
    }

    @Test func numbersUnderTheNewestVideoAndArrivedResendsAreNotCounted() {
        var g = TransportGapInference()
        g.audioArrived(transportSequence: 100, sequenceNumber: 1)
        g.videoArrived(transportSequence: 101, sequenceNumber: 900)
        // 102 lost (under the newest video once 103 arrives: the ordinary gap's business).
        g.videoArrived(transportSequence: 103, sequenceNumber: 902)
        // A plain resend of 901 (an older number) at 104, RTX at 105: arrived, not video news.
        g.videoArrived(transportSequence: 104, sequenceNumber: 901)
        g.otherArrived(transportSequence: 105)
        #expect(g.audioArrived(transportSequence: 106, sequenceNumber: 2) == 0)
        // 107 lost, then audio.
        #expect(g.audioArrived(transportSequence: 108, sequenceNumber: 3) == 1)
    }

    @Test func theNumbersWrapAndAGapWiderThanTheWindowIsNotLookedAt() {
        var g = TransportGapInference()
        g.audioArrived(transportSequence: 65_533, sequenceNumber: 65_535)
        g.videoArrived(transportSequence: 65_534, sequenceNumber: 65_535)
        #expect(g.audioArrived(transportSequence: 1, sequenceNumber: 0) == 2)  // 65535 and 0 lost
        g.videoArrived(transportSequence: 2, sequenceNumber: 2)
        let far = UInt16(3 + TransportGapInference.window + 1)
        #expect(g.audioArrived(transportSequence: far, sequenceNumber: 1) == 0)
    }
}
