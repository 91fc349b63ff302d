// When the newest video packet is not the last of its frame (no marker bit), the next one is
// due at once: a sender puts a frame's packets out together, paced a few milliseconds apart. A
// silence after it says the frame's tail was lost — the receiver asks for it then instead of
// when the next frame (a frame interval later) or an audio packet's transport-wide number
// shows the gap. Measured at 20 fps, 5 % loss, 40 ms round trip (`bench/run-network.sh
// random5_rtt40`, a capture of the relay's two sides): 47 of 84 lost packets were the last of
// their frame, 26 of them after an earlier packet of the frame had arrived; those were asked
// for up to 56 ms after they were due, against 14 at most for a packet lost inside a frame.
//
// Invariants:
// - Only the newest sequence number counts (serial arithmetic, RFC 1982): a retransmission or
//   a reordered older packet neither arms nor clears the watch.
// - The wait follows the spacing measured between consecutive packets of one frame (smoothed,
//   1/8 a sample): `waitSpacings` of it, within `minimumWaitMicroseconds` ...
//   `maximumWaitMicroseconds` — a pacer slowed by a thin path spaces packets further apart,
//   and a number asked for while its packet is still being paced only costs a duplicate.
// - `takeDue` says so once per unfinished packet. Times are passed in; nothing allocates.

/// Watches for a frame whose last packet never came, sans-IO.
public struct UnfinishedFrameWatch: Sendable, Equatable {
    public static let minimumWaitMicroseconds: Int64 = 10_000
    public static let maximumWaitMicroseconds: Int64 = 40_000
    public static let waitSpacings: Int64 = 3

    private struct Packet: Sendable, Equatable {
        var sequence: UInt16
        var timestamp: UInt32
        var arrival: Int64
    }

    private var newest: Packet?
    /// The newest packet is unfinished (no marker) and not yet reported.
    private var watching = false
    /// Smoothed spacing between consecutive packets of one frame.
    public private(set) var spacingMicroseconds: Int64?

    public init() {}

    /// A video packet arrived (first sending or repair).
    public mutating func videoArrived(sequence: UInt16, timestamp: UInt32, marker: Bool, at now: Int64) {
        if let n = newest {
            let ahead = sequence &- n.sequence
            guard ahead != 0, ahead < 0x8000 else { return }
            if ahead == 1, timestamp == n.timestamp, now >= n.arrival {
                let sample = now - n.arrival
                spacingMicroseconds = spacingMicroseconds.map { $0 + (sample - $0) / 8 } ?? sample
            }
        }
        newest = Packet(sequence: sequence, timestamp: timestamp, arrival: now)
        watching = !marker
    }

    /// How long a silence after an unfinished packet is waited out.
    public var waitMicroseconds: Int64 {
        let wanted = (spacingMicroseconds ?? 0) * Self.waitSpacings
        return min(max(wanted, Self.minimumWaitMicroseconds), Self.maximumWaitMicroseconds)
    }

    /// When the newest unfinished packet's wait ends, if one is being watched.
    public var deadline: Int64? { watching ? newest.map { $0.arrival + waitMicroseconds } : nil }

    /// Whether the packet after the newest is now overdue (once).
    public mutating func takeDue(at now: Int64) -> Bool {
        guard let d = deadline, now >= d else { return false }
        watching = false
        return true
    }
}
