// ICE's short-term credentials (RFC 8445 §5.3, RFC 8839 §5.4): a username fragment and a
// password made of ice-chars (ALPHA / DIGIT / "+" / "/"), ufrag 4...256 and password 22...256
// characters. The password's UTF-8 bytes are the MESSAGE-INTEGRITY key; the USERNAME of a
// check is "<receiver's ufrag>:<sender's ufrag>".
//
// Generated ones take 8 and 24 characters from the injected generator: 48 and 144 bits, above
// the 24 and 128 bits RFC 8445 asks for. The password never appears in a description or error.

/// A ufrag and password.
public struct ICECredentials: Equatable, Sendable, CustomStringConvertible {
    public let ufrag: String
    public let password: String

    static let iceChars = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func isIceChar(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z")) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z"))
            || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "+") || c == UInt8(ascii: "/")
    }

    /// Checks lengths and alphabet (as received in SDP `a=ice-ufrag` / `a=ice-pwd`).
    public init(ufrag: String, password: String) throws(ICEError) {
        guard (4...256).contains(ufrag.utf8.count), ufrag.utf8.allSatisfy(Self.isIceChar) else {
            throw .invalidCredentials("ufrag must be 4...256 ice-chars, got \(ufrag.utf8.count) bytes")
        }
        guard (22...256).contains(password.utf8.count), password.utf8.allSatisfy(Self.isIceChar) else {
            throw .invalidCredentials("password must be 22...256 ice-chars, got \(password.utf8.count) bytes")
        }
        self.ufrag = ufrag
        self.password = password
    }

    /// Fresh local credentials (pass a cryptographic generator outside tests).
    public static func generate(using generator: inout some RandomNumberGenerator) -> ICECredentials {
        func chars(_ n: Int) -> String {
            String(decoding: (0..<n).map { _ in iceChars[Int.random(in: 0..<64, using: &generator)] }, as: UTF8.self)
        }
        return try! ICECredentials(ufrag: chars(8), password: chars(24))
    }

    var key: [UInt8] { Array(password.utf8) }

    public var description: String { "ufrag \(ufrag), password (\(password.utf8.count) chars)" }
}
