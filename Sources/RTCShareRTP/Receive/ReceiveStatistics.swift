// What a receiver knows about one incoming RTP stream, and the reception report block it
// sends about it (RFC 3550 §6.4.1).
//
// Invariants (RFC 3550 Appendix A.1, A.3, A.8):
// - `cycles + maxSequence` is the extended highest sequence number; `cycles` counts wraps
//   (a multiple of 2^16). A jump of more than `maxDropout` ahead or `maxMisorder` behind is
//   not believed until the next packet follows it: then the stream restarts its counts there
//   (the sender restarted), as A.1's `bad_seq` does.
// - expected = extended highest − base + 1; lost = expected − received, which duplicates can
//   make negative; the report clamps it to 24 signed bits.
// - The fraction lost covers the interval since the previous report (expected and received
//   at that report are kept), 0 when the interval had no loss or more packets than expected.
// - Jitter is kept scaled by 16 (A.8's integer form): J += |D| − J/16, reported as J/16, in
//   RTP timestamp units. Retransmitted packets do not update it (their transit is not the
//   path's).
// - Times are passed in (microseconds of one monotonic clock); nothing here reads a clock.

/// Receive-side counters of one SSRC and its report block. A value type; allocates nothing.
public struct ReceiveStatistics: Sendable {
    public static let maxDropout: UInt16 = 3000
    public static let maxMisorder: UInt16 = 100

    public let ssrc: UInt32
    /// RTP timestamp ticks per second (90000 video, 48000 Opus).
    public let clockRate: Int

    private var started = false
    public private(set) var maxSequence: UInt16 = 0
    private var cycles: UInt32 = 0
    private var baseSequence: UInt32 = 0
    /// The sequence number after an unbelievable jump (A.1's bad_seq); `UInt32.max`: none.
    private var badSequence: UInt32 = UInt32.max
    /// Packets received, duplicates and retransmissions included (A.3).
    public private(set) var received: UInt64 = 0
    private var expectedPrior: Int64 = 0
    private var receivedPrior: UInt64 = 0
    private var lastTransit: Int64?
    private var scaledJitter: Int64 = 0
    /// LSR of the last sender report from this source and when it arrived.
    private var lastSenderReport: (middle32: UInt32, arrival: Int64)?

    public init(ssrc: UInt32, clockRate: Int) {
        self.ssrc = ssrc
        self.clockRate = max(clockRate, 1)
    }

    /// The extended highest sequence number received (A.3's `cycles + max_seq`).
    public var extendedHighestSequence: UInt32 { cycles &+ UInt32(maxSequence) }

    /// Packets expected from the first to the highest received.
    public var expected: Int64 {
        started ? Int64(extendedHighestSequence) - Int64(baseSequence) + 1 : 0
    }

    /// expected − received (negative with duplicates).
    public var cumulativeLost: Int64 { expected - Int64(received) }

    /// Interarrival jitter in RTP timestamp units.
    public var jitter: UInt32 { UInt32(clamping: scaledJitter >> 4) }

    /// Interarrival jitter in microseconds.
    public var jitterMicroseconds: Int64 { Int64(jitter) * 1_000_000 / Int64(clockRate) }

    /// Counts one packet (A.1 `update_seq`). A retransmission (a repair of a lost packet) moves
    /// the highest sequence number like any packet but is neither counted as received nor
    /// timed for jitter: the report then gives the path's loss before repair, as RFC 4588 RTX
    /// does by itself (its repairs come on another SSRC), which is what a sender's rate control
    /// needs.
    /// Returns false for a packet taken as a bad jump (not counted; a second one in sequence
    /// after it restarts the stream's counts).
    @discardableResult
    public mutating func received(sequenceNumber seq: UInt16, rtpTimestamp: UInt32, arrival: Int64,
                                  isRetransmission: Bool = false) -> Bool {
        guard started else {
            restart(at: seq)
            started = true
            received = 1
            updateJitter(rtpTimestamp: rtpTimestamp, arrival: arrival, isRetransmission: isRetransmission)
            return true
        }
        let delta = seq &- maxSequence
        if delta < Self.maxDropout {
            // In order, possibly with a gap.
            if seq < maxSequence { cycles &+= 1 << 16 }
            maxSequence = seq
        } else if delta <= UInt16.max &- Self.maxMisorder &+ 1 {
            // A very large jump: believe it only if the next packet follows it.
            if UInt32(seq) == badSequence {
                restart(at: seq)
                received = 0
                expectedPrior = 0
                receivedPrior = 0
            } else {
                badSequence = UInt32(seq &+ 1)
                return false
            }
        }
        // else: duplicate or reordered, within the misorder window.
        if !isRetransmission { received += 1 }
        updateJitter(rtpTimestamp: rtpTimestamp, arrival: arrival, isRetransmission: isRetransmission)
        return true
    }

    private mutating func restart(at seq: UInt16) {
        maxSequence = seq
        cycles = 0
        baseSequence = UInt32(seq)
        badSequence = UInt32.max
        lastTransit = nil
    }

    private mutating func updateJitter(rtpTimestamp: UInt32, arrival: Int64, isRetransmission: Bool) {
        guard !isRetransmission else { return }
        // Arrival in RTP units; only differences matter, so the 32-bit wrap is handled by
        // taking the transit difference modulo 2^32 as a signed value.
        let arrivalTicks = arrival &* Int64(clockRate) / 1_000_000
        let transit = Int64(UInt32(truncatingIfNeeded: arrivalTicks) &- rtpTimestamp)
        if let last = lastTransit {
            let d = Int64(Int32(truncatingIfNeeded: transit &- last)).magnitude
            scaledJitter += Int64(d) - ((scaledJitter + 8) >> 4)
        }
        lastTransit = transit
    }

    /// Notes a sender report from this source (its NTP time) that arrived at `arrival`.
    public mutating func senderReportReceived(ntpTime: NTPTime, arrival: Int64) {
        lastSenderReport = (ntpTime.middle32, arrival)
    }

    /// The report block for a report sent at `now`; starts a new interval for the fraction
    /// lost. Nil before the first packet.
    public mutating func makeReportBlock(now: Int64) -> RTCPReportBlock? {
        guard started else { return nil }
        let expectedNow = expected
        let expectedInterval = expectedNow - expectedPrior
        let receivedInterval = Int64(received) - Int64(receivedPrior)
        expectedPrior = expectedNow
        receivedPrior = received
        let lostInterval = expectedInterval - receivedInterval
        let fraction: UInt8 = expectedInterval <= 0 || lostInterval <= 0
            ? 0 : UInt8(clamping: (lostInterval << 8) / expectedInterval)
        let range = RTCPReportBlock.cumulativeLostRange
        let lost = Int32(clamping: min(max(cumulativeLost, Int64(range.lowerBound)), Int64(range.upperBound)))
        var lsr: UInt32 = 0, dlsr: UInt32 = 0
        if let sr = lastSenderReport {
            lsr = sr.middle32
            let waited = max(0, now - sr.arrival)
            dlsr = UInt32(clamping: waited * 65_536 / 1_000_000)
        }
        return RTCPReportBlock(ssrc: ssrc, fractionLost: fraction, cumulativeLost: lost,
                               extendedHighestSequence: extendedHighestSequence, jitter: jitter,
                               lastSenderReport: lsr, delaySinceLastSenderReport: dlsr)
    }
}
