import Foundation

/// Waits for something the test can observe (a file, a line of output, a port bound, a count)
/// instead of sleeping for a time it hopes is long enough: returns as soon as `condition` holds,
/// or false once `timeout` seconds have passed. Polls every `interval` seconds; the condition is
/// checked once more at the deadline, so a slow machine only makes the test slower.
@discardableResult
public func waitUntil(timeout: TimeInterval, interval: TimeInterval = 0.01,
                      _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        usleep(useconds_t(interval * 1_000_000))
    }
    return try condition()
}
