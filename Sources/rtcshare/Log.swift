import Glibc
import RTCShare

/// Lines for the user on standard error: events as they happen, a status line a second on a
/// terminal (elsewhere, a journal or a file, a stats line a minute), and a summary at the end;
/// each line has a level (`StandardError`). `--stats-json` gets one JSON object a second.
final class Log: @unchecked Sendable {
    // Sendable: events come from the pipeline thread only; `fail` and `line` are plain writes.
    let quiet: Bool
    private let statusLines: Bool
    private var statsFile: Int32 = -1
    private var previous: ShareProgress?
    /// Where the current minute's stats line counts from (not on a terminal; nil: the start).
    private var minuteStart: ShareProgress?
    static let statsLineInterval = MediaDuration.seconds(60)

    init(quiet: Bool, statusLines: Bool? = nil, statsJSONPath: String? = nil) {
        self.quiet = quiet
        self.statusLines = !quiet && (statusLines ?? StandardError.isTerminal)
        if let path = statsJSONPath {
            statsFile = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            if statsFile < 0 { fail("cannot write --stats-json \(path): \(String(cString: strerror(errno)))") }
        }
    }

    deinit { if statsFile >= 0 { close(statsFile) } }

    func event(_ event: ShareEvent) {
        if case .progress(let p) = event {
            progress(p)
            return
        }
        guard !quiet else { return }
        switch event {
        case .starting(let source, let output, let fps, let codec):
            line("rtcshare: starting: \(source) -> \(codec) \(output) at \(fps) fps")
        case .started, .progress:
            break
        case .paused:
            line("rtcshare: paused", level: .notice)
        case .resumed:
            line("rtcshare: resumed", level: .notice)
        case .sourceStalled(let attempt):
            line("rtcshare: source stalled; restarting it (attempt \(attempt))", level: .warning)
        case .sourceRecovered(let ms):
            line("rtcshare: source recovered after \(ms) ms", level: .notice)
        case .notice(let text):
            line("rtcshare: \(text)", level: .notice)
        case .receiverSilent(let output, let ms):
            line("rtcshare: warning: no RTCP from the receiver (\(output)) for \(ms / 1000) s: "
                 + "is it running, at that address, with the same key?", level: .warning)
        case .memoryPressure(let resident, let limit, let step):
            let mib = { (bytes: Int) -> String in let tenths = bytes * 10 / 1_048_576; return "\(tenths / 10).\(tenths % 10)" }
            line("rtcshare: warning: resident memory \(mib(resident)) MiB reached the \(mib(limit)) MiB line: \(step)",
                 level: .warning)
        case .receiverHeardAgain(let output, let ms):
            line("rtcshare: the receiver (\(output)) is reporting again after \(ms / 1000) s of silence", level: .notice)
        case .receiverLeft(let output):
            line("rtcshare: the receiver (\(output)) left (RTCP BYE); still sending", level: .notice)
        case .reconnecting(let output, let attempt, let reason, let ms):
            line("rtcshare: reconnecting (\(output)): \(reason); attempt \(attempt) in \(String(format1: Double(ms) / 1000)) s",
                 level: .warning)
        case .reconnected(let output, let ms):
            line("rtcshare: reconnected (\(output)) \(String(format1: Double(ms) / 1000)) s after the connection was lost",
                 level: .notice)
        case .finished(let reason):
            if case .failed = reason { line("rtcshare: finished: \(reason)", level: .error) }
            else { line("rtcshare: finished: \(reason)", level: .notice) }
        }
    }

