import Foundation
import RTCShareCore
import RTCShareMedia
import Testing
@testable import RTCShare

/// The audio path driven with made-up times, as the run loop drives it: packets of exactly
/// 20 ms on the 48 kHz capture clock, a live input's gaps filled with silence, every byte of
/// memory inside what the plan reserves.
@Suite struct AudioPipelineTests {
    struct Emitted: Equatable {
        var timestamp: UInt32
        var captureTime: MediaTime
        var bytes: Int
    }

    private func pump(_ path: some AudioPath, at t: MediaTime) throws -> [Emitted] {
        var out: [Emitted] = []
        try path.pump(at: t) { (p: OutgoingAudioPacket) throws(ShareError) in
            #expect(p.samples == 960)
            out.append(Emitted(timestamp: p.mediaTimestamp, captureTime: p.captureTime, bytes: p.bytes.count))
        }
        return out
    }

    @Test func aToneGivesA20msPacketPerFrameOnThe48kHzCaptureClock() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let pipeline = try AudioPipeline(input: ToneAudioInput(frequency: 440, budget: budget), budget: budget, bitrate: 32_000)
        #expect(pipeline.channels == 1 && pipeline.preSkip > 0)
        let t0 = MediaTime(microseconds: 10_000_000)
        #expect(try pump(pipeline, at: t0).isEmpty)
        #expect(pipeline.nextWakeup == nil)  // no sample yet: the run loop's own 5 ms tick
        var packets = try pump(pipeline, at: t0 + .milliseconds(19))
        #expect(packets.isEmpty)
        packets += try pump(pipeline, at: t0 + .milliseconds(20))
        packets += try pump(pipeline, at: t0 + .milliseconds(105))
        #expect(packets.count == 5)
        for (k, p) in packets.enumerated() {
            #expect(p.timestamp == UInt32(480_000 + 960 * k))
            #expect(p.captureTime == t0 + .milliseconds(20 * Int64(k)))
            #expect(p.bytes > 0 && p.bytes <= OpusEncoder.maximumPacketBytes)
        }
        #expect(pipeline.nextWakeup == t0 + .milliseconds(120))
        #expect(pipeline.silentFrames == 0)
    }

    @Test func aLiveInputKeepsTheClockGoingThroughAGap() throws {
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let queue = PCMChunkQueue()
        try queue.attach(budget: budget)
        let pipeline = try AudioPipeline(input: IPCAudioInput(queue: queue), budget: budget, bitrate: 64_000)
        #expect(pipeline.channels == 2)
        let t0 = MediaTime(microseconds: 20_000_000)
        // 44.1 kHz stereo, big-endian, 20 ms per chunk, for 200 ms.
        func send(from start: Int, count: Int) {
            for m in start..<start + count {
                var bytes = [UInt8]()
                for i in 0..<882 {
                    let s = UInt16(bitPattern: Int16(8_000 * sin(2 * .pi * 1_000 * Double(m * 882 + i) / 44_100)))
                    bytes += [UInt8(s >> 8), UInt8(s & 0xFF), UInt8(s >> 8), UInt8(s & 0xFF)]
                }
                bytes.withUnsafeBytes {
                    _ = queue.push($0, bigEndian: true, sampleRate: 44_100, channels: 2,
                                   ptsMicroseconds: t0.microseconds + Int64(m) * 20_000)
                }
            }
        }
        send(from: 0, count: 10)
        var packets = try pump(pipeline, at: t0 + .milliseconds(200))
        // Frames go out once their end plus the live latency has passed: 0..6 by 200 ms.
        #expect(packets.count == 7)
        // The producer goes away for 400 ms: silence goes out at the same pace.
        for ms in stride(from: 210, through: 600, by: 10) {
            packets += try pump(pipeline, at: t0 + .milliseconds(Int64(ms)))
        }
        #expect(packets.count == 27)
        #expect(pipeline.silentFrames >= 960 * 15)
        send(from: 30, count: 5)  // back
        packets += try pump(pipeline, at: t0 + .milliseconds(700))
        #expect(packets.count == 32)
        let base = UInt32(t0.rtpTicks(clockRate: 48_000))
        #expect(packets.enumerated().allSatisfy { $1.timestamp == base &+ UInt32(960 * $0) }, "timestamps continuous")
        #expect(pipeline.nextWakeup == t0 + .milliseconds(20 * 33 + 60))
    }

    @Test func thePipelineFitsWhatThePlanReserves() throws {
        let audio = AudioConfiguration(input: .ipc)
        let budget = try MemoryBudget(capBytes: 1 << 20)
        let before = budget.stats.inUseBytes
        let tone = try AudioPipeline(input: ToneAudioInput(frequency: 440, budget: budget), budget: budget, bitrate: 64_000)
        let ipc = try AudioPipeline(input: IPCAudioInput(queue: PCMChunkQueue()), budget: budget, bitrate: 64_000)
        _ = (tone, ipc)
        let used = budget.stats.inUseBytes - before
        // Both at once, so each is within the planned figure with room to spare.
        #expect(used <= 2 * audio.budgetBytes, "\(used) bytes used, \(audio.budgetBytes) planned each")
        #expect(AudioPipeline<IPCAudioInput>.budgetBytes(channels: 2) <= audio.budgetBytes)

        var config = ShareConfiguration()
        let plain = try MemoryPlanner.resolve(config, for: TestSource(width: 1280, height: 720))
        config.audio = audio
        let withAudio = try MemoryPlanner.resolve(config, for: TestSource(width: 1280, height: 720))
        let line = try #require(withAudio.items.first { $0.name.hasPrefix("audio") })
        #expect(line.bytes == audio.budgetBytes + audio.heapBytes + MemoryPlanner.audioCodeBytes)
        #expect(withAudio.budgetBytes == plain.budgetBytes + audio.budgetBytes)
        #expect(withAudio.outputSize == PictureSize(width: 1280, height: 720) && withAudio.fits)
    }
}
