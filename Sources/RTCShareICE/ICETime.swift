// Times of the ICE agent are the core layer's media clock: microseconds of one monotonic clock
// that the caller reads (the run loop at the edge, a fake clock in tests). ICE once had its own
// twin of these types because it could not see the media module; now that they live in
// RTCShareCore the old names remain only as names.

import RTCShareCore

/// An instant on the clock the ICE agent is driven by.
public typealias ICETime = MediaTime

/// A span of time for the ICE agent (its timeouts and intervals).
public typealias ICEDuration = MediaDuration

extension MediaDuration {
    /// How the agent's messages say a span ("1000 ms", or "400 µs" when not whole
    /// milliseconds): what its failure and gathering texts have always printed.
    var iceText: String {
        let ms = microseconds / 1_000
        return microseconds % 1_000 == 0 ? "\(ms) ms" : "\(microseconds) µs"
    }
}