    private func progress(_ p: ShareProgress) {
        let last = previous
        previous = p
        guard p.stats.elapsed > (last?.stats.elapsed ?? .zero) else { return }
        let (fps, kbps) = Self.rates(p, since: last)
        let t = p.transport
        if statusLines {
            line("rtcshare: " + Self.statusText(p, fps: fps, kbps: kbps))
        } else if !quiet {
            // Not a person at a terminal: a journal or a file keeps a line a minute, over the minute.
            // At each whole minute of the share (60 s, 120 s, …), over the minute before.
            let interval = Self.statsLineInterval.microseconds
            let minute = p.stats.elapsed.microseconds / interval
            if minute > (minuteStart?.stats.elapsed.microseconds ?? 0) / interval {
                let (fps, kbps) = Self.rates(p, since: minuteStart)
                line("rtcshare: stats: " + Self.statusText(p, fps: fps, kbps: kbps))
                minuteStart = p
            }
        }
        if statsFile >= 0 {
            var json = "{\"t\":\(String(format1: Double(p.stats.elapsed.microseconds) / 1_000_000))"
                + ",\"codec\":\"\(p.stats.videoCodec.rawValue)\",\"frames\":\(p.stats.encodedFrames),\"fps\":\(String(format1: fps)),\"kbps\":\(kbps)"
                + ",\"target_kbps\":\(p.stats.targetBitrateKbps),\"encoder_kbps\":\(p.stats.encoderBitrateKbps),\"target_fps\":\(p.stats.targetFramesPerSecond)"
                + ",\"dropped_by_encoder\":\(p.stats.droppedByEncoder),\"skipped_over_budget\":\(p.stats.skippedOverBudget)"
                + ",\"coded_against_drop\":\(p.stats.codedAgainstDrop)"
                + ",\"keyframes\":\(p.stats.keyframes),\"repeats\":\(p.stats.repeatedFrames),\"wakeups\":\(p.stats.wakeups)"
                + ",\"not_encoded_connecting\":\(p.stats.notEncodedConnecting)"
                + ",\"source_frames\":\(p.stats.sourceFrames),\"restarts\":\(p.stats.sourceRestarts)"
                + ",\"source_rows\":\(p.stats.sourceRowsConverted)"
                + ",\"reconnects\":\(p.stats.reconnects),\"reconnecting\":\(p.stats.reconnecting)"
                + ",\"audio_packets\":\(p.stats.audioPackets),\"audio_fec_loss_pct\":\(p.stats.audioExpectedLossPercent)"
                + ",\"hidden_frames\":\(p.stats.hiddenFrames)"
            if let t {
                json += ",\"packets\":\(t.packetsSent),\"bytes\":\(t.bytesSent),\"send_drops\":\(t.sendDrops)"
                    + ",\"frames_dropped_connecting\":\(t.framesDroppedConnecting)"
                    + ",\"rtt_ms\":" + (t.roundTripMicroseconds.map { String(format1: Double($0) / 1000) } ?? "null")
                    + ",\"fraction_lost\":" + (t.fractionLost.map { String(format1: $0 * 1000) + "e-3" } ?? "null")
                    + ",\"cumulative_lost\":\(t.cumulativeLost),\"nacks\":\(t.nacksReceived)"
                    + ",\"retransmitted\":\(t.packetsRetransmitted),\"retransmitted_bytes\":\(t.bytesRetransmitted)"
                    + ",\"retransmits_suppressed\":\(t.retransmitsSuppressed),\"retransmits_over_budget\":\(t.retransmitsOverBudget)"
                    + ",\"retransmits_missed\":\(t.retransmitsMissed),\"nacks_ahead_of_sent\":\(t.nacksAheadOfSent)"
                    + ",\"resends_doubled\":\(t.resendsDoubled),\"retransmits_deferred\":\(t.retransmitsDeferred)"
                    + ",\"deferred_retransmitted\":\(t.deferredRetransmitted)"
                    + ",\"pli\":\(t.pliReceived),\"fir\":\(t.firReceived)"
                    + ",\"remb_kbps\":" + (t.rembKbps.map(String.init) ?? "null")
                    + ",\"delay_based_kbps\":" + (t.delayBasedKbps.map(String.init) ?? "null")
                    + ",\"transport_feedback\":\(t.transportFeedbackReceived)"
                    + ",\"paced_expired\":\(t.pacedPacketsExpired),\"paced_sent_early\":\(t.pacedSentEarly)"
                    + ",\"feedback_returns\":\(t.feedbackReturns),\"frames_held_silent\":\(t.framesHeldWhileSilent)"
            }
            json += ",\"rss_bytes\":\(p.residentBytes),\"peak_rss_bytes\":\(p.peakResidentBytes)}\n"
            _ = json.withCString { write(statsFile, $0, strlen($0)) }
        }
    }

