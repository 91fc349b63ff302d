import RTCShareCore
import RTCShareMedia

/// The audio side of a share: an `AudioInput` (tone, file, producer) → channel mix to the
/// encoder's channel count → resampling to 48 kHz (libspeexdsp) → 20 ms frames → Opus.
/// `pump(at:)` runs on the pipeline thread between video frames and emits every packet due.
///
/// Timing. Frame k's capture time is `origin + k x 20 ms`, where the origin is the capture
/// time of the first sample the input delivered; its media timestamp is the origin's 48 kHz
/// tick plus k x 960 (no random offset; `AudioFrameClock`).
/// - A paced input (tone, WAV file) delivers exactly the samples due by `now`; a frame goes
///   out as soon as it is complete, so packets follow the capture clock with no added delay.
///   At the end of a file the last partial frame is padded with silence, one line is logged,
///   and audio stops; the share goes on.
/// - A live input (ipc) delivers what the producer sent. Once the first samples arrived the
///   Opus clock runs on its own: frame k goes out at `origin + (k+1) x 20 ms + liveLatency`
///   with whatever has arrived for it, padded with silence. So a producer that stalls, or is
///   killed and restarted, leaves silence in the stream rather than a hole, and the stream's
///   timestamps stay continuous (receivers and the Ogg file see one unbroken stream). A
///   producer running ahead of the clock cannot grow the delay: beyond `liveMaximumBuffered`
///   the oldest samples are dropped and counted. If the pipeline itself falls far behind (a
///   suspended process), the clock skips the frames it can no longer send on time.
///
/// Memory: the Opus state, the framing ring and every scratch buffer come from the share's
/// `MemoryBudget` at init (`budgetBytes`); libspeexdsp's small state is on the heap, made when
/// the first non-48 kHz samples arrive and again only if a producer changes rate (budgeted by
/// measurement, `Resampler.plannedHeapBytes`). Nothing is allocated per packet.
public final class AudioPipeline<Input: AudioInput>: AudioPath {
    public let name: String
    /// The encoder's channel count (1 or 2).
    public let channels: Int
    /// Samples at 48 kHz a decoder drops at the start (the encoder's look-ahead).
    public let preSkip: Int
    public let input: Input

    /// How long a live input's frame waits for its samples after its end.
    public static var liveLatency: MediaDuration { .milliseconds(60) }
    /// Most 48 kHz frames (per channel) a live input may have waiting: latency plus 40 ms.
    static var liveMaximumBuffered: Int { 4_800 }
    /// The framing ring: 200 ms.
    static var ringFrames: Int { 9_600 }
    /// Input frames mixed and resampled per step, and the resampler's output room per step.
    static var sliceFrames: Int { 480 }
    static var resampledFrames: Int { 2_048 }

    private var encoder: OpusEncoder
    private var resampler: Resampler
    private var framer: AudioFramer
    private let scratch: BudgetBlock
    private let mixBuffer: UnsafeMutableBufferPointer<Int16>
    private let resampledBuffer: UnsafeMutableBufferPointer<Int16>
    private let frameBuffer: UnsafeMutableBufferPointer<Int16>
    private let packetBuffer: UnsafeMutableRawBufferPointer
    private var clock: AudioFrameClock?
    private var inputEnded = false
    private var finished = false
    private var failure: ShareError?
    private let log: (String) -> Void

    /// Frames (48 kHz, per channel) of silence sent in place of missing input.
    public private(set) var silentFrames = 0
    /// Input chunks refused (a channel count or rate out of range).
    public private(set) var refusedChunks = 0
    /// Frames dropped because a live input ran ahead, or skipped because the pipeline fell behind.
    public var droppedFrames: Int { framer.droppedFrames + skippedFrames }
    private var skippedFrames = 0
    /// The loss the encoder prepares for, from the receiver's reports on the audio stream.
    public private(set) var lossProtection = OpusLossProtection()
    public var expectedLossPercent: Int { lossProtection.percent }

    /// One receiver report on the audio stream: the encoder's in-band FEC follows the loss.
    public func receiverReport(fractionLost: UInt8) {
        guard let percent = lossProtection.receiverReport(fractionLost: fractionLost) else { return }
        do { try encoder.setExpectedLoss(percent: percent) } catch {
            log("audio: \(error)")  // the level is always in range: not expected
        }
    }

    /// Budget bytes of everything but the input's own buffer, for `channels`.
    public static func budgetBytes(channels: Int) -> Int {
        OpusEncoder.stateBytes(channels: channels) + 64
            + AudioFramer.budgetBytes(channels: channels, capacityFrames: ringFrames) + 64
            + scratchBytes(channels: channels) + 64
    }

    private static func scratchBytes(channels: Int) -> Int {
        (sliceFrames + resampledFrames + AudioFramer.frameSamples) * channels * 2 + OpusEncoder.maximumPacketBytes + 64
    }

