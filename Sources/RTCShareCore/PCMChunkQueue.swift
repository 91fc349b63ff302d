import Synchronization

/// A bounded single-producer / single-consumer queue of PCM chunks: how a capture thread that
/// receives audio (the IPC source) hands it to the audio path (resampler, Opus) on another
/// thread without locks, allocation or waiting.
///
/// Each chunk is a fixed-size slot holding up to `chunkSamples` interleaved, native-endian
/// `Int16` samples with their rate, channel count and capture time. Incoming PCM in either byte
/// order is converted on the way in (`PCM`), and a long run is split over several chunks.
///
/// Invariants: `capacity` is a power of two; `head` (written only by the producer) and `tail`
/// (written only by the consumer) are free-running and masked on use, so `head - tail` is the
/// number of queued chunks and never exceeds `capacity`. The producer fills a slot, then
/// publishes it with a release store of `head`; the consumer reads it after an acquire load,
/// and gives it back with a release store of `tail`. When full, the newest chunk is dropped and
/// counted: memory never grows and the producer never waits.
///
/// The slots are carved from a `MemoryBudget` by `attach(budget:)`, once, so the queue can be
/// handed to a consumer before the share's budget exists; until then it is empty and every push
/// is counted as dropped.
public final class PCMChunkQueue: @unchecked Sendable {
    // Sendable: slot memory is handed between the two threads only through head/tail as above.

    /// 20 ms of 48 kHz stereo.
    public static let defaultChunkSamples = 1920
    /// 32 chunks: 640 ms of 20 ms chunks.
    public static let defaultCapacity = 32

    /// Largest number of interleaved samples one chunk holds (even, so stereo frames never split).
    public let chunkSamples: Int
    /// Chunks the queue holds.
    public let capacity: Int

