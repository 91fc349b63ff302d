import RTCShare
import RTCShareIO
import RTCShareRTP
import RTCShareReceive
import Testing

/// Marker accounting with a fake clock: repeats, gaps, late fills, freezes, latency.
@Suite struct FrameMarkerStatisticsTests {
    static func frame(_ s: inout FrameMarkerStatistics, _ counter: UInt32, at now: Int64, latency: Int64 = 10_000) {
        s.frameDecoded(marker: (counter, UInt32(truncatingIfNeeded: now - latency)), now: now)
    }

    @Test func repeatsAreCountedAndNotTimed() {
        var s = FrameMarkerStatistics()
        Self.frame(&s, 7, at: 1_000_000)
        Self.frame(&s, 7, at: 1_050_000, latency: 900_000)
        Self.frame(&s, 8, at: 1_100_000)
        #expect(s.frames == 3 && s.repeated == 1 && s.skipped == 0)
        #expect(s.latency.count == 2)
        #expect(s.latency.percentile(99) == 10_100)
    }

    @Test func gapsAreLostUntilFilled() {
        var s = FrameMarkerStatistics()
        var t: Int64 = 1_000_000
        for c: UInt32 in [1, 2, 5, 3, 6] {
            Self.frame(&s, c, at: t)
            t += 33_000
        }
        #expect(s.skipped == 1)  // 4 never came; 3 came late
        #expect(s.outOfOrder == 1)
        #expect(s.highestCounter == 6)
    }

    @Test func counterWrapIsNotAGap() {
        var s = FrameMarkerStatistics()
        Self.frame(&s, UInt32.max, at: 1_000_000)
        Self.frame(&s, 0, at: 1_033_000)
        #expect(s.skipped == 0 && s.outOfOrder == 0)
    }

    @Test func gapsOfMoreThan200MillisecondsAreFreezes() {
        var s = FrameMarkerStatistics(freezeThresholdMicroseconds: 200_000)
        Self.frame(&s, 1, at: 1_000_000)
        Self.frame(&s, 2, at: 1_200_000)
        Self.frame(&s, 3, at: 1_450_000)
        #expect(s.freezes == 1)
        #expect(s.freezeMicroseconds == 250_000)
    }

    /// With a settle time, the gaps ending that long after the first frame are counted apart:
    /// a freeze at the start stays in the whole run's figures only.
    @Test func freezesAfterTheSettleTimeAreCountedApart() {
        var s = FrameMarkerStatistics(settleMicroseconds: 3_000_000)
        var t: Int64 = 10_000_000
        s.frameDecoded(marker: nil, now: t)
        t += 900_000; s.frameDecoded(marker: nil, now: t)  // a start freeze, ends at 0.9 s
        for _ in 0..<40 { t += 50_000; s.frameDecoded(marker: nil, now: t) }  // to 2.9 s
        t += 400_000; s.frameDecoded(marker: nil, now: t)  // ends at 3.3 s: after
        t += 50_000; s.frameDecoded(marker: nil, now: t)
        #expect(s.longestGapMicroseconds == 900_000)
        #expect(s.freezes == 2)
        #expect(s.longestGapAfterSettleMicroseconds == 400_000)
        #expect(s.freezesAfterSettle == 1)
        // Without one, nothing is counted apart.
        let plain = FrameMarkerStatistics()
        #expect(plain.longestGapAfterSettleMicroseconds == nil && plain.freezesAfterSettle == 0)
    }

    @Test func unreadableMarkersAreCountedAsFrames() {
        var s = FrameMarkerStatistics()
        s.frameDecoded(marker: nil, now: 1)
        #expect(s.frames == 1 && s.unreadable == 1 && s.latency.count == 0)
    }

    @Test func latencyOfAnotherHostsClockIsNotRecorded() {
        var s = FrameMarkerStatistics()
        // Capture time "after" now: modulo 2^32 that is ~71 minutes, not a latency.
        s.frameDecoded(marker: (1, 2_000_000), now: 1_000_000)
        #expect(s.latency.count == 0)
    }

    @Test func histogramPercentiles() {
        var h = LatencyHistogram()
        #expect(h.percentile(50) == nil)
        for ms in 1...100 { h.record(microseconds: Int64(ms) * 1_000 - 50) }
        #expect(h.percentile(50) == 50_000)
        #expect(h.percentile(99) == 99_000)
        h.record(microseconds: 5_000_000)
        #expect(h.percentile(100) == 5_000_000)
    }

    @Test func configurationFromTheSendersSDP() throws {
        let text = """
            v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=rtcshare\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r
            m=video 5004 RTP/SAVP 96 97\r\na=rtpmap:96 VP8/90000\r\na=rtpmap:97 rtx/90000\r
            a=fmtp:97 apt=96\r\na=ssrc-group:FID 111 222\r\na=rtcp-mux\r
            a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:0nZppv5MJVR1qZXXzChgFYjTMG/Inj0AeRrqcNAV\r
            a=ssrc:111 cname:x\r\na=ssrc:222 cname:x\r
            m=audio 5006 RTP/SAVP 111\r\na=rtpmap:111 opus/48000/2\r\na=fmtp:111 minptime=10;useinbandfec=1\r
            a=rtcp-mux\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:0nZppv5MJVR1qZXXzChgFYjTMG/Inj0AeRrqcNAV\r
            a=ssrc:333 cname:x\r\n
            """
        let c = try ReceiveConfiguration(sessionDescription: SessionDescription.parse(text), host: "127.0.0.1")
        #expect(c.videoListen.port == 5004 && c.audioListen?.port == 5006)
        #expect(c.protection?.profile == .aesCM128HmacSHA1_80)
        #expect(c.videoPayloadType == 96 && c.rtxPayloadType == 97 && c.audioPayloadType == 111)
        #expect(c.videoSSRC == 111 && c.rtxSSRC == 222 && c.audioSSRC == 333)
        #expect(c.audioChannels == 1)
    }

    @Test func transportWideFeedbackIsSentOnlyWhenTheSDPAsksForIt() throws {
        let head = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=x\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\n"
        let extmap = "a=extmap:5 \(TransportSequenceNumber.uri)\r\n"
        let asked = try ReceiveConfiguration(sessionDescription: SessionDescription.parse(
            head + "a=rtcp-fb:96 transport-cc\r\n" + extmap), host: "127.0.0.1")
        #expect(asked.transportSequenceID == 5 && asked.transport.transportSequenceID == 5)
        // The extension without the feedback (an older sender), or the feedback without it: none.
        let noFeedback = try ReceiveConfiguration(sessionDescription: SessionDescription.parse(head + extmap), host: "127.0.0.1")
        #expect(noFeedback.transportSequenceID == nil)
        let noExtension = try ReceiveConfiguration(sessionDescription: SessionDescription.parse(
            head + "a=rtcp-fb:96 transport-cc\r\n"), host: "127.0.0.1")
        #expect(noExtension.transportSequenceID == nil)
    }

    @Test func sdpWithoutAKeyForSAVPIsRefused() throws {
        let text = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=x\r\nt=0 0\r\nm=video 5004 RTP/SAVP 96\r\na=rtpmap:96 VP8/90000\r\n"
        #expect(throws: ShareError.self) {
            try ReceiveConfiguration(sessionDescription: SessionDescription.parse(text), host: "127.0.0.1")
        }
    }
}
