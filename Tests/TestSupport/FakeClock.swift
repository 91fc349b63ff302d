import RTCShareCore

/// The tests' stand-in for the monotonic clock: time moves only when a test moves it, and never
/// backwards. It starts well away from zero so timestamps derived from it are not trivially small.
public struct FakeClock: Sendable {
    public private(set) var now: MediaTime

    public init(start: MediaTime = .seconds(1_000)) {
        now = start
    }

    public mutating func advance(to time: MediaTime) {
        precondition(time >= now, "the fake clock only moves forward")
        now = time
    }

    public mutating func advance(by duration: MediaDuration) {
        advance(to: now + duration)
    }
}
