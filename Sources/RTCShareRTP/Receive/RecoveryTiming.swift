// How long the receiver waits for a missing packet, and how far apart it asks again: the
// timing of loss recovery, following the path's round trip instead of fixed waits.
//
// Invariants:
// - The round trip comes from the receiver's own exchange: the time from a NACK to the packet
//   it asked for (only numbers asked for once, Karn's rule: the answer to a retry is ambiguous;
//   the receiver takes the time from the first NACK while nothing is measured, an upper bound),
//   smoothed as RFC 6298 does (srtt += (r − srtt)/8, rttvar += (|r − srtt| − rttvar)/4).
//   Before any answer came, `defaultRoundTrip` stands for it with a variance of half of it, so
//   a path far longer than the default is still covered by the first retries.
// - A NACK is asked again after one answer time: rtt + rttvar + a margin (the sender's
//   turnaround and our poll), so an answer on its way is rarely asked for twice (and the sender
//   does not resend a packet twice within its round trip anyway), while a lost answer is asked
//   for again soon enough for a second try to fit in the wait. The jitter that
//   counts is the round trip's own variation: the RTP interarrival jitter (RFC 3550 A.8) also
//   measures how unevenly the sender sends against its capture clock (a slow encoder, frame
//   repeats), which is not time a NACK's answer needs.
// - The playout wait of a hole is the reorder wait plus as many answer times as `attempts`,
//   within [minimum, maximum]: long enough for retries to arrive and be used, bounded so a
//   packet that cannot come costs a bounded freeze before the keyframe request.
// - Plain integers in microseconds; no clock inside.

/// The receiver's loss-recovery timing, sans-IO: round-trip samples in, waits out.
public struct RecoveryTiming: Sendable, Equatable {
    public struct Configuration: Sendable, Equatable {
        /// Stands for the round trip until one is measured.
        public var defaultRoundTripMicroseconds: Int64 = 100_000
        /// Added to each answer time: the sender's turnaround and the run loops' granularity.
        public var marginMicroseconds: Int64 = 15_000
        /// Added to a measured round trip (and twice its variation) before a NACK is asked again.
        public var retryMarginMicroseconds: Int64 = 5_000
        /// Answer times a hole is waited for (the NACK tries that can be answered in time).
        public var attempts: Int64 = 4
        public init() {}
    }

    public let configuration: Configuration
    /// Smoothed round trip and its variation (nil: nothing measured yet).
    public private(set) var smoothedRoundTripMicroseconds: Int64?
    public private(set) var roundTripVariationMicroseconds: Int64
    public private(set) var samples = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        roundTripVariationMicroseconds = max(0, configuration.defaultRoundTripMicroseconds / 2)
    }

    /// The round trip in use: measured, or the default.
    public var roundTripMicroseconds: Int64 {
        smoothedRoundTripMicroseconds ?? configuration.defaultRoundTripMicroseconds
    }

    /// A measured round trip (a NACK asked once and its answer). Out-of-range samples
    /// (negative, over 10 s) are ignored.
    public mutating func roundTripSample(_ microseconds: Int64) {
        guard microseconds >= 0, microseconds <= 10_000_000 else { return }
        samples += 1
        guard let srtt = smoothedRoundTripMicroseconds else {
            smoothedRoundTripMicroseconds = microseconds
            roundTripVariationMicroseconds = microseconds / 2
            return
        }
        roundTripVariationMicroseconds += (abs(microseconds - srtt) - roundTripVariationMicroseconds) / 4
        smoothedRoundTripMicroseconds = srtt + (microseconds - srtt) / 8
    }

    /// How long an answer to a NACK may take: the spacing between NACKs of one number.
    public var answerMicroseconds: Int64 {
        roundTripMicroseconds + roundTripVariationMicroseconds + configuration.marginMicroseconds
    }

    /// How soon a NACK is asked again once the round trip is measured: its mean plus twice its
    /// variation plus `retryMarginMicroseconds` — an answer later than that is most likely
    /// lost (a lost resend is the 5 % case that freezes a picture), and asking again costs a
    /// small RTCP packet, never a resend within the sender's round trip. Never later than
    /// `answerMicroseconds`, which also sizes the playout wait.
    public var retryMicroseconds: Int64 {
        guard let srtt = smoothedRoundTripMicroseconds else { return answerMicroseconds }
        return min(answerMicroseconds, srtt + 2 * roundTripVariationMicroseconds + configuration.retryMarginMicroseconds)
    }

    /// How long a hole is waited for before it is given up.
    public func playoutWaitMicroseconds(reorderWaitMicroseconds: Int64, minimum: Int64, maximum: Int64) -> Int64 {
        let wanted = reorderWaitMicroseconds + configuration.attempts * answerMicroseconds
        return min(max(wanted, minimum), max(minimum, maximum))
    }
}
