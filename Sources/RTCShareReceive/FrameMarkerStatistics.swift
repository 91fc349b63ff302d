// What the test source's frame marker says about the frames a receiver decoded.
//
// Invariants:
// - Counters are unwrapped against the highest seen (nearest value, ±2^31), so a wrap of the
//   32-bit frame counter continues the count.
// - A counter equal to the previous frame's is a repeat (the sender's filler re-sends a kept
//   frame on a static screen): counted, not an error, and not timed (its capture time is the
//   original's).
// - A counter above highest + 1 opens a gap of `counter − highest − 1` frames, counted skipped
//   (source frames never seen: thinned or dropped by the sender, or lost on the way); one of
//   them arriving later (within the last `window` counters, remembered in a bitmap) takes one
//   back off `skipped` and counts as out of order. Counters before the first frame seen are
//   never counted (the receiver may start late).
// - A freeze is a wall-clock gap between consecutive decoded frames above the threshold. With a
//   settle time, the gaps that end that long or longer after the first decoded frame are also
//   counted apart (a sender's start, its convergence on a thin path, left out).
// - Latency is now − capture time, both low 32 bits of CLOCK_MONOTONIC in µs (same host),
//   recorded for first sightings only; values outside 0 ..< 10 s are not recorded (another
//   host's clock).
// - Fixed memory: the bitmap and the histogram are allocated at init.

/// Frame-marker accounting of decoded frames, sans-IO: (counter, capture time, now) in.
public struct FrameMarkerStatistics: Sendable {
    /// Counters remembered for out-of-order detection.
    public static let window = 1024
    /// Latencies at or above this are not recorded (clocks of different hosts).
    public static let maximumLatencyMicroseconds: Int64 = 10_000_000

    public let freezeThresholdMicroseconds: Int64
    /// Decoded frames (with or without a readable marker).
    public private(set) var frames: UInt64 = 0
    /// Decoded frames whose marker could not be read.
    public private(set) var unreadable: UInt64 = 0
    /// Source frames (marker counters) never seen; see the invariants above.
    public private(set) var skipped: Int64 = 0
    public private(set) var repeated: UInt64 = 0
    public private(set) var outOfOrder: UInt64 = 0
    public private(set) var freezes: UInt64 = 0
    /// Sum of the wall-clock gaps counted as freezes.
    public private(set) var freezeMicroseconds: Int64 = 0
    /// The longest wall-clock gap between two consecutive decoded frames (the longest freeze).
    public private(set) var longestGapMicroseconds: Int64 = 0
    /// The same for the gaps ending `settleMicroseconds` or more after the first decoded frame,
    /// and how many of those were freezes (nil, 0 without a settle time).
    public let settleMicroseconds: Int64?
    public private(set) var longestGapAfterSettleMicroseconds: Int64?
    public private(set) var freezesAfterSettle: UInt64 = 0
    private var firstFrameTime: Int64?
    public private(set) var latency = LatencyHistogram()
    /// Counters of the first and the highest marker read.
    public private(set) var firstCounter: Int64?
    public private(set) var highestCounter: Int64 = 0
    private var previousCounter: Int64?
    private var previousFrameTime: Int64?
    private var seen: [UInt64]

    public init(freezeThresholdMicroseconds: Int64 = 200_000, settleMicroseconds: Int64? = nil) {
        self.freezeThresholdMicroseconds = freezeThresholdMicroseconds
        self.settleMicroseconds = settleMicroseconds
        longestGapAfterSettleMicroseconds = settleMicroseconds.map { _ in 0 }
        seen = Array(repeating: 0, count: Self.window / 64)
    }

    private func isSeen(_ c: Int64) -> Bool {
        let b = Int(c & Int64(Self.window - 1))
        return seen[b >> 6] & (1 << UInt64(b & 63)) != 0
    }

    private mutating func mark(_ c: Int64, _ value: Bool) {
        let b = Int(c & Int64(Self.window - 1))
        if value { seen[b >> 6] |= 1 << UInt64(b & 63) } else { seen[b >> 6] &= ~(1 << UInt64(b & 63)) }
    }

    /// A decoded frame at `now` (µs, CLOCK_MONOTONIC) and what its marker read as (nil:
    /// unreadable).
    public mutating func frameDecoded(marker: (counter: UInt32, captureMicrosLow: UInt32)?, now: Int64) {
        frames += 1
        if let last = previousFrameTime { longestGapMicroseconds = max(longestGapMicroseconds, now - last) }
        if let last = previousFrameTime, now - last > freezeThresholdMicroseconds {
            freezes += 1
            freezeMicroseconds += now - last
        }
        if let last = previousFrameTime, let settle = settleMicroseconds, let first = firstFrameTime,
           now - first >= settle {
            longestGapAfterSettleMicroseconds = max(longestGapAfterSettleMicroseconds ?? 0, now - last)
            if now - last > freezeThresholdMicroseconds { freezesAfterSettle += 1 }
        }
        if firstFrameTime == nil { firstFrameTime = now }
        previousFrameTime = now
        guard let marker else {
            unreadable += 1
            return
        }
        let c: Int64
        if firstCounter == nil {
            c = Int64(marker.counter)
            firstCounter = c
            highestCounter = c
            mark(c, true)
            previousCounter = c
            recordLatency(marker.captureMicrosLow, now: now)
            return
        } else {
            c = highestCounter + Int64(Int32(bitPattern: marker.counter &- UInt32(truncatingIfNeeded: highestCounter)))
        }
        defer { previousCounter = c }
        if c == previousCounter {
            repeated += 1
            return
        }
        if c > highestCounter {
            // Clear the bits of the counters now entering the window, then note the gap.
            var k = max(highestCounter + 1, c - Int64(Self.window) + 1)
            while k <= c {
                mark(k, false)
                k += 1
            }
            skipped += c - highestCounter - 1
            highestCounter = c
            mark(c, true)
            recordLatency(marker.captureMicrosLow, now: now)
            return
        }
        // Below the highest: a gap filled late, or an old frame again.
        if c <= highestCounter - Int64(Self.window) || c < (firstCounter ?? c) {
            outOfOrder += 1
            return
        }
        if isSeen(c) {
            repeated += 1
        } else {
            mark(c, true)
            skipped -= 1
            outOfOrder += 1
            recordLatency(marker.captureMicrosLow, now: now)
        }
    }

    private mutating func recordLatency(_ captureLow: UInt32, now: Int64) {
        let delta = Int64(UInt32(truncatingIfNeeded: now) &- captureLow)
        if delta < Self.maximumLatencyMicroseconds { latency.record(microseconds: delta) }
    }
}