    /// Opens the Opus encoder at `bitrate` bit/s and reserves everything from `budget`.
    /// `log` gets one line when a file input ends.
    public init(input: Input, budget: MemoryBudget, bitrate: Int,
                log: @escaping (String) -> Void = { _ in }) throws(ShareError) {
        let channels = input.encoderChannels
        do {
            encoder = try OpusEncoder(budget: budget, channels: channels, bitrate: bitrate, application: .audio)
            framer = try AudioFramer(budget: budget, channels: channels, capacityFrames: Self.ringFrames)
            let start = input.nominalSampleRate > 0 ? input.nominalSampleRate : OpusEncoder.sampleRate
            resampler = try Resampler(inputRate: start, outputRate: OpusEncoder.sampleRate, channels: channels)
        } catch {
            throw .doesNotFit("audio: \(error)")
        }
        do {
            scratch = try BudgetBlock(budget: budget, byteCount: Self.scratchBytes(channels: channels), alignment: 64)
        } catch {
            throw .doesNotFit("audio buffers: \(error)")
        }
        var at = scratch.base
        func carve(_ samples: Int) -> UnsafeMutableBufferPointer<Int16> {
            let b = UnsafeMutableBufferPointer(start: at.bindMemory(to: Int16.self, capacity: samples), count: samples)
            at += samples * 2
            return b
        }
        mixBuffer = carve(Self.sliceFrames * channels)
        resampledBuffer = carve(Self.resampledFrames * channels)
        frameBuffer = carve(AudioFramer.frameSamples * channels)
        packetBuffer = UnsafeMutableRawBufferPointer(start: at, count: OpusEncoder.maximumPacketBytes)
        self.input = input
        self.channels = channels
        self.preSkip = encoder.lookahead
        self.log = log
        name = "\(input.name) -> Opus \(channels == 1 ? "mono" : "stereo") \(bitrate / 1000) kbit/s"
    }

    public var nextWakeup: MediaTime? {
        guard let clock, !finished else { return nil }
        return input.isLive ? clock.nextFrameEnd + Self.liveLatency : clock.nextFrameEnd
    }

    public func pump(at now: MediaTime, emit: (OutgoingAudioPacket) throws(ShareError) -> Void) throws(ShareError) {
        guard !finished else { return }
        if !inputEnded {
            let more = try input.capture(until: now) { samples in accept(samples) }
            if let failure { throw failure }
            inputEnded = !more
        }
        guard clock != nil else {
            if inputEnded { finish() }
            return
        }
        if input.isLive {
            let excess = framer.buffered - Self.liveMaximumBuffered
            if excess > 0 { framer.drop(excess); skippedFrames += excess }
            // Far behind (the process was not scheduled): skip what can no longer be on time.
            let late = now - (clock!.nextFrameEnd + Self.liveLatency)
            if late > .milliseconds(500) {
                let frames = late.microseconds / AudioFrameClock.frameDuration.microseconds
                clock!.skip(frames: frames)
                skippedFrames += Int(frames) * AudioFramer.frameSamples
            }
            while clock!.nextFrameEnd + Self.liveLatency <= now { try emitFrame(emit) }
        } else {
            while framer.hasFullFrame { try emitFrame(emit) }
            if inputEnded {
                if framer.buffered > 0 { try emitFrame(emit) }
                finish()
            }
        }
    }

    private func finish() {
        finished = true
        log("audio: \(input.name) ended; the share goes on without audio")
    }

    /// Encodes the next frame (padded with silence if short) and hands it out.
    private func emitFrame(_ emit: (OutgoingAudioPacket) throws(ShareError) -> Void) throws(ShareError) {
        let real = framer.takeFrame(into: frameBuffer)
        silentFrames += AudioFramer.frameSamples - real
        let n: Int
        do {
            n = try encoder.encode(UnsafeBufferPointer(frameBuffer), into: packetBuffer)
        } catch {
            throw .pipeline("audio encode: \(error)")
        }
        let packet = OutgoingAudioPacket(
            bytes: UnsafeRawBufferPointer(rebasing: packetBuffer[0..<n]), captureTime: clock!.nextCaptureTime,
            mediaTimestamp: clock!.nextMediaTimestamp, samples: AudioFramer.frameSamples, channels: channels)
        clock!.advance()
        try emit(packet)
    }

    /// Mixes, resamples and frames one run of input samples.
    private func accept(_ run: AudioSamples) {
        guard run.channels == 1 || run.channels == 2, Resampler.inputRates.contains(run.sampleRate) else {
            refusedChunks += 1
            return
        }
        if clock == nil { clock = AudioFrameClock(origin: run.captureTime) }
        if run.sampleRate != resampler.inputRate {
            do { try resampler.setInputRate(run.sampleRate) } catch {
                failure = .pipeline("audio resampler: \(error)")
                return
            }
        }
        let frames = run.frames
        var offset = 0
        while offset < frames {
            let n = min(Self.sliceFrames, frames - offset)
            let part = UnsafeBufferPointer(rebasing: run.samples[offset * run.channels..<(offset + n) * run.channels])
            ChannelMix.convert(part, channels: run.channels, into: mixBuffer, channels: channels)
            var used = 0
            while used < n {
                let rest = UnsafeBufferPointer(rebasing: mixBuffer[used * channels..<n * channels])
                let (consumed, produced) = resampler.process(rest, into: resampledBuffer)
                framer.append(UnsafeBufferPointer(rebasing: resampledBuffer[0..<produced * channels]))
                used += consumed
                if consumed == 0 && produced == 0 { break }  // cannot happen; never spin
            }
            offset += n
        }
    }
}
