/// Why bytes could not be read or written as STUN, or a candidate, address or credential was
/// refused: one line for a log, and a case a counter can be keyed on. Datagrams and SDP lines
/// from the network are untrusted: every parse that fails returns one of these, never traps.
public enum ICEError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes end before the structure they claim to hold does.
    case truncated(String)
    /// A field holds a value the format does not allow.
    case malformed(String)
    /// The caller's buffer is too small for what is to be written.
    case bufferTooSmall(needed: Int, available: Int)
    /// An `a=candidate` line that does not follow RFC 8839 §5.1.
    case invalidCandidate(String)
    /// Text that is not a numeric IPv4 or IPv6 address (names are never resolved here).
    case invalidAddress(String)
    /// A ufrag or password outside RFC 8839's lengths or alphabet. Never holds the password.
    case invalidCredentials(String)

    public var description: String {
        switch self {
        case .truncated(let m): "truncated: \(m)"
        case .malformed(let m): "malformed: \(m)"
        case .bufferTooSmall(let n, let a): "buffer too small: \(n) bytes needed, \(a) available"
        case .invalidCandidate(let m): "invalid candidate: \(m)"
        case .invalidAddress(let m): "invalid address: \(m)"
        case .invalidCredentials(let m): "invalid ICE credentials: \(m)"
        }
    }
}
