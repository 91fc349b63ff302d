// Times of the ICE agent: microseconds of one monotonic clock that the caller reads (the run
// loop at the edge, a fake clock in tests). Defined here rather than reusing RTCShareMedia's
// MediaTime so that this module needs neither the codecs nor the media layer; the values are
// the same microseconds, so converting is `ICETime(microseconds: t.microseconds)`.

/// An instant, in microseconds since the clock's arbitrary origin.
public struct ICETime: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    public static let zero = ICETime(microseconds: 0)

    public static func milliseconds(_ value: Int64) -> ICETime { ICETime(microseconds: value * 1_000) }
    public static func seconds(_ value: Int64) -> ICETime { ICETime(microseconds: value * 1_000_000) }

    public static func < (a: ICETime, b: ICETime) -> Bool { a.microseconds < b.microseconds }
    public static func + (a: ICETime, b: ICEDuration) -> ICETime { ICETime(microseconds: a.microseconds + b.microseconds) }
    public static func - (a: ICETime, b: ICETime) -> ICEDuration { ICEDuration(microseconds: a.microseconds - b.microseconds) }

    public var description: String { "t=\(ICEDuration(microseconds: microseconds))" }
}

/// A span of time in microseconds.
public struct ICEDuration: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    public static func milliseconds(_ value: Int64) -> ICEDuration { ICEDuration(microseconds: value * 1_000) }
    public static func seconds(_ value: Int64) -> ICEDuration { ICEDuration(microseconds: value * 1_000_000) }

    public static func < (a: ICEDuration, b: ICEDuration) -> Bool { a.microseconds < b.microseconds }
    public static func * (a: ICEDuration, b: Int64) -> ICEDuration { ICEDuration(microseconds: a.microseconds * b) }

    public var description: String {
        let ms = microseconds / 1_000
        return microseconds % 1_000 == 0 ? "\(ms) ms" : "\(microseconds) µs"
    }
}
