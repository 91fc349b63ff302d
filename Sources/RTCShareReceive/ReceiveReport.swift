/// What `rtcshare receive` saw, for the summary line and `--stats-json`.
///
/// Frames are counted from the frame marker of decoded pictures (see `FrameMarkerStatistics`).
/// `framesLost` are encoded frames the sender sent that were not decoded: gaps in the VP8
/// PictureIDs (a frame given up for a missing packet, or never seen) plus frames that arrived
/// but could not be decoded (corrupt, or waiting for a keyframe). `framesSkipped` are gaps in
/// the marker counters: source frames never seen, which includes the frames the sender itself
/// thinned or dropped before encoding (its summary's "dropped … too fast") as well as the lost
/// ones. Packets are
/// video RTP packets as they arrived (retransmissions, plain or RTX, included; those that
/// answered a NACK are also counted as recovered); `packetsLost` are those the jitter buffer
/// gave up.
public struct ReceiveReport: Sendable, Equatable {
    // Frames (decoded VP8 pictures and their markers).
    public var frames: UInt64 = 0
    public var framesLost: UInt64 = 0
    public var framesSkipped: Int64 = 0
    public var framesRepeated: UInt64 = 0
    public var framesOutOfOrder: UInt64 = 0
    public var markersUnreadable: UInt64 = 0
    public var freezes: UInt64 = 0
    public var freezeMicroseconds: Int64 = 0
    /// The longest wall-clock gap between two decoded frames.
    public var longestFreezeMicroseconds: Int64 = 0
    /// With `--settle`: the longest freeze and the freezes ending that long after the first frame.
    public var settleMicroseconds: Int64?
    public var longestFreezeAfterSettleMicroseconds: Int64?
    public var freezesAfterSettle: UInt64 = 0
    public var latencyP50Microseconds: Int64?
    public var latencyP99Microseconds: Int64?
    public var latencyMaxMicroseconds: Int64?
    public var width = 0
    public var height = 0
    /// Frames assembled but not decodable (corrupt, or waiting for a keyframe).
    public var framesUndecodable: UInt64 = 0
    /// Frames the depacketizer gave up (a packet missing).
    public var framesIncomplete: UInt64 = 0
    /// VP8 frames decoded into the references and marked not to be shown (a progressive
    /// keyframe's sweep): no picture, and their markers count as skipped.
    public var framesHidden: UInt64 = 0
    public var keyframes: UInt64 = 0
    // Video packets.
    public var packets: UInt64 = 0
    public var packetsLost: UInt64 = 0
    public var packetsNacked: UInt64 = 0
    public var packetsRecovered: UInt64 = 0
    public var packetsDuplicate: UInt64 = 0
    public var packetsLate: UInt64 = 0
    public var nackPackets: UInt64 = 0
    public var plis: UInt64 = 0
    public var bytes: UInt64 = 0
    /// Bytes of video packets that arrived as repairs (RTX or a resend answering a NACK).
    public var bytesRetransmitted: UInt64 = 0
    /// Bytes the missing packets are estimated to have held: packets that went missing (a
    /// higher number arrived first, reordering excluded) times the mean video packet size.
    public var bytesLostEstimate: UInt64 = 0
    /// Video numbers asked for early — from a transport-wide gap (`TransportGapInference`) or a
    /// frame whose last packet did not follow (`UnfinishedFrameWatch`, `unfinishedFrames` of
    /// them) — and those that then arrived unasked (not lost) or were dropped never shown to
    /// exist.
    public var packetsInferredMissing: UInt64 = 0
    public var unfinishedFrames: UInt64 = 0
    public var inferredUnasked: UInt64 = 0
    public var inferredDropped: UInt64 = 0
    public var jitterMicroseconds: Int64 = 0
    /// The round trip learnt from NACK answers and its variation (nil: none measured).
    public var nackRoundTripMicroseconds: Int64?
    public var nackRoundTripVariationMicroseconds: Int64?
    // Audio.
    public var audioPackets: UInt64 = 0
    public var audioDecoded: UInt64 = 0
    public var audioConcealed: UInt64 = 0
    /// Lost audio packets rebuilt from the next packet's in-band FEC (not concealed).
    public var audioRecoveredByFEC: UInt64 = 0
    // Transport.
    public var srtpFailures: UInt64 = 0
    public var malformed: UInt64 = 0
    public var rtcpReceived: UInt64 = 0
    public var sendersReportsReceived: UInt64 = 0
    public var byeReceived = false
    public var y4mSkippedFrames: UInt64 = 0
    public var elapsedMicroseconds: Int64 = 0
    /// Why the receiver stopped: "duration", "idle", "stopped", "bye".
    public var stopReason = "stopped"
    /// Writing `--y4m` / `--audio-output` failed (the counts are still valid).
    public var outputError: String?

