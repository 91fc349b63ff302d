import RTCShareCore
import RTCShareIO
import RTCShareMedia
import Synchronization

/// One picture an embedder hands in: its planes stay the caller's and are read during the
/// `push` call only.
public struct PushedFrame {
    public var format: PixelFormat
    public var width: Int
    public var height: Int
    /// Up to three planes: I420 (Y, U, V), NV12 (Y, UV), BGRA/BGRX (one).
    public var planes: [UnsafeRawPointer]
    /// Bytes from one row to the next, per plane.
    public var strides: [Int]
    /// Capture time on CLOCK_MONOTONIC in microseconds (nil: now).
    public var ptsMicroseconds: Int64?
    /// How the stored pixels must be turned to be upright (EXIF 1...8).
    public var orientation: Orientation

    public init(format: PixelFormat, width: Int, height: Int, planes: [UnsafeRawPointer], strides: [Int],
                ptsMicroseconds: Int64? = nil, orientation: Orientation = .up) {
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.strides = strides
        self.ptsMicroseconds = ptsMicroseconds
        self.orientation = orientation
    }
}

/// What became of a pushed frame or PCM run. Pushing never blocks: what cannot be taken now is
/// dropped and counted.
public enum PushResult: Int32, Sendable, Equatable {
    case accepted = 0
    /// The share is not running (not started yet, or finished).
    case notRunning = 1
    /// Every frame slot is busy downstream (the encoder is behind): this picture is skipped.
    case busy = 2
    /// Wrong format, a size over the configured maximum, a missing plane or a stride too small.
    case invalid = 3
}

/// Frames an embedder pushes from its own threads (the library API and the C ABI). The picture
/// is converted (BGRA/BGRX to I420) or copied (I420, NV12) into a slot of the share's pool on
/// the pushing thread, and the newest waiting slot is handed to the capture thread, which takes
/// it at once (it waits on an event loop the push wakes). A newer push replaces a picture not
/// yet taken (counted as replaced). Pushes from several threads are serialised by a lock that is
/// only tried, never waited for: a push that finds it held is dropped as `busy`.
public final class PushSource: VideoSource, @unchecked Sendable {
    // @unchecked Sendable: the pool and the mailbox are behind `state`; the loop is used by the
    // capture thread only, its waker from any thread.
    public let name = "push"
    public let format = PixelFormat.i420
    public let frameWidth: Int
    public let frameHeight: Int
    public let fixedOrientation: Orientation? = nil
    public let isLive = true
    public let budgetBytes = 0
    /// Largest picture accepted, in either orientation.
    public let maxSize: PictureSize
    /// PCM the host pushes (`pushAudio`), for an audio path of input `.pushed`.
    public let audioSamples = PCMChunkQueue()

    private struct State: ~Copyable {
        var pool: FramePool?
        var waiting: FrameSlot?
    }

    private let state = Mutex(State())
    private let loop: EventLoop
    private let pushing = Atomic<Bool>(false)
    private let counters = Mutex(Counters())

    public struct Counters: Sendable, Equatable {
        public var accepted = 0
        public var replaced = 0
        public var busy = 0
        public var invalid = 0
        public var notRunning = 0
        public var audioDropped = 0
    }

    public init(maxSize: PictureSize) throws(SourceError) {
        self.maxSize = maxSize
        (frameWidth, frameHeight) = IPCSource.slotSize(maxSize)
        do { loop = try EventLoop() } catch { throw SourceError("push source: \(error)") }
    }

    public var stats: Counters { counters.withLock { $0 } }

    public func prepare(budget: MemoryBudget) throws(SourceError) {
        do { try audioSamples.attach(budget: budget) } catch { throw SourceError("push audio queue: \(error)") }
    }

    public func restart() throws(SourceError) {}

    /// Called on the capture thread: hands over the newest pushed picture, waiting for one until
    /// `deadline`.
    public func capture(from pool: FramePool, until deadline: MediaTime) throws(SourceError) -> CaptureOutcome {
        state.withLock { if $0.pool == nil { $0.pool = pool } }
        while true {
            let taken: FrameSlot? = state.withLock { s in
                guard s.waiting != nil else { return nil }
                let slot = s.waiting.take()
                return slot
            }
            if let taken { return .frame(taken) }
            if MonotonicClock.now() >= deadline { return .nothingYet }
            loop.wait(until: deadline)
        }
    }

    /// The share is over: later pushes are refused and a picture still waiting is let go of.
    func detach() {
        state.withLock { s in
            s.pool = nil
            s.waiting = nil
        }
    }

