/// An SDP session description (RFC 8866), as rtcshare writes it for receivers (`--sdp FILE`)
/// and reads it back (`rtcshare receive --sdp FILE`, later WHIP answers).
///
/// The model keeps what the lines say, not an interpretation: session-level fields, then one
/// `MediaDescription` per `m=` line with its attributes in order. Typed accessors read the
/// attributes rtcshare uses (rtpmap, fmtp, rtcp-fb, extmap, crypto, ssrc, rtcp-mux).
///
/// Parsing takes untrusted text: the size and line count are capped, every line must be
/// `<letter>=<value>` without control characters, numbers are range-checked, and any failure is
/// one `SDPError` line naming the line number — never a trap.
public struct SessionDescription: Sendable, Equatable {
    /// `o=` username, session id and version, and the origin address (IP4/IP6 + address).
    public var originSessionID: UInt64
    public var originVersion: UInt64 = 1
    public var originAddress: String
    /// `s=`
    public var sessionName: String
    /// Session-level `c=` address (the receiver's, for a unicast description) and its family.
    public var connectionAddress: String?
    /// Session-level attributes (`a=group:BUNDLE …`, `a=ice-lite`, …) in order.
    public var attributes: [SDPAttribute] = []
    public var media: [MediaDescription] = []

    public init(originSessionID: UInt64, originAddress: String, sessionName: String = "rtcshare",
                connectionAddress: String?) {
        self.originSessionID = originSessionID
        self.originAddress = originAddress
        self.sessionName = sessionName
        self.connectionAddress = connectionAddress
    }

    /// Largest description `parse` accepts (bytes) and most lines.
    public static let maximumBytes = 64 << 10
    public static let maximumLines = 2000

    /// The description as text, CRLF line ends (RFC 8866 §5).
    public func render() -> String {
        var out = "v=0\r\n"
        out += "o=- \(originSessionID) \(originVersion) IN \(Self.family(originAddress)) \(originAddress)\r\n"
        out += "s=\(sessionName)\r\n"
        if let c = connectionAddress { out += "c=IN \(Self.family(c)) \(c)\r\n" }
        out += "t=0 0\r\n"
        for a in attributes { out += a.line }
        for m in media { out += m.render() }
        return out
    }

    static func family(_ address: String) -> String { address.contains(":") ? "IP6" : "IP4" }
}

/// One `a=` line: a name and, for `a=name:value`, its value.
public struct SDPAttribute: Sendable, Equatable {
    public var name: String
    public var value: String?

    public init(_ name: String, _ value: String? = nil) {
        self.name = name
        self.value = value
    }

    var line: String { value.map { "a=\(name):\($0)\r\n" } ?? "a=\(name)\r\n" }
}

/// One `m=` section.
public struct MediaDescription: Sendable, Equatable {
    public enum Kind: String, Sendable { case audio, video, application }

    public var kind: Kind
    public var port: Int
    /// `RTP/AVP`, `RTP/SAVP`, `UDP/TLS/RTP/SAVPF`, …
    public var transportProtocol: String
    public var payloadTypes: [Int]
    /// The formats of an `application` section (e.g. `webrtc-datachannel`), kept as written.
    public var applicationFormats: [String] = []
    /// A media-level `c=` address, if any.
    public var connectionAddress: String?
    /// `b=AS:` in kbit/s, if any.
    public var bandwidthKbps: Int?
    public var attributes: [SDPAttribute] = []

    public init(kind: Kind, port: Int, transportProtocol: String, payloadTypes: [Int]) {
        self.kind = kind
        self.port = port
        self.transportProtocol = transportProtocol
        self.payloadTypes = payloadTypes
    }

    func render() -> String {
        let formats = kind == .application ? applicationFormats : payloadTypes.map(String.init)
        var out = "m=\(kind.rawValue) \(port) \(transportProtocol) " + formats.joined(separator: " ") + "\r\n"
        if let c = connectionAddress { out += "c=IN \(SessionDescription.family(c)) \(c)\r\n" }
        if let b = bandwidthKbps { out += "b=AS:\(b)\r\n" }
        for a in attributes { out += a.line }
        return out
    }

    /// Values of every attribute named `name`, in order.
    public func values(of name: String) -> [String] {
        attributes.compactMap { $0.name == name ? ($0.value ?? "") : nil }
    }

    public func has(_ name: String) -> Bool { attributes.contains { $0.name == name } }

    public mutating func add(_ name: String, _ value: String? = nil) {
        attributes.append(SDPAttribute(name, value))
    }
}

