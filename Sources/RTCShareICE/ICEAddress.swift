// A transport address as ICE sees it: an IPv4 or IPv6 address and a UDP port, held inline as
// a plain value (no sockaddr, no allocation) so that candidates, pairs and STUN attributes can
// be compared and hashed cheaply. The IO edge converts to and from its socket addresses.
//
// Text forms are numeric only: dotted quad for IPv4 and RFC 4291 §2.2 text for IPv6 (with
// `::` and an optional trailing dotted quad); written back in RFC 5952's canonical form.
// Names — including mDNS `.local` names — are never resolved here.

/// An IPv4 or IPv6 address with a port.
public struct ICEAddress: Hashable, Sendable, CustomStringConvertible {
    public enum Family: UInt8, Sendable {
        /// The STUN address family codes (RFC 5389 §15.1).
        case ipv4 = 0x01
        case ipv6 = 0x02
    }

    public let family: Family
    /// The address, big-endian as on the wire: an IPv4 address in the low 32 bits of `low`.
    let high: UInt64
    let low: UInt64
    public var port: UInt16

    /// The IPv4 address in host byte order; nil for IPv6.
    public var ipv4: UInt32? { family == .ipv4 ? UInt32(truncatingIfNeeded: low) : nil }

    /// The IPv6 address as two halves in host byte order; nil for IPv4.
    public var ipv6: (high: UInt64, low: UInt64)? { family == .ipv6 ? (high, low) : nil }

    /// Bytes of the address on the wire: 4 or 16.
    public var addressSize: Int { family == .ipv4 ? 4 : 16 }

    public init(ipv4: UInt32, port: UInt16) {
        family = .ipv4
        high = 0
        low = UInt64(ipv4)
        self.port = port
    }

    public init(ipv6High: UInt64, low: UInt64, port: UInt16) {
        family = .ipv6
        high = ipv6High
        self.low = low
        self.port = port
    }

    /// From `addressSize` network-order bytes (4 or 16).
    init(family: Family, bytes: UnsafeRawBufferPointer, port: UInt16) {
        if family == .ipv4 {
            self.init(ipv4: bytes.stunU32(0), port: port)
        } else {
            self.init(ipv6High: bytes.stunU64(0), low: bytes.stunU64(8), port: port)
        }
    }

    /// Parses a numeric host (`192.0.2.1`, `2001:db8::1`, no brackets) and takes `port`.
    public init(host: some StringProtocol, port: UInt16) throws(ICEError) {
        let utf8 = Array(host.utf8)
        if let v4 = Self.parseIPv4(utf8[...]) {
            self.init(ipv4: v4, port: port)
        } else if let (h, l) = Self.parseIPv6(utf8[...]) {
            self.init(ipv6High: h, low: l, port: port)
        } else {
            throw .invalidAddress("'\(host.prefix(64))' is not a numeric IPv4 or IPv6 address")
        }
    }

    /// Parses `host:port` or `[v6-host]:port`, numeric only.
    public init(parsing text: some StringProtocol) throws(ICEError) {
        let s = String(text)
        let host: Substring
        let portText: Substring
        if s.hasPrefix("[") {
            guard let close = s.firstIndex(of: "]"), s[s.index(after: close)...].hasPrefix(":") else {
                throw .invalidAddress("'\(s.prefix(64))' is not [host]:port")
            }
            host = s[s.index(after: s.startIndex)..<close]
            portText = s[s.index(close, offsetBy: 2)...]
        } else {
            guard let colon = s.lastIndex(of: ":"), !s[..<colon].contains(":") else {
                throw .invalidAddress("'\(s.prefix(64))' is not host:port (an IPv6 host needs brackets)")
            }
            host = s[..<colon]
            portText = s[s.index(after: colon)...]
        }
        guard let port = UInt16(portText) else { throw .invalidAddress("port '\(portText.prefix(16))'") }
        try self.init(host: host, port: port)
    }

    /// Writes the address bytes (4 or 16) at `offset`, each XORed with `mask` when given (the
    /// XOR-MAPPED-ADDRESS form, `mask` being cookie + transaction ID).
    func writeAddress(into buffer: UnsafeMutableRawBufferPointer, at offset: Int, xor mask: (UInt64, UInt64) = (0, 0)) {
        if family == .ipv4 {
            buffer.stunPut32(UInt32(truncatingIfNeeded: low ^ (mask.0 >> 32)), at: offset)
        } else {
            buffer.stunPut64(high ^ mask.0, at: offset)
            buffer.stunPut64(low ^ mask.1, at: offset + 8)
        }
    }

