import CCore
import Glibc

/// Why a core operation failed: a CCore call (this is the one mapping point from
/// `ccore_status` to Swift), a read from a `ByteSource`, or a `ByteReader`/`ByteWriter` that
/// ran out of bytes. Wire formats turn the last two into their own errors at their edge.
public enum CoreError: Error, Equatable, CustomStringConvertible {
    /// An argument was out of range or inconsistent.
    case invalidArgument
    /// The memory budget's hard cap would be exceeded.
    case budgetExceeded
    /// Every slot of a pool is in use.
    case poolExhausted
    /// A caller-given buffer is smaller than the operation needs.
    case bufferTooSmall
    /// The object still has users.
    case busy
    /// A status this layer does not know (never expected).
    case unknown(Int32)
    /// A `ByteSource` could not be read: what it reads (a path) and the C error number.
    case readFailed(source: String, errno: Int32)
    /// A `ByteReader` was asked for `needed` bytes at `offset` with only `available` left.
    case readPastEnd(offset: Int, needed: Int, available: Int)
    /// A `ByteWriter` had to write `needed` bytes at `offset` into a buffer of `available`.
    case writePastEnd(offset: Int, needed: Int, available: Int)

    /// Maps a failing status; returns nil for the two success statuses.
    init?(status: ccore_status) {
        switch status {
        case CCORE_OK, CCORE_DROPPED_OLDEST: return nil
        case CCORE_ERR_INVALID: self = .invalidArgument
        case CCORE_ERR_NO_MEMORY: self = .budgetExceeded
        case CCORE_ERR_EXHAUSTED: self = .poolExhausted
        case CCORE_ERR_TOO_SMALL: self = .bufferTooSmall
        case CCORE_ERR_BUSY: self = .busy
        default: self = .unknown(status.rawValue)
        }
    }

    /// Throws the error for a failing status.
    static func check(_ status: ccore_status) throws(CoreError) {
        if let error = CoreError(status: status) { throw error }
    }

    public var description: String {
        switch self {
        case .invalidArgument: "invalid argument"
        case .budgetExceeded: "memory budget exceeded"
        case .poolExhausted: "pool exhausted"
        case .bufferTooSmall: "buffer too small"
        case .busy: "still in use"
        case .unknown(let raw): "unexpected status \(raw)"
        case .readFailed(let source, let errno): "read \(source): \(String(cString: strerror(errno)))"
        case .readPastEnd(let offset, let needed, let available):
            "\(needed) bytes at offset \(offset) run past the end (\(available) left)"
        case .writePastEnd(let offset, let needed, let available):
            "\(needed) bytes at offset \(offset) do not fit a buffer of \(available)"
        }
    }
}