/// What an `a=rtpmap` says of a payload type.
public struct RTPMap: Sendable, Equatable {
    public var payloadType: Int
    public var encodingName: String
    public var clockRate: Int
    public var channels: Int?

    public init(payloadType: Int, encodingName: String, clockRate: Int, channels: Int? = nil) {
        self.payloadType = payloadType
        self.encodingName = encodingName
        self.clockRate = clockRate
        self.channels = channels
    }

    /// `96 VP8/90000`, `111 opus/48000/2`.
    public var value: String {
        "\(payloadType) \(encodingName)/\(clockRate)" + (channels.map { "/\($0)" } ?? "")
    }
}

/// An `a=crypto` line (RFC 4568) with an inline master key: what SDES-keyed SRTP needs.
public struct SDESCrypto: Sendable, Equatable, CustomStringConvertible {
    public var tag: Int
    /// `AES_CM_128_HMAC_SHA1_80`, `AEAD_AES_128_GCM`, …
    public var suite: String
    /// The base64 of master key || master salt, without `inline:` and without lifetime/MKI
    /// (ffmpeg refuses those suffixes).
    public var keyBase64: String

    public init(tag: Int = 1, suite: String, keyBase64: String) {
        self.tag = tag
        self.suite = suite
        self.keyBase64 = keyBase64
    }

    public var value: String { "\(tag) \(suite) inline:\(keyBase64)" }

    /// Never prints the key.
    public var description: String { "crypto \(tag) \(suite) inline:<key>" }
}

extension MediaDescription {
    public var rtpMaps: [RTPMap] {
        values(of: "rtpmap").compactMap { v in
            let parts = v.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let pt = Int(parts[0]), (0...127).contains(pt) else { return nil }
            let codec = parts[1].split(separator: "/")
            guard codec.count >= 2, let rate = Int(codec[1]), rate > 0 else { return nil }
            let channels = codec.count > 2 ? Int(codec[2]) : nil
            return RTPMap(payloadType: pt, encodingName: String(codec[0]), clockRate: rate, channels: channels)
        }
    }

    /// The first payload type whose rtpmap names `encoding` (case-insensitive).
    public func payloadType(for encoding: String) -> Int? {
        rtpMaps.first { $0.encodingName.lowercased() == encoding.lowercased() }?.payloadType
    }

    /// `a=extmap:ID URI` as (id, uri).
    public var extensionMaps: [(id: Int, uri: String)] {
        values(of: "extmap").compactMap { v in
            let parts = v.split(separator: " ")
            guard parts.count >= 2 else { return nil }
            let idPart = parts[0].prefix { $0 != "/" }  // "1/sendonly"
            guard let id = Int(idPart), (1...255).contains(id) else { return nil }
            return (id, String(parts[1]))
        }
    }

    public func extensionID(for uri: String) -> Int? { extensionMaps.first { $0.uri == uri }?.id }

    /// The `a=crypto` lines with inline keys.
    public var cryptos: [SDESCrypto] {
        values(of: "crypto").compactMap { v in
            let parts = v.split(separator: " ")
            guard parts.count >= 3, let tag = Int(parts[0]), parts[2].hasPrefix("inline:") else { return nil }
            let key = parts[2].dropFirst("inline:".count).prefix { $0 != "|" }  // no |lifetime|MKI
            return SDESCrypto(tag: tag, suite: String(parts[1]), keyBase64: String(key))
        }
    }

    /// SSRCs of `a=ssrc:N attr` lines, in order of first appearance.
    public var ssrcs: [UInt32] {
        var seen: [UInt32] = []
        for v in values(of: "ssrc") {
            guard let n = v.split(separator: " ").first.flatMap({ UInt32($0) }), !seen.contains(n) else { continue }
            seen.append(n)
        }
        return seen
    }

    /// `a=rtcp-fb:PT kind` values for a payload type (or `*`).
    public func feedback(for payloadType: Int) -> [String] {
        values(of: "rtcp-fb").compactMap { v in
            let parts = v.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0] == "*" || Int(parts[0]) == payloadType else { return nil }
            return String(parts[1])
        }
    }

    /// `a=fmtp:PT params` for a payload type.
    public func formatParameters(for payloadType: Int) -> String? {
        values(of: "fmtp").lazy.compactMap { v -> String? in
            let parts = v.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, Int(parts[0]) == payloadType else { return nil }
            return String(parts[1])
        }.first
    }
}

/// Why a description could not be read: one line.
public struct SDPError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
    static func line(_ n: Int, _ what: String) -> SDPError { SDPError("sdp line \(n): \(what)") }
}

