// Which packets were just resent, so a NACK repeated before the first resend could have
// arrived (a receiver asking again too early, or two NACKs of one loss in flight) does not send
// the same packet twice within a round trip: the duplicate would only add to the loss it is
// repairing. A NACK that comes again later (the resend was lost too) is answered twice over
// (`RTPSender`). A fixed table indexed by the low bits of the sequence number; a colliding number
// simply replaces the older entry (at worst one extra resend). Times are passed in.

/// The resend time of recent sequence numbers, sans-IO.
public struct RecentRetransmissions: Sendable {
    private static let size = 1024
    private var sequence = [UInt16](repeating: 0, count: size)
    private var sentAt = [Int64](repeating: Int64.min, count: size)

    public init() {}

    /// Whether `seq` was resent less than `spacingMicroseconds` before `nowMicroseconds`.
    public func isRecent(_ seq: UInt16, nowMicroseconds: Int64, spacingMicroseconds: Int64) -> Bool {
        lastResend(seq).map { nowMicroseconds - $0 < spacingMicroseconds } ?? false
    }

    /// When `seq` was last resent, if the table still knows.
    public func lastResend(_ seq: UInt16) -> Int64? {
        let i = Int(seq) & (Self.size - 1)
        return sequence[i] == seq && sentAt[i] != Int64.min ? sentAt[i] : nil
    }

    /// `seq` was resent at `nowMicroseconds`.
    public mutating func note(_ seq: UInt16, nowMicroseconds: Int64) {
        let i = Int(seq) & (Self.size - 1)
        sequence[i] = seq
        sentAt[i] = nowMicroseconds
    }
}
