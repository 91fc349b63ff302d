/// One HTTP request the WHIP client makes, and the response it got, as plain values: what
/// goes into libcurl and what comes out, with no libcurl type in sight.
struct HTTPRequest: Sendable {
    var method: String
    var url: String
    /// Complete header lines without CRLF (`Content-Type: application/sdp`).
    var headers: [String] = []
    var body: String?
    var connectTimeout: Double
    var totalTimeout: Double
    /// 0: redirects are not followed.
    var maximumRedirects: Int
    /// Largest body read; a larger one fails the request with `responseTooLarge`.
    var maximumBodyBytes: Int
    /// Texts that must not appear in any error this request produces (the bearer token).
    var secrets: [String] = []
    /// Raised: the request is not sent, or is given up at once (`WHIPError.stopped`).
    var stop: WHIPStop?
}

/// The last response of a request (after any redirects it followed).
struct HTTPResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]
    /// The URL that produced this response: the request's, or where the redirects led.
    var effectiveURL: String
}

/// Response header fields in order, names compared without regard to case (RFC 9110 §5.1).
struct HTTPHeaders: Sendable, Equatable {
    private(set) var fields: [(name: String, value: String)] = []

    /// Reads the raw header block libcurl hands over: a status line, `Name: value` lines, a
    /// blank line. Lines without a colon (the status line) are skipped; values are trimmed.
    init(raw: some Collection<UInt8>) {
        var line: [UInt8] = []
        for b in raw {
            if b == 0x0A {
                add(line)
                line.removeAll(keepingCapacity: true)
            } else if b != 0x0D {
                line.append(b)
            }
        }
        add(line)
    }

    init(_ fields: [(String, String)]) { self.fields = fields.map { (name: $0.0, value: $0.1) } }

    private mutating func add(_ line: [UInt8]) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return }
        let name = String(decoding: line[..<colon], as: UTF8.self)
        guard !name.contains(" "), !name.hasPrefix("HTTP/") else { return }
        let value = String(decoding: line[(colon + 1)...], as: UTF8.self)
        fields.append((name, value.trimmingSpaces))
    }

    /// The first value of a field.
    subscript(name: String) -> String? { values(name).first }

    /// Every value of a field, in order (`Link` may come several times).
    func values(_ name: String) -> [String] {
        let key = name.lowercased()
        return fields.compactMap { $0.name.lowercased() == key ? $0.value : nil }
    }

    static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.count == b.fields.count && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