    public init() {}

    /// Datagrams came but not one could be authenticated: the key or profile is not the
    /// sender's (the receiver says so and exits non-zero).
    public var nothingDecrypted: Bool {
        srtpFailures > 0 && packets == 0 && audioPackets == 0 && rtcpReceived == 0
    }

    private static func ms(_ us: Int64?) -> String {
        guard let us else { return "-" }
        let tenths = (us + 50) / 100
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// The one machine-greppable line `rtcshare receive` ends with.
    public var summaryLine: String {
        "rtcshare receive: frames \(frames) lost \(framesLost) skipped \(framesSkipped) repeated \(framesRepeated) "
            + "out-of-order \(framesOutOfOrder) freezes \(freezes) longest \(Self.ms(longestFreezeMicroseconds)) ms "
            + "latency p50 \(Self.ms(latencyP50Microseconds)) ms p99 \(Self.ms(latencyP99Microseconds)) ms; "
            + "packets \(packets) lost \(packetsLost) nacked \(packetsNacked) recovered \(packetsRecovered); "
            + "bytes retransmitted \(bytesRetransmitted) lost ~\(bytesLostEstimate); "
            + "plis \(plis); audio packets \(audioPackets) concealed \(audioConcealed) fec \(audioRecoveredByFEC)"
    }

    /// The same numbers (and a few more) as one JSON object.
    public var json: String {
        func num(_ us: Int64?) -> String { us.map { Self.ms($0) } ?? "null" }
        return "{\"frames\":\(frames),\"frames_lost\":\(framesLost),\"frames_skipped\":\(framesSkipped),\"frames_repeated\":\(framesRepeated)"
            + ",\"frames_out_of_order\":\(framesOutOfOrder),\"markers_unreadable\":\(markersUnreadable)"
            + ",\"freezes\":\(freezes),\"freeze_ms\":\(Self.ms(freezeMicroseconds))"
            + ",\"longest_freeze_ms\":\(Self.ms(longestFreezeMicroseconds))"
            + (settleMicroseconds.map {
                ",\"settled\":{\"after_s\":\(Self.ms($0 / 1000)),\"longest_freeze_ms\":\(num(longestFreezeAfterSettleMicroseconds))"
                    + ",\"freezes\":\(freezesAfterSettle)}"
            } ?? "")
            + ",\"latency_p50_ms\":\(num(latencyP50Microseconds)),\"latency_p99_ms\":\(num(latencyP99Microseconds))"
            + ",\"latency_max_ms\":\(num(latencyMaxMicroseconds)),\"width\":\(width),\"height\":\(height)"
            + ",\"keyframes\":\(keyframes),\"frames_incomplete\":\(framesIncomplete)"
            + ",\"frames_undecodable\":\(framesUndecodable),\"frames_hidden\":\(framesHidden)"
            + ",\"packets\":\(packets),\"packets_lost\":\(packetsLost),\"packets_nacked\":\(packetsNacked)"
            + ",\"packets_recovered\":\(packetsRecovered),\"packets_duplicate\":\(packetsDuplicate)"
            + ",\"packets_late\":\(packetsLate),\"nack_packets\":\(nackPackets),\"plis\":\(plis)"
            + ",\"packets_inferred_missing\":\(packetsInferredMissing),\"inferred_unasked\":\(inferredUnasked)"
            + ",\"unfinished_frames\":\(unfinishedFrames)"
            + ",\"inferred_dropped\":\(inferredDropped)"
            + ",\"bytes\":\(bytes),\"bytes_retransmitted\":\(bytesRetransmitted)"
            + ",\"bytes_lost_estimate\":\(bytesLostEstimate),\"jitter_ms\":\(Self.ms(jitterMicroseconds))"
            + ",\"nack_rtt_ms\":\(num(nackRoundTripMicroseconds)),\"nack_rtt_var_ms\":\(num(nackRoundTripVariationMicroseconds))"
            + ",\"audio_packets\":\(audioPackets),\"audio_decoded\":\(audioDecoded)"
            + ",\"audio_concealed\":\(audioConcealed),\"audio_fec_recovered\":\(audioRecoveredByFEC)"
            + ",\"srtp_failures\":\(srtpFailures)"
            + ",\"malformed\":\(malformed),\"rtcp_received\":\(rtcpReceived)"
            + ",\"sender_reports\":\(sendersReportsReceived),\"bye\":\(byeReceived)"
            + ",\"y4m_skipped_frames\":\(y4mSkippedFrames),\"elapsed_s\":\(Self.ms(elapsedMicroseconds / 1000))"
            + ",\"stop_reason\":\"\(stopReason)\"}"
    }
}
