/// Why bytes could not be read or written as RTP, RTCP or SRTP: one line for a log, and a
/// case a counter can be keyed on. Packets from the network are untrusted: every parse that
/// fails returns one of these, never traps.
public enum RTPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes end before the structure they claim to hold does.
    case truncated(String)
    /// A field holds a value the format does not allow.
    case malformed(String)
    /// The caller's buffer is too small for what is to be written.
    case bufferTooSmall(needed: Int, available: Int)
    /// libsrtp2 refused (authentication failure, replay, bad key); its status code.
    case srtp(String, status: Int32)
    /// SRTP keying material that cannot be used (bad base64, wrong length). The message never
    /// holds key bytes.
    case invalidKey(String)
    /// The memory budget could not give what a structure needs.
    case outOfMemory(String)

    public var description: String {
        switch self {
        case .truncated(let m): "truncated: \(m)"
        case .malformed(let m): "malformed: \(m)"
        case .bufferTooSmall(let n, let a): "buffer too small: \(n) bytes needed, \(a) available"
        case .srtp(let m, let s): "srtp: \(m) (status \(s))"
        case .invalidKey(let m): "invalid SRTP key: \(m)"
        case .outOfMemory(let m): "out of budget: \(m)"
        }
    }
}