    /// The same address with the bits of `mask` flipped (IPv4 uses the top 32 bits of `mask.0`).
    func xored(_ mask: (UInt64, UInt64), portMask: UInt16) -> ICEAddress {
        if family == .ipv4 {
            return ICEAddress(ipv4: UInt32(truncatingIfNeeded: low ^ (mask.0 >> 32)), port: port ^ portMask)
        }
        return ICEAddress(ipv6High: high ^ mask.0, low: low ^ mask.1, port: port ^ portMask)
    }

    /// The address without the port, in canonical text.
    public var host: String {
        if family == .ipv4 {
            let v = UInt32(truncatingIfNeeded: low)
            return "\(v >> 24).\((v >> 16) & 0xFF).\((v >> 8) & 0xFF).\(v & 0xFF)"
        }
        var groups = [UInt16]()
        for i in 0..<4 { groups.append(UInt16(truncatingIfNeeded: high >> (48 - 16 * UInt64(i)))) }
        for i in 0..<4 { groups.append(UInt16(truncatingIfNeeded: low >> (48 - 16 * UInt64(i)))) }
        // RFC 5952 §4.2: the longest run of two or more zero groups (the first when tied) is `::`.
        var best = (start: -1, count: 0)
        var i = 0
        while i < 8 {
            if groups[i] == 0 {
                var j = i
                while j < 8 && groups[j] == 0 { j += 1 }
                if j - i > best.count && j - i >= 2 { best = (i, j - i) }
                i = j
            } else {
                i += 1
            }
        }
        func hex(_ range: Range<Int>) -> String {
            groups[range].map { String($0, radix: 16) }.joined(separator: ":")
        }
        if best.start < 0 { return hex(0..<8) }
        return hex(0..<best.start) + "::" + hex((best.start + best.count)..<8)
    }

    /// `host:port`, or `[host]:port` for IPv6.
    public var description: String {
        family == .ipv4 ? "\(host):\(port)" : "[\(host)]:\(port)"
    }

    private static func parseIPv4(_ s: ArraySlice<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        var parts = 0
        var digits = 0
        var part: UInt32 = 0
        for c in s {
            if c == UInt8(ascii: ".") {
                guard digits > 0, parts < 3 else { return nil }
                value = value << 8 | part
                parts += 1
                digits = 0
                part = 0
            } else if c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") {
                // No leading zeros: "010" is octal to some parsers and decimal to others.
                guard digits < 3, !(digits == 1 && part == 0) else { return nil }
                part = part * 10 + UInt32(c - UInt8(ascii: "0"))
                guard part <= 255 else { return nil }
                digits += 1
            } else {
                return nil
            }
        }
        guard parts == 3, digits > 0 else { return nil }
        return value << 8 | part
    }

    private static func parseIPv6(_ s: ArraySlice<UInt8>) -> (UInt64, UInt64)? {
        guard s.count >= 2, s.count <= 45 else { return nil }
        var head = [UInt16]()
        var tail = [UInt16]()
        var compressed = false
        var rest = s
        if rest.starts(with: [UInt8(ascii: ":"), UInt8(ascii: ":")]) {
            compressed = true
            rest = rest.dropFirst(2)
        } else if rest.first == UInt8(ascii: ":") {
            return nil
        }
        while !rest.isEmpty {
            // A trailing dotted quad stands for the last two groups.
            let end = rest.firstIndex(of: UInt8(ascii: ":")) ?? rest.endIndex
            let field = rest[rest.startIndex..<end]
            if end == rest.endIndex, field.contains(UInt8(ascii: ".")) {
                guard let v4 = parseIPv4(field) else { return nil }
                let g = [UInt16(v4 >> 16), UInt16(v4 & 0xFFFF)]
                if compressed { tail += g } else { head += g }
                rest = rest[end...]
                break
            }
            guard (1...4).contains(field.count) else { return nil }
            var g: UInt16 = 0
            for c in field {
                guard let d = hexDigit(c) else { return nil }
                g = g << 4 | UInt16(d)
            }
            if compressed { tail.append(g) } else { head.append(g) }
            rest = rest[end...]
            if rest.isEmpty { break }
            rest = rest.dropFirst()  // the ':'
            if rest.first == UInt8(ascii: ":") {
                guard !compressed else { return nil }
                compressed = true
                rest = rest.dropFirst()
            } else if rest.isEmpty {
                return nil  // a trailing single ':'
            }
        }
        let total = head.count + tail.count
        if compressed { guard total <= 7 else { return nil } } else { guard total == 8 else { return nil } }
        let groups = head + [UInt16](repeating: 0, count: 8 - total) + tail
        var h: UInt64 = 0
        var l: UInt64 = 0
        for i in 0..<4 { h = h << 16 | UInt64(groups[i]) }
        for i in 4..<8 { l = l << 16 | UInt64(groups[i]) }
        return (h, l)
    }

    private static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