    /// Frames a second and video kbit/s between `last` (the start when nil) and `p`.
    private static func rates(_ p: ShareProgress, since last: ShareProgress?) -> (Double, Int) {
        let dt = Double((p.stats.elapsed - (last?.stats.elapsed ?? .zero)).microseconds) / 1_000_000
        guard dt > 0 else { return (0, 0) }
        let fps = Double(p.stats.encodedFrames - (last?.stats.encodedFrames ?? 0)) / dt
        let videoBits = Double(p.stats.encodedBytes - (last?.stats.encodedBytes ?? 0)) * 8
        return (fps, Int(videoBits / 1000 / dt))
    }

    /// The status line after "rtcshare: ": time, rates, feedback counters, memory.
    private static func statusText(_ p: ShareProgress, fps: Double, kbps: Int) -> String {
        var text = "\(Int(Double(p.stats.elapsed.microseconds) / 1_000_000)) s  "
            + "\(String(format1: fps)) fps  \(kbps)/\(p.stats.targetBitrateKbps) kbit/s"
            + (p.stats.videoCodec == .vp8 ? "" : " \(p.stats.videoCodec)") + "  kf \(p.stats.keyframes)"
        if let t = p.transport {
            text += "  rtt " + (t.roundTripMicroseconds.map { "\($0 / 1000) ms" } ?? "-")
            text += "  loss " + (t.fractionLost.map { "\(String(format1: $0 * 100))%" } ?? "-")
            text += "  nack \(t.nacksReceived)/\(t.packetsRetransmitted)  pli \(t.pliReceived + t.firReceived)"
        }
        if p.stats.audioPackets > 0 { text += "  audio \(p.stats.audioPackets)" }
        text += "  mem \(p.residentBytes >> 20) MiB"
        if p.stats.reconnecting { text += "  RECONNECTING" }
        return text
    }

    func summary(_ s: ShareStats, plan: MemoryPlan, transport: TransportStats? = nil) {
        guard !quiet else { return }
        let seconds = Double(s.elapsed.microseconds) / 1_000_000
        let kbps = seconds > 0 ? Double(s.encodedBytes) * 8 / 1000 / seconds : 0
        var text = "rtcshare: \(s.encodedFrames) frames in \(String(format1: seconds)) s (\(s.repeatedFrames) repeats, "
            + "\(s.keyframes) keyframes), \(Int(kbps)) kbit/s; source \(s.sourceFrames) frames, "
            + "dropped \(s.droppedTooFast) too fast + \(s.droppedByRing) queue + \(s.droppedByEncoder) encoder "
            + "(\(s.skippedOverBudget) over its budget; \(s.codedAgainstDrop) coded against its drop); "
            + "restarts \(s.sourceRestarts)"
        if s.reconnects > 0 { text += "; reconnected \(s.reconnects) times" }
        if s.notEncodedConnecting > 0 { text += "; \(s.notEncodedConnecting) not encoded while connecting" }
        if s.audioPackets > 0 { text += "; audio \(s.audioPackets) packets" }
        if s.bitrateChanges > 0 { text += "; bitrate changed \(s.bitrateChanges) times, last \(s.targetBitrateKbps) kbit/s" }
        if let t = transport {
            text += "; sent \(t.packetsSent) packets, \(t.nacksReceived) NACKs, \(t.packetsRetransmitted) resent, "
                + "\(t.pliReceived + t.firReceived) PLI/FIR"
        }
        if s.hiddenFrames > 0 { text += "; \(s.hiddenFrames) hidden while keyframes swept in" }
        text += "; peak RSS \(PeakMemory.residentBytes() >> 20) MiB"
        line(text)
    }

    /// One `rtcshare: error:` line, then exit with `status` (see `ExitStatus`).
    func fail(_ message: String, status: ExitStatus = .failure) -> Never {
        line("rtcshare: error: \(message)", level: .error)
        exit(status.rawValue)
    }

    /// `fail` with the status of a share's failure.
    func fail(_ error: ShareError) -> Never {
        fail(error.description, status: ExitStatus(error.failureClass))
    }

    func line(_ text: String, level: LogLevel = .info) {
        StandardError.write(text, level: level)
    }
}
