import RTCShareCore

/// Cuts a stream of 48 kHz interleaved samples into the exact 960-sample-per-channel frames
/// Opus encodes (20 ms), whatever sizes the samples arrive in.
///
/// A ring of `capacityFrames` frames (samples per channel) carved from a `MemoryBudget`: no
/// allocation after init. Invariants: `0 <= buffered <= capacityFrames`; `start` is the ring
/// position of the oldest buffered frame. When more arrives than fits, the oldest samples are
/// dropped and counted in `droppedFrames` (a producer running ahead of the clock must not grow
/// the latency), never the newest.
public struct AudioFramer: ~Copyable {
    /// Samples per channel in one Opus frame.
    public static let frameSamples = 960

    public let channels: Int
    public let capacityFrames: Int
    private let block: BudgetBlock
    private let ring: UnsafeMutablePointer<Int16>
    private var start = 0
    /// Frames (samples per channel) waiting.
    public private(set) var buffered = 0
    /// Frames dropped because the ring was full.
    public private(set) var droppedFrames = 0

    /// Bytes `init` takes from a budget.
    public static func budgetBytes(channels: Int, capacityFrames: Int) -> Int {
        capacityFrames * channels * 2
    }

    /// A framer for `channels` (1 or 2) holding up to `capacityFrames` (at least one Opus frame).
    public init(budget: MemoryBudget, channels: Int, capacityFrames: Int) throws(MediaError) {
        guard channels == 1 || channels == 2, capacityFrames >= Self.frameSamples else {
            throw .invalidConfiguration("audio framer: \(channels) channels, \(capacityFrames) frames")
        }
        do {
            block = try BudgetBlock(budget: budget, byteCount: Self.budgetBytes(channels: channels, capacityFrames: capacityFrames),
                                    alignment: 16)
        } catch {
            throw .invalidConfiguration("no room in the memory budget for the audio framer")
        }
        ring = block.base.bindMemory(to: Int16.self, capacity: capacityFrames * channels)
        self.channels = channels
        self.capacityFrames = capacityFrames
    }

    /// Whether a whole frame is waiting.
    public var hasFullFrame: Bool { buffered >= Self.frameSamples }

    /// Appends whole frames of interleaved samples (a trailing partial frame is ignored).
    public mutating func append(_ samples: UnsafeBufferPointer<Int16>) {
        var frames = samples.count / channels
        guard frames > 0, var src = samples.baseAddress else { return }
        if frames > capacityFrames {
            // Only the newest capacity's worth can be kept.
            let skipped = frames - capacityFrames
            droppedFrames += skipped
            src += skipped * channels
            frames = capacityFrames
        }
        let overflow = buffered + frames - capacityFrames
        if overflow > 0 { drop(overflow); droppedFrames += overflow }
        var end = (start + buffered) % capacityFrames
        var left = frames
        while left > 0 {
            let n = min(left, capacityFrames - end)
            (ring + end * channels).update(from: src, count: n * channels)
            src += n * channels
            left -= n
            end = (end + n) % capacityFrames
        }
        buffered += frames
    }

    /// Removes the `count` oldest frames (or all, if fewer are waiting).
    public mutating func drop(_ count: Int) {
        let n = min(max(count, 0), buffered)
        start = (start + n) % capacityFrames
        buffered -= n
    }

    /// Moves the next frame into `frame` (exactly `frameSamples x channels` samples), padding
    /// with silence when fewer are waiting; returns how many real frames it held (0...960).
    public mutating func takeFrame(into frame: UnsafeMutableBufferPointer<Int16>) -> Int {
        precondition(frame.count == Self.frameSamples * channels, "frame buffer must hold one Opus frame")
        let real = min(buffered, Self.frameSamples)
        var done = 0
        while done < real {
            let n = min(real - done, capacityFrames - start)
            (frame.baseAddress! + done * channels).update(from: ring + start * channels, count: n * channels)
            start = (start + n) % capacityFrames
            done += n
        }
        buffered -= real
        if real < Self.frameSamples {
            (frame.baseAddress! + real * channels).update(repeating: 0, count: (Self.frameSamples - real) * channels)
        }
        return real
    }
}