    private func count(_ result: PushResult) -> PushResult {
        counters.withLock { c in
            switch result {
            case .accepted: c.accepted += 1
            case .busy: c.busy += 1
            case .invalid: c.invalid += 1
            case .notRunning: c.notRunning += 1
            }
        }
        return result
    }

    /// Takes a picture; safe from any thread, never blocks.
    public func push(_ frame: PushedFrame) -> PushResult {
        guard Self.isValid(frame, maxSize: maxSize) else { return count(.invalid) }
        guard pushing.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return count(.busy)
        }
        defer { pushing.store(false, ordering: .releasing) }
        guard let pool = state.withLock({ $0.pool }) else { return count(.notRunning) }
        let slotFormat: PixelFormat = frame.format == .nv12 ? .nv12 : .i420
        var slot: FrameSlot
        do {
            slot = try pool.acquire(format: slotFormat, width: frame.width, height: frame.height)
        } catch .poolExhausted {
            return count(.busy)
        } catch {
            return count(.invalid)
        }
        guard Self.copy(frame, into: &slot) else { return count(.invalid) }
        slot.orientation = frame.orientation
        slot.ptsMicroseconds = frame.ptsMicroseconds ?? MonotonicClock.now().microseconds
        var handOff: FrameSlot? = consume slot
        let replaced = state.withLock { s -> Bool? in
            guard s.pool != nil else { return nil }
            let had = s.waiting != nil
            s.waiting = handOff.take()
            return had
        }
        guard let replaced else { return count(.notRunning) }
        if replaced { counters.withLock { $0.replaced += 1 } }
        loop.waker.wake()
        return count(.accepted)
    }

    /// Takes interleaved 16-bit PCM; safe from any thread, never blocks (a full queue drops
    /// the oldest chunk, counted by the queue).
    public func pushAudio(_ bytes: UnsafeRawBufferPointer, sampleRate: Int, channels: Int, bigEndian: Bool,
                          ptsMicroseconds: Int64? = nil) -> PushResult {
        guard (8_000...192_000).contains(sampleRate), (1...2).contains(channels),
              bytes.count % (2 * channels) == 0, bytes.count > 0 else { return count(.invalid) }
        guard audioSamples.isAttached else { return count(.notRunning) }
        guard pushing.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            counters.withLock { $0.audioDropped += 1 }
            return .busy
        }
        defer { pushing.store(false, ordering: .releasing) }
        audioSamples.push(bytes, bigEndian: bigEndian, sampleRate: sampleRate, channels: channels,
                          ptsMicroseconds: ptsMicroseconds ?? MonotonicClock.now().microseconds)
        return .accepted
    }

    static func isValid(_ frame: PushedFrame, maxSize: PictureSize) -> Bool {
        let (w, h) = (frame.width, frame.height)
        guard w >= 16, h >= 16, w % 2 == 0, h % 2 == 0,
              (w <= maxSize.width && h <= maxSize.height) || (h <= maxSize.width && w <= maxSize.height)
        else { return false }
        let rowBytes: [Int]
        switch frame.format {
        case .i420: rowBytes = [w, w / 2, w / 2]
        case .nv12: rowBytes = [w, w]
        case .bgra, .bgrx: rowBytes = [4 * w]
        }
        guard frame.planes.count >= rowBytes.count, frame.strides.count >= rowBytes.count else { return false }
        return zip(rowBytes, frame.strides).allSatisfy { $1 >= $0 }
    }

    /// Copies (I420, NV12) or converts (BGRA/BGRX) the host's picture into the slot.
    private static func copy(_ frame: PushedFrame, into slot: inout FrameSlot) -> Bool {
        slot.withMutablePixels { pixels -> Bool in
            switch frame.format {
            case .i420, .nv12:
                for p in 0..<pixels.planeCount {
                    let plane = pixels.plane(p)
                    for y in 0..<plane.rows {
                        plane.row(y).baseAddress!.update(
                            from: (frame.planes[p] + y * frame.strides[p]).assumingMemoryBound(to: UInt8.self),
                            count: plane.rowBytes)
                    }
                }
                return true
            case .bgra, .bgrx:
                let source = FramePixels(packed: frame.format, width: frame.width,
                                         height: frame.height,
                                         base: UnsafeMutablePointer(mutating: frame.planes[0].assumingMemoryBound(to: UInt8.self)),
                                         stride: frame.strides[0])
                return (try? PixelConversion.packedToI420(source, into: pixels)) != nil
            }
        }
    }
}
