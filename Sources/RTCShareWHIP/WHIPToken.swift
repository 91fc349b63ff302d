import Glibc

/// A WHIP bearer token (RFC 9725 §4.5, RFC 6750): a secret that goes into one header and
/// nowhere else.
///
/// Every textual form of the value — `description`, `debugDescription`, reflection, string
/// interpolation — prints `<token>`; only the HTTP client reads `secret`. The value is checked
/// on the way in, because it ends up inside an HTTP header: no control characters (a CR or LF
/// would let the token inject headers), no spaces around it, at most `maximumBytes`.
public struct WHIPToken: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
                         CustomReflectable {
    /// Largest token accepted (bytes); a token file larger than this is refused unread.
    public static let maximumBytes = 4096

    let secret: String

    public init(_ value: String) throws(WHIPError) {
        guard !value.isEmpty else { throw .badToken("is empty") }
        guard value.utf8.count <= Self.maximumBytes else {
            throw .badToken("is longer than \(Self.maximumBytes) bytes")
        }
        // RFC 6750 b64token plus anything printable: a visible ASCII character each.
        guard value.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .badToken("holds a space, a control or a non-ASCII character")
        }
        secret = value
    }

    /// Reads a token from a file (`--token-file`, so the secret stays off the command line):
    /// one trailing newline (LF or CRLF) is removed; an empty file, a file larger than
    /// `maximumBytes` (plus the newline), or one holding anything else than the token is refused.
    public static func read(fromFile path: String) throws(WHIPError) -> WHIPToken {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .badToken("cannot open the token file '\(path)': \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let capacity = maximumBytes + 3  // the token, CRLF, and one byte to tell "too large"
        var bytes = [UInt8](repeating: 0, count: capacity)
        var length = 0
        while length < capacity {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + length, capacity - length) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .badToken("cannot read the token file '\(path)': \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            length += n
        }
        var end = length
        if end > 0, bytes[end - 1] == 0x0A { end -= 1 }
        if end > 0, bytes[end - 1] == 0x0D { end -= 1 }
        guard end > 0 else { throw .badToken("the token file '\(path)' is empty") }
        guard end <= maximumBytes else {
            throw .badToken("the token file '\(path)' is larger than \(maximumBytes) bytes")
        }
        guard let text = String(validating: bytes[..<end], as: UTF8.self) else {
            throw .badToken("the token file '\(path)' is not text")
        }
        return try WHIPToken(text)
    }

    public var description: String { "<token>" }
    public var debugDescription: String { "WHIPToken(<token>)" }
    public var customMirror: Mirror { Mirror(self, children: []) }
}
