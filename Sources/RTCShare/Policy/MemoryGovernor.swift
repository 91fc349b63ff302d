import RTCShareCore
import RTCShareMedia

// The last line of defence of the memory cap: the share's memory is fixed at start-up and
// planned, but a plan can be wrong (a library that grows, a busier picture, an embedder's own
// allocations in the same process). When the process's resident memory reaches the line the
// governor is given — below the cap, so it acts before the cap, not after — the share gives
// way one step at a time: the frame rate first (halved, down to 5 fps: what a screen share
// loses least), then the output size (the next standard size down, aspect kept: a new,
// smaller encoder, which is where the memory is). Each step is said (an event, a status line).
//
// Invariants:
// - Sans-IO: resident bytes and times are passed in.
// - One step per `settle` at most, so the effect of a step is seen before the next one.
// - Steps only go down; nothing is given back when memory falls again (a share that needed a
//   step once is likely to need it again: no oscillation).
// - A size step is offered only when the share can scale (it has a transform stage) and a
//   smaller size exists; with nothing left to give, the governor says so once.

/// What the governor asks of the share.
public enum MemoryGovernorStep: Sendable, Equatable, CustomStringConvertible {
    /// At most this many frames per second from now on.
    case frameRate(Int)
    /// Encode at this size from now on (a new encoder).
    case outputSize(PictureSize)
    /// Nothing is left to lower.
    case exhausted

    public var description: String {
        switch self {
        case .frameRate(let fps): "frame rate lowered to \(fps) fps"
        case .outputSize(let size): "output lowered to \(size)"
        case .exhausted: "nothing left to lower"
        }
    }
}

/// Watches resident memory against a line below the cap and steps the share down.
public struct MemoryGovernor: Sendable, Equatable {
    public static let minimumFramesPerSecond = 5
    /// The least output size a step goes to.
    public static let minimumOutput = PictureSize(width: 320, height: 180)

    /// The resident size at which the share gives way.
    public let limitBytes: Int
    public let settle: MediaDuration
    public private(set) var frameRateCap: Int
    public private(set) var outputSize: PictureSize
    public let canResize: Bool
    public private(set) var steps = 0
    private var lastStepAt: MediaTime?
    private var saidExhausted = false

    public init(limitBytes: Int, framesPerSecond: Int, outputSize: PictureSize, canResize: Bool,
                settle: MediaDuration = .seconds(2)) {
        self.limitBytes = limitBytes
        self.frameRateCap = framesPerSecond
        self.outputSize = outputSize
        self.canResize = canResize
        self.settle = settle
    }

    /// The next size down: three quarters of each side, even, aspect kept; nil under the minimum.
    public static func smaller(than size: PictureSize) -> PictureSize? {
        let next = PictureSize(width: (size.width * 3 / 4) & ~1, height: (size.height * 3 / 4) & ~1)
        return next.pixels >= minimumOutput.pixels ? next : nil
    }

    /// One reading of the process's resident memory. Returns the step to take, if any.
    public mutating func sample(residentBytes: Int, at now: MediaTime) -> MemoryGovernorStep? {
        guard residentBytes >= limitBytes else { return nil }
        if let last = lastStepAt, now - last < settle { return nil }
        if frameRateCap > Self.minimumFramesPerSecond {
            frameRateCap = max(Self.minimumFramesPerSecond, frameRateCap / 2)
            return took(.frameRate(frameRateCap), at: now)
        }
        if canResize, let next = Self.smaller(than: outputSize) {
            outputSize = next
            return took(.outputSize(next), at: now)
        }
        guard !saidExhausted else { return nil }
        saidExhausted = true
        return took(.exhausted, at: now)
    }

    private mutating func took(_ step: MemoryGovernorStep, at now: MediaTime) -> MemoryGovernorStep {
        lastStepAt = now
        steps += 1
        return step
    }
}
