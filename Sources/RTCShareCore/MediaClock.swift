/// Times on the media clock: a monotonic clock counted in microseconds (CLOCK_MONOTONIC at the
/// edge, a fake clock in tests). The decision logic of the media path only ever receives these
/// values; reading the real clock is the run loop's job. Microseconds in an `Int64` cover about
/// 292 000 years, so the arithmetic below traps only on a broken caller, never in practice.

/// An instant on the media clock.
public struct MediaTime: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Microseconds since the clock's (arbitrary) origin.
    public var microseconds: Int64

    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    public static let zero = MediaTime(microseconds: 0)

    public static func microseconds(_ value: Int64) -> MediaTime { MediaTime(microseconds: value) }
    public static func milliseconds(_ value: Int64) -> MediaTime { MediaTime(microseconds: value * 1_000) }
    public static func seconds(_ value: Int64) -> MediaTime { MediaTime(microseconds: value * 1_000_000) }

    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool { lhs.microseconds < rhs.microseconds }

    public static func + (lhs: MediaTime, rhs: MediaDuration) -> MediaTime {
        MediaTime(microseconds: lhs.microseconds + rhs.microseconds)
    }

    public static func - (lhs: MediaTime, rhs: MediaDuration) -> MediaTime {
        MediaTime(microseconds: lhs.microseconds - rhs.microseconds)
    }

    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaDuration {
        MediaDuration(microseconds: lhs.microseconds - rhs.microseconds)
    }

    public static func += (lhs: inout MediaTime, rhs: MediaDuration) { lhs = lhs + rhs }

    /// This instant in ticks of an RTP clock of `clockRate` Hz (90 000 for video, 48 000 for
    /// Opus), counted from the media clock's origin and rounded down; not wrapped to 32 bits.
    /// Split into whole seconds and the rest so that `microseconds * clockRate` cannot overflow.
    public func rtpTicks(clockRate: Int64) -> Int64 {
        let (seconds, rest) = microseconds.quotientAndRemainder(dividingBy: 1_000_000)
        return seconds * clockRate + rest * clockRate / 1_000_000
    }

    public var description: String { "t=\(MediaDuration(microseconds: microseconds))" }
}

/// A span of time on the media clock; may be negative.
public struct MediaDuration: Comparable, Hashable, Sendable, AdditiveArithmetic, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    public static let zero = MediaDuration(microseconds: 0)

    public static func microseconds(_ value: Int64) -> MediaDuration { MediaDuration(microseconds: value) }
    public static func milliseconds(_ value: Int64) -> MediaDuration { MediaDuration(microseconds: value * 1_000) }
    public static func seconds(_ value: Int64) -> MediaDuration { MediaDuration(microseconds: value * 1_000_000) }

    /// One frame period at `framesPerSecond`, rounded up so that waiting it never comes early.
    public static func frameInterval(framesPerSecond: Int) -> MediaDuration {
        precondition(framesPerSecond > 0, "frame rate must be positive")
        let fps = Int64(framesPerSecond)
        return MediaDuration(microseconds: (1_000_000 + fps - 1) / fps)
    }

    public static func < (lhs: MediaDuration, rhs: MediaDuration) -> Bool { lhs.microseconds < rhs.microseconds }

    public static func + (lhs: MediaDuration, rhs: MediaDuration) -> MediaDuration {
        MediaDuration(microseconds: lhs.microseconds + rhs.microseconds)
    }

    public static func - (lhs: MediaDuration, rhs: MediaDuration) -> MediaDuration {
        MediaDuration(microseconds: lhs.microseconds - rhs.microseconds)
    }

    public static func * (lhs: MediaDuration, rhs: Int64) -> MediaDuration {
        MediaDuration(microseconds: lhs.microseconds * rhs)
    }

    public static func / (lhs: MediaDuration, rhs: Int64) -> MediaDuration {
        MediaDuration(microseconds: lhs.microseconds / rhs)
    }

    public var description: String {
        let sign = microseconds < 0 ? "-" : ""
        let magnitude = microseconds.magnitude
        let fraction = String(magnitude % 1_000_000)
        return sign + String(magnitude / 1_000_000) + "."
            + String(repeating: "0", count: 6 - fraction.count) + fraction + " s"
    }
}
