import Glibc
import Synchronization
import Testing
@testable import RTCShareCore

/// The SPSC queue that carries received PCM to the audio path.
@Suite struct PCMChunkQueueTests {
    private func queue(chunkSamples: Int = 8, capacity: Int = 4) throws -> (PCMChunkQueue, MemoryBudget) {
        let budget = try MemoryBudget(capBytes: 1 << 20, prefault: false)
        let q = PCMChunkQueue(chunkSamples: chunkSamples, capacity: capacity)
        try q.attach(budget: budget)
        return (q, budget)
    }

    private func popAll(_ q: PCMChunkQueue) -> [(rate: Int, channels: Int, pts: Int64, samples: [Int16])] {
        var out: [(Int, Int, Int64, [Int16])] = []
        while let chunk = q.pop({ ($0.sampleRate, $0.channels, $0.ptsMicroseconds, Array($0.samples)) }) {
            out.append(chunk)
        }
        return out
    }

    @Test func bigAndLittleEndianBytesBecomeTheSameNativeSamples() throws {
        let (q, budget) = try queue()
        let big: [UInt8] = [0x12, 0x34, 0xFF, 0xFE, 0x80, 0x00, 0x00, 0x01]
        let little: [UInt8] = [0x34, 0x12, 0xFE, 0xFF, 0x00, 0x80, 0x01, 0x00]
        big.withUnsafeBytes { _ = q.push($0, bigEndian: true, sampleRate: 48_000, channels: 2, ptsMicroseconds: 7) }
        little.withUnsafeBytes { _ = q.push($0, bigEndian: false, sampleRate: 48_000, channels: 2, ptsMicroseconds: 8) }
        let chunks = popAll(q)
        #expect(chunks.count == 2)
        #expect(chunks[0].samples == [0x1234, -2, Int16.min, 1])
        #expect(chunks[1].samples == chunks[0].samples)
        #expect(chunks[0].rate == 48_000 && chunks[0].channels == 2 && chunks[0].pts == 7)
        _ = budget
    }

    @Test func aLongRunIsSplitWithItsTimesAdvanced() throws {
        let (q, _) = try queue(chunkSamples: 8, capacity: 8)
        // 10 stereo frames at 8 kHz: chunks of 4 frames (8 samples), 4, then 2.
        let samples: [Int16] = (0..<20).map { Int16($0) }
        let queued = samples.withUnsafeBytes {
            q.push($0, bigEndian: false, sampleRate: 8_000, channels: 2, ptsMicroseconds: 1_000)
        }
        #expect(queued == 3)
        let chunks = popAll(q)
        #expect(chunks.map(\.samples.count) == [8, 8, 4])
        #expect(chunks.map(\.pts) == [1_000, 1_500, 2_000])  // 4 frames at 8 kHz = 500 µs
        #expect(chunks.flatMap(\.samples) == samples)
    }

    @Test func aFullQueueDropsNewChunksAndCountsThem() throws {
        let (q, _) = try queue(chunkSamples: 2, capacity: 4)
        let bytes = [UInt8](repeating: 1, count: 2 * 2 * 6)  // 6 chunks of one stereo frame
        let queued = bytes.withUnsafeBytes { q.push($0, bigEndian: false, sampleRate: 48_000, channels: 2, ptsMicroseconds: 0) }
        #expect(queued == 4)
        #expect(q.stats == .init(pushed: 4, popped: 0, dropped: 2, queued: 4))
        _ = q.pop { _ in }
        #expect(q.stats.queued == 3)
    }

    @Test func beforeAttachEveryPushIsDroppedAndPopIsEmpty() throws {
        let q = PCMChunkQueue(chunkSamples: 4, capacity: 2)
        let bytes = [UInt8](repeating: 0, count: 16)
        #expect(bytes.withUnsafeBytes { q.push($0, bigEndian: true, sampleRate: 8_000, channels: 1, ptsMicroseconds: 0) } == 0)
        #expect(q.stats.dropped == 2)
        #expect(q.pop { _ in 1 } == nil)
        #expect(!q.isAttached)
        let budget = try MemoryBudget(capBytes: 1 << 16, prefault: false)
        try q.attach(budget: budget)
        #expect(budget.stats.inUseBytes >= PCMChunkQueue.bytes(chunkSamples: 4, capacity: 2))
    }

    @Test func acrossTwoThreadsNothingIsLostOrDuplicated() throws {
        let (q, _) = try queue(chunkSamples: 2, capacity: 8)
        let total = 20_000
        let done = Atomic<Bool>(false)
        let producer = Thread {
            var next: Int16 = 0
            while next < Int16(clamping: total) {
                let sample = [next, next]
                if sample.withUnsafeBytes({ q.push($0, bigEndian: false, sampleRate: 48_000, channels: 2, ptsMicroseconds: 0) }) == 1 {
                    next &+= 1
                } else {
                    sched_yield()
                }
            }
            done.store(true, ordering: .releasing)
        }
        var expected: Int16 = 0
        var ok = true
        while expected < Int16(clamping: total) {
            if let v = q.pop({ $0.samples[0] == $0.samples[1] ? $0.samples[0] : -1 }) {
                if v != expected { ok = false; break }
                expected &+= 1
            } else {
                sched_yield()
            }
        }
        producer.join()
        #expect(ok && expected == Int16(clamping: total))
        let finished = done.load(ordering: .acquiring)
        #expect(finished)
    }

    /// A bare pthread for the producer side.
    final class Thread: @unchecked Sendable {
        private var thread = pthread_t()
        private let body: () -> Void
        init(_ body: @escaping () -> Void) {
            self.body = body
            let me = Unmanaged.passRetained(self).toOpaque()
            pthread_create(&thread, nil, { raw in
                let t = Unmanaged<Thread>.fromOpaque(raw!).takeRetainedValue()
                t.body()
                return nil
            }, me)
        }
        func join() { pthread_join(thread, nil) }
    }
}
