import RTCShareCore
import RTCShareIO
import RTCShareMedia

/// `testsrc`: the deterministic, screen-like `TestPattern` at its own capture rate, stamped with
/// the frame marker. Like a real screen capturer it delivers nothing while the screen is static:
/// the content moves for `activeSeconds`, then holds still for `staticSeconds`, and so on.
/// With a simulated orientation it hands out the pixels turned as a phone would, tagged so that
/// correct processing turns them back.
public final class TestSource: VideoSource {
    public let name = "testsrc"
    public let format = PixelFormat.i420
    public let frameWidth: Int
    public let frameHeight: Int
    public let isLive = true
    public var fixedOrientation: Orientation? { orientation }

    /// Upright size of the picture.
    public let width: Int
    public let height: Int
    public let framesPerSecond: Int
    public let orientation: Orientation
    public let activeSeconds: Int64
    public let staticSeconds: Int64
    /// A simulated capture failure: from `stallAfter` into the run, for `stallFor`, the source
    /// answers nothing at all (unlike a static screen, which says "unchanged").
    public let stallAfter: MediaDuration?
    public let stallFor: MediaDuration

    private let pattern: TestPattern
    private let started: MediaTime
    private var nextCapture: MediaTime
    private var counter: UInt32 = 0
    /// Upright rendering target and the turner, only when an orientation is simulated.
    private var uprightPool: FramePool?
    private var turner: FrameTransformer?

    /// A source of `width` x `height` (upright) pictures at `framesPerSecond`.
    public init(width: Int, height: Int, framesPerSecond: Int = 30, orientation: Orientation = .up,
                activeSeconds: Int64 = 4, staticSeconds: Int64 = 2, stallAfter: MediaDuration? = nil,
                stallFor: MediaDuration = .zero) {
        self.stallAfter = stallAfter
        self.stallFor = stallFor
        self.width = width
        self.height = height
        self.framesPerSecond = max(framesPerSecond, 1)
        self.orientation = orientation
        self.activeSeconds = activeSeconds
        self.staticSeconds = staticSeconds
        // The stored picture is the upright one turned the other way.
        (frameWidth, frameHeight) = orientation.uprightSize(width: width, height: height)
        pattern = TestPattern(width: width, height: height)
        started = MonotonicClock.now()
        nextCapture = started
    }

    /// One upright frame to render into and the transform's scratch, when turning.
    public var budgetBytes: Int {
        guard orientation != .up else { return 0 }
        let frame = (PixelFormat.i420.bytes(width: width, height: height) ?? 0) + 4096
        let scratch = (try? FrameTransformer.scratchBytes(maxSourceWidth: width, maxSourceHeight: height,
                                                          maxOutputWidth: frameWidth,
                                                          maxOutputHeight: frameHeight)) ?? 0
        return frame + scratch + 4096
    }

    public func prepare(budget: MemoryBudget) throws(SourceError) {
        guard orientation != .up else { return }
        do {
            uprightPool = try FramePool(budget: budget, format: .i420, maxWidth: width, maxHeight: height, count: 1)
            turner = try FrameTransformer(budget: budget, maxSourceWidth: width, maxSourceHeight: height,
                                          maxOutputWidth: frameWidth, maxOutputHeight: frameHeight)
        } catch {
            throw SourceError("testsrc: reserving its frames: \(error)")
        }
    }

    /// Whether the content is moving at `elapsed` into the cycle.
    private func isActive(_ elapsed: Int64) -> Bool {
        let cycle = (activeSeconds + staticSeconds) * 1_000_000
        guard staticSeconds > 0, cycle > 0 else { return true }
        return elapsed % cycle < activeSeconds * 1_000_000
    }

    public func capture(from pool: FramePool, until deadline: MediaTime) throws(SourceError) -> CaptureOutcome {
        if nextCapture > deadline {
            MonotonicClock.sleep(until: deadline)
            return .nothingYet
        }
        MonotonicClock.sleep(until: nextCapture)
        let now = MonotonicClock.now()
        let elapsed = now.microseconds - started.microseconds
        // Next capture on the fixed grid; if we fell behind, skip to the next future slot.
        let interval = MediaDuration.frameInterval(framesPerSecond: framesPerSecond)
        repeat { nextCapture += interval } while nextCapture <= now
        if let stallAfter, elapsed >= stallAfter.microseconds,
           elapsed < stallAfter.microseconds + stallFor.microseconds {
            return .nothingYet
        }
        guard isActive(elapsed) else { return .unchanged }

        var frame: FrameSlot
        do {
            frame = try pool.acquire(format: .i420, width: frameWidth, height: frameHeight)
        } catch {
            return .unchanged  // every slot is busy downstream: this capture is skipped (alive)
        }
        let captureMicros = UInt64(now.microseconds)
        if let uprightPool, let turner {
            do {
                var upright = try uprightPool.acquire(format: .i420, width: width, height: height)
                upright.withMutablePixels {
                    pattern.render(into: $0, counter: counter, captureMicros: captureMicros, elapsedMicros: elapsed)
                }
                try turner.apply(upright, into: &frame, orientation: orientation.inverse)
            } catch {
                throw SourceError("testsrc: cannot turn the picture: \(error)")
            }
        } else {
            frame.withMutablePixels {
                pattern.render(into: $0, counter: counter, captureMicros: captureMicros, elapsedMicros: elapsed)
            }
        }
        frame.orientation = orientation
        frame.ptsMicroseconds = now.microseconds
        counter &+= 1
        return .frame(frame)
    }

    public func restart() throws(SourceError) {
        nextCapture = MonotonicClock.now()
    }
}