extension SessionDescription {
    /// Reads a description from untrusted text (LF or CRLF line ends).
    public static func parse(_ text: String) throws(SDPError) -> SessionDescription {
        guard text.utf8.count <= maximumBytes else {
            throw SDPError("sdp is \(text.utf8.count) bytes; at most \(maximumBytes) are read")
        }
        var result: SessionDescription? = nil
        var sawVersion = false
        var lineNumber = 0
        // "\r\n" is one Character in Swift: split on it and on a bare "\n".
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            guard lineNumber <= maximumLines else { throw SDPError("sdp has more than \(maximumLines) lines") }
            if line.isEmpty { continue }
            guard !line.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) else {
                throw .line(lineNumber, "control character")
            }
            let bytes = Array(line.utf8)
            guard bytes.count >= 2, bytes[1] == UInt8(ascii: "="),
                  (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[0]) else {
                throw .line(lineNumber, "not <letter>=<value>")
            }
            let type = Character(Unicode.Scalar(bytes[0]))
            let value = line.dropFirst(2)
            if !sawVersion {
                guard type == "v", value == "0" else { throw .line(lineNumber, "must be v=0") }
                sawVersion = true
                continue
            }
            switch type {
            case "o":
                let f = value.split(separator: " ")
                guard f.count == 6, let id = UInt64(f[1]), let version = UInt64(f[2]) else {
                    throw .line(lineNumber, "o= needs 6 fields with numeric session id and version")
                }
                guard result == nil else { throw .line(lineNumber, "second o= line") }
                result = SessionDescription(originSessionID: id, originAddress: String(f[5]), sessionName: "-",
                                            connectionAddress: nil)
                result!.originVersion = version
            case "s":
                guard result != nil else { throw .line(lineNumber, "s= before o=") }
                result!.sessionName = String(value)
            case "c":
                guard result != nil else { throw .line(lineNumber, "c= before o=") }
                let f = value.split(separator: " ")
                guard f.count == 3, f[0] == "IN", f[1] == "IP4" || f[1] == "IP6" else {
                    throw .line(lineNumber, "c= must be IN IP4|IP6 address")
                }
                let address = String(f[2].prefix { $0 != "/" })  // no /ttl
                guard !address.isEmpty else { throw .line(lineNumber, "c= has no address") }
                if result!.media.isEmpty {
                    result!.connectionAddress = address
                } else {
                    result!.media[result!.media.count - 1].connectionAddress = address
                }
            case "m":
                guard result != nil else { throw .line(lineNumber, "m= before o=") }
                let f = value.split(separator: " ")
                guard f.count >= 4, let kind = MediaDescription.Kind(rawValue: String(f[0])) else {
                    throw .line(lineNumber, "m= must be audio|video|application port proto formats")
                }
                guard let port = Int(f[1].prefix { $0 != "/" }), (0...65_535).contains(port) else {
                    throw .line(lineNumber, "m= port must be 0...65535")
                }
                var types: [Int] = []
                for t in f[3...] where kind != .application {
                    guard let pt = Int(t), (0...127).contains(pt) else {
                        throw .line(lineNumber, "payload type '\(t)' is not 0...127")
                    }
                    types.append(pt)
                }
                var section = MediaDescription(kind: kind, port: port, transportProtocol: String(f[2]),
                                               payloadTypes: types)
                if kind == .application { section.applicationFormats = f[3...].map(String.init) }
                result!.media.append(section)
            case "b":
                guard result != nil else { throw .line(lineNumber, "b= before o=") }
                if value.hasPrefix("AS:"), let kbps = Int(value.dropFirst(3)), kbps >= 0, !result!.media.isEmpty {
                    result!.media[result!.media.count - 1].bandwidthKbps = kbps
                }
            case "a":
                guard result != nil else { throw .line(lineNumber, "a= before o=") }
                let attribute: SDPAttribute
                if let colon = value.firstIndex(of: ":") {
                    attribute = SDPAttribute(String(value[..<colon]), String(value[value.index(after: colon)...]))
                } else {
                    attribute = SDPAttribute(String(value))
                }
                guard !attribute.name.isEmpty else { throw .line(lineNumber, "a= without a name") }
                if result!.media.isEmpty {
                    result!.attributes.append(attribute)
                } else {
                    result!.media[result!.media.count - 1].attributes.append(attribute)
                }
            default:
                continue  // t=, i=, u=, e=, p=, z=, k=, r=: nothing rtcshare uses
            }
        }
        guard sawVersion else { throw SDPError("sdp is empty") }
        guard let result else { throw SDPError("sdp has no o= line") }
        return result
    }
}
