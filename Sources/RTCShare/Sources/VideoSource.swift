import RTCShareCore
import RTCShareMedia

/// Something that captures pictures: the test pattern, a Y4M file, a screen, a producer process.
/// A source runs on its own capture thread (see `CaptureLoop`); it fills slots of the pool it
/// is given and never blocks the pipeline.
#if compiler(>=6.2)
/// What every source is: a class whose type may cross to the capture thread (Swift 6.2 checks
/// metatypes' sendability; 6.0, Debian 13's, has no `SendableMetatype` and needs none).
public typealias VideoSourceBase = AnyObject & SendableMetatype
#else
public typealias VideoSourceBase = AnyObject
#endif

public protocol VideoSource: VideoSourceBase {
    /// A short name for logs ("testsrc", "y4m:clip.y4m", …).
    var name: String { get }
    /// Pixel format of the frames it delivers.
    var format: PixelFormat { get }
    /// Size of the frames as stored (before orientation correction); the pool is sized for it.
    var frameWidth: Int { get }
    var frameHeight: Int { get }
    /// The orientation tag every frame carries, when it never changes (nil: it may change).
    var fixedOrientation: Orientation? { get }
    /// Live sources can stall and are restarted by the watchdog; a file simply ends.
    var isLive: Bool { get }

    /// Bytes of the share's budget the source needs for itself (its own working frames).
    var budgetBytes: Int { get }
    /// Takes those bytes from the share's budget; called once before the first capture.
    func prepare(budget: MemoryBudget) throws(SourceError)

    /// Waits for the next picture until `deadline`, filling a slot of `pool`.
    func capture(from pool: FramePool, until deadline: MediaTime) throws(SourceError) -> CaptureOutcome
    /// Stops and starts the capture again (after a stall).
    func restart() throws(SourceError)
}

/// What one capture attempt gave.
public enum CaptureOutcome: ~Copyable {
    /// A new picture.
    case frame(FrameSlot)
    /// The source is alive but the picture has not changed (a static screen delivers no
    /// frames): the filler repeats the last frame, and the stall watchdog counts it as alive.
    case unchanged
    /// Nothing before the deadline: not time yet, or the capture is not answering.
    case nothingYet
    /// The source has no more pictures (end of file).
    case ended
}

/// Why a source failed: one line for the user.
public struct SourceError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