    /// Bytes of a chunk's description before its samples (keeps samples 16-byte aligned).
    static let headerBytes = 32
    private let slotBytes: Int
    private let storage = Atomic<UnsafeMutableRawPointer?>(nil)
    private let memory = Mutex<Storage?>(nil)
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)
    private let pushedChunks = Atomic<Int>(0)
    private let poppedChunks = Atomic<Int>(0)
    private let droppedChunks = Atomic<Int>(0)

    /// Owns the budget block the slots live in.
    private final class Storage: @unchecked Sendable {  // immutable after init
        let block: BudgetBlock
        init(_ block: consuming BudgetBlock) { self.block = block }
    }

    /// A queue of `capacity` (a power of two, 2...4096) chunks of up to `chunkSamples` (an even
    /// number, 2...65536) samples each. Holds no memory until `attach(budget:)`.
    public init(chunkSamples: Int = defaultChunkSamples, capacity: Int = defaultCapacity) {
        precondition(chunkSamples >= 2 && chunkSamples <= 65_536 && chunkSamples % 2 == 0, "bad chunk size")
        precondition(capacity >= 2 && capacity <= 4096 && capacity & (capacity - 1) == 0, "capacity must be a power of two")
        self.chunkSamples = chunkSamples
        self.capacity = capacity
        self.slotBytes = Self.headerBytes + (chunkSamples * 2 + 15) / 16 * 16
    }

    /// Bytes `attach` takes from a budget for this geometry.
    public static func bytes(chunkSamples: Int = defaultChunkSamples, capacity: Int = defaultCapacity) -> Int {
        capacity * (headerBytes + (chunkSamples * 2 + 15) / 16 * 16)
    }

    /// Carves the slots from `budget`. Call once, before the producer's first push; a second
    /// call does nothing.
    public func attach(budget: MemoryBudget) throws(CoreError) {
        guard storage.load(ordering: .acquiring) == nil else { return }
        let block = try BudgetBlock(budget: budget, byteCount: capacity * slotBytes, alignment: 64)
        let base = block.base
        let owner = Storage(block)
        memory.withLock { $0 = owner }
        storage.store(base, ordering: .releasing)
    }

    /// Whether the slots exist (after `attach`).
    public var isAttached: Bool { storage.load(ordering: .acquiring) != nil }

    // MARK: producer side (one thread)

    /// Queues `bytes` of 16-bit PCM (`channels` 1 or 2 interleaved, big- or little-endian)
    /// captured at `ptsMicroseconds`, split into chunks as needed, converted to native byte
    /// order. Returns the chunks queued; chunks that find the queue full (or not attached) are
    /// dropped and counted. A trailing partial frame is ignored.
    @discardableResult
    public func push(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool, sampleRate: Int, channels: Int,
                     ptsMicroseconds: Int64) -> Int {
        guard channels == 1 || channels == 2, sampleRate > 0 else { return 0 }
        let totalFrames = bytes.count / (2 * channels)
        guard totalFrames > 0 else { return 0 }
        let framesPerChunk = chunkSamples / channels
        let chunks = (totalFrames + framesPerChunk - 1) / framesPerChunk
        guard let base = storage.load(ordering: .acquiring), let src = bytes.baseAddress else {
            droppedChunks.add(chunks, ordering: .relaxed)
            return 0
        }
        var done = 0
        var queued = 0
        while done < totalFrames {
            let frames = min(framesPerChunk, totalFrames - done)
            let h = head.load(ordering: .relaxed)
            let t = tail.load(ordering: .acquiring)
            if h &- t >= capacity {
                let left = (totalFrames - done + framesPerChunk - 1) / framesPerChunk
                droppedChunks.add(left, ordering: .relaxed)
                break
            }
            let slot = base + (h & (capacity - 1)) * slotBytes
            let samples = (slot + Self.headerBytes).assumingMemoryBound(to: Int16.self)
            let count = frames * channels
            let from = UnsafeRawBufferPointer(start: src + done * 2 * channels, count: count * 2)
            let into = UnsafeMutableBufferPointer(start: samples, count: count)
            if bigEndian {
                PCM.bigEndianToNative(from, into: into)
            } else {
                UnsafeMutableRawPointer(samples).copyMemory(from: from.baseAddress!, byteCount: count * 2)
                #if _endian(big)
                PCM.byteSwap(into)
                #endif
            }
            slot.storeBytes(of: Int32(sampleRate), toByteOffset: 0, as: Int32.self)
            slot.storeBytes(of: Int32(channels), toByteOffset: 4, as: Int32.self)
            slot.storeBytes(of: Int32(frames), toByteOffset: 8, as: Int32.self)
            let offset = Int64(done) * 1_000_000 / Int64(sampleRate)
            slot.storeBytes(of: ptsMicroseconds &+ offset, toByteOffset: 16, as: Int64.self)
            head.store(h &+ 1, ordering: .releasing)
            pushedChunks.add(1, ordering: .relaxed)
            queued += 1
            done += frames
        }
        return queued
    }

    // MARK: consumer side (one thread)

    /// Takes the oldest chunk, lends it to `body`, then frees its slot; nil when empty.
    public func pop<R, E: Error>(_ body: (PCMChunk) throws(E) -> R) throws(E) -> R? {
        guard let base = storage.load(ordering: .acquiring) else { return nil }
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        guard h != t else { return nil }
        let slot = UnsafeRawPointer(base + (t & (capacity - 1)) * slotBytes)
        let channels = Int(slot.load(fromByteOffset: 4, as: Int32.self))
        let frames = Int(slot.load(fromByteOffset: 8, as: Int32.self))
        let chunk = PCMChunk(
            sampleRate: Int(slot.load(fromByteOffset: 0, as: Int32.self)), channels: channels, frames: frames,
            ptsMicroseconds: slot.load(fromByteOffset: 16, as: Int64.self),
            samples: UnsafeBufferPointer(start: (slot + Self.headerBytes).assumingMemoryBound(to: Int16.self),
                                         count: frames * channels))
        defer {
            tail.store(t &+ 1, ordering: .releasing)
            poppedChunks.add(1, ordering: .relaxed)
        }
        return try body(chunk)
    }

    /// Counters, readable from any thread.
    public struct Stats: Equatable, Sendable {
        /// Chunks queued since the start.
        public var pushed: Int
        /// Chunks taken by the consumer.
        public var popped: Int
        /// Chunks dropped because the queue was full (or not attached yet).
        public var dropped: Int
        /// Chunks waiting now (a snapshot).
        public var queued: Int
    }

    public var stats: Stats {
        let h = head.load(ordering: .acquiring), t = tail.load(ordering: .acquiring)
        return Stats(pushed: pushedChunks.load(ordering: .relaxed), popped: poppedChunks.load(ordering: .relaxed),
                     dropped: droppedChunks.load(ordering: .relaxed), queued: max(h &- t, 0))
    }
}

/// One chunk of a `PCMChunkQueue`, lent to the consumer inside `pop`.
public struct PCMChunk {
    public let sampleRate: Int
    /// 1 or 2; samples are interleaved.
    public let channels: Int
    /// Samples per channel.
    public let frames: Int
    /// Capture time of the first sample (µs, CLOCK_MONOTONIC).
    public let ptsMicroseconds: Int64
    /// `frames * channels` native-endian samples; valid only inside `pop`'s closure.
    public let samples: UnsafeBufferPointer<Int16>
}
