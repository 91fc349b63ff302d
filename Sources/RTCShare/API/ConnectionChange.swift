/// A network output's connection went away and is being made again, or came back.
public enum ConnectionChange: Sendable, Equatable {
    /// Attempt `attempt` (1, 2, …) to publish again comes in `retryInMilliseconds`; `reason`:
    /// what was lost or what failed, one line.
    case reconnecting(attempt: Int, reason: String, retryInMilliseconds: Int64)
    /// Media flows again, this long after the connection was lost.
    case reconnected(afterMilliseconds: Int64)
}
