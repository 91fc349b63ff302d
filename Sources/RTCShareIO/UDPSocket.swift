import CEventShims
import Glibc

/// An IPv4 or IPv6 address and port, as the socket calls take it.
public struct SocketAddress: Sendable, Equatable, CustomStringConvertible {
    var storage = sockaddr_storage()
    var length: socklen_t = 0

    init() {}

    /// An empty address of `family` (AF_INET or AF_INET6) with its length set.
    init(family: Int32) {
        length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
    }

    /// `host:port` or `[v6-host]:port`. The host is a literal address or a name, resolved once
    /// here (getaddrinfo); the port is 1...65535. Errors are one line naming the input.
    public init(parsing text: String) throws(SocketError) {
        let (host, port) = try Self.split(text)
        try self.init(host: host, port: port)
    }

    /// `host` resolved (IPv4 preferred when a name has both) with `port`.
    public init(host: String, port: Int) throws(SocketError) {
        guard (1...65_535).contains(port) else { throw SocketError("port \(port) is not in 1...65535") }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw SocketError("cannot resolve '\(host)': \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var chosen: UnsafeMutablePointer<addrinfo>? = nil
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let e = entry {
            if e.pointee.ai_family == AF_INET { chosen = e; break }
            if chosen == nil, e.pointee.ai_family == AF_INET6 { chosen = e }
            entry = e.pointee.ai_next
        }
        guard let c = chosen, let address = c.pointee.ai_addr,
              Int(c.pointee.ai_addrlen) <= MemoryLayout<sockaddr_storage>.size else {
            throw SocketError("'\(host)' has no IPv4 or IPv6 address")
        }
        self.init()
        withUnsafeMutableBytes(of: &storage) { dst in
            dst.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(c.pointee.ai_addrlen)))
        }
        length = c.pointee.ai_addrlen
    }

    /// Splits `host:port` / `[host]:port`.
    static func split(_ text: String) throws(SocketError) -> (String, Int) {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"),
                  text[text.index(after: close)...].hasPrefix(":") else {
                throw SocketError("'\(text)' is not [host]:port")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
                throw SocketError("'\(text)' is not host:port (write an IPv6 address as [addr]:port)")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty else { throw SocketError("'\(text)' has no host") }
        guard let port = Int(portText), (1...65_535).contains(port) else {
            throw SocketError("'\(text)': the port must be 1...65535")
        }
        return (String(host), port)
    }

    public var family: Int32 { Int32(storage.ss_family) }

    public var port: Int {
        get {
            withUnsafeBytes(of: storage) { raw in
                switch family {
                case AF_INET: Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
                case AF_INET6: Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
                default: 0
                }
            }
        }
        set {
            // sin_port and sin6_port both sit at offset 2, after the family.
            let network = UInt16(truncatingIfNeeded: newValue).bigEndian
            guard family == AF_INET || family == AF_INET6 else { return }
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.storeBytes(of: network, toByteOffset: 2, as: UInt16.self)
            }
        }
    }

    /// `host:port` for a socket to bind, where port 0 means "any free port".
    public init(parsingBindAddress text: String) throws(SocketError) {
        let (host, port) = try Self.split(text.hasSuffix(":0") ? String(text.dropLast(2)) + ":1" : text)
        try self.init(host: host, port: port)
        if text.hasSuffix(":0") { self.port = 0 }
    }

    /// The same host with another port.
    public func with(port: Int) -> SocketAddress {
        var copy = self
        copy.port = port
        return copy
    }

    /// The address without the port, as text ("127.0.0.1", "::1").
    public var host: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        return withUnsafeBytes(of: storage) { raw -> String in
            switch family {
            case AF_INET:
                var a = raw.load(as: sockaddr_in.self).sin_addr
                guard inet_ntop(AF_INET, &a, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
            case AF_INET6:
                var a = raw.load(fromByteOffset: 8, as: in6_addr.self)
                guard inet_ntop(AF_INET6, &a, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
            default:
                return "?"
            }
            return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    public var description: String { family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    public static func == (a: SocketAddress, b: SocketAddress) -> Bool {
        guard a.length == b.length else { return false }
        return withUnsafeBytes(of: a.storage) { x in
            withUnsafeBytes(of: b.storage) { y in memcmp(x.baseAddress!, y.baseAddress!, Int(a.length)) == 0 }
        }
    }
}

/// A failed socket call or bad address: one line.
public struct SocketError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
    static func system(_ what: String) -> SocketError {
        SocketError("\(what): \(String(cString: strerror(errno)))")
    }
}

/// A non-blocking UDP socket: one per media stream of a peer (RTP and RTCP muxed on it). Sends
/// never wait (a full send buffer drops the packet and says so); receives return at once;
/// waiting happens only in `waitReadable(timeoutMicroseconds:)`.
public final class UDPSocket: @unchecked Sendable {
    // Sendable: the descriptor is only used by the thread that runs the share; close is in deinit.
    public let descriptor: Int32
    public let localAddress: SocketAddress
    /// `receive` met ECONNREFUSED: an ICMP error is waiting in the error queue
    /// (`reportUnreachable`), for `takeUnreachable`.
    private var errorQueued = false

    /// A socket of `address`'s family bound to it (port 0: any free port).
    public init(bindingTo address: SocketAddress, sendBufferBytes: Int = 512 << 10) throws(SocketError) {
        let fd = socket(address.family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                        | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket") }
        var size = Int32(sendBufferBytes)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var a = address
        let bound = withUnsafePointer(to: &a.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, a.length) }
        }
        guard bound == 0 else {
            let error = SocketError.system("bind \(address)")
            close(fd)
            throw error
        }
        var local = SocketAddress()
        local.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &local.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &local.length) }
        }
        descriptor = fd
        localAddress = local
    }

    /// A socket for sending to `peer`: bound to any port of the matching loopback/any address.
    public convenience init(for peer: SocketAddress, localPort: Int = 0) throws(SocketError) {
        let any = try SocketAddress(host: peer.family == AF_INET6 ? "::" : "0.0.0.0", port: 1).with(port: localPort)
        try self.init(bindingTo: any)
    }

    deinit { close(descriptor) }

    public enum SendResult: Equatable, Sendable {
        case sent
        /// The socket's send buffer is full; the packet was not sent.
        case wouldBlock
        /// The network said no (ICMP unreachable from an earlier packet, no route); errno.
        case failed(Int32)
    }

    public func send(_ bytes: UnsafeRawBufferPointer, to peer: SocketAddress) -> SendResult {
        var p = peer
        let n = withUnsafePointer(to: &p.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, p.length)
            }
        }
        if n >= 0 { return .sent }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS { return .wouldBlock }
        return .failed(errno)
    }

    public enum ReceiveResult: Equatable, Sendable {
        case datagram(count: Int, from: SocketAddress)
        /// Nothing is waiting.
        case nothing
        case failed(Int32)
    }

    /// One datagram into `buffer` (a longer one is cut to the buffer's size: the caller's
    /// parsers then see it as truncated).
    public func receive(into buffer: UnsafeMutableRawBufferPointer) -> ReceiveResult {
        var from = SocketAddress()
        from.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let n = withUnsafeMutablePointer(to: &from.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT), $0, &from.length)
            }
        }
        if n >= 0 { return .datagram(count: n, from: from) }
        // ECONNREFUSED: an ICMP port-unreachable for an earlier send (the receiver is not up yet).
        if errno == ECONNREFUSED { errorQueued = true }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNREFUSED || errno == EINTR { return .nothing }
        return .failed(errno)
    }

    /// Has the kernel queue ICMP errors for this socket (`takeUnreachable` reads them): how an
    /// unconnected socket learns that its peer's port closed (a server that restarted).
    public func reportUnreachable() -> Bool { rtcs_udp_enable_errors(descriptor) == 0 }

    /// Empties the socket's error queue; the destination of the newest datagram an ICMP port
    /// unreachable came back for, if any. Call after `receive` once `reportUnreachable` is on:
    /// each ICMP error makes the next `receive` meet ECONNREFUSED, and only then is the queue
    /// read (no system call otherwise); a queued error keeps the socket ready until it is.
    public func takeUnreachable() -> SocketAddress? {
        guard errorQueued else { return nil }
        errorQueued = false
        var address = SocketAddress()
        var length = UInt32(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &address.storage) { rtcs_udp_take_unreachable(descriptor, $0, &length) }
        guard found > 0 else { return nil }
        address.length = socklen_t(length)
        return address
    }

    /// Waits until a datagram is waiting or the timeout passes; true if one is.
    public func waitReadable(timeoutMicroseconds: Int64) -> Bool {
        var p = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ms = Int32(clamping: max(0, (timeoutMicroseconds + 999) / 1000))
        return poll(&p, 1, ms) > 0 && (p.revents & Int16(POLLIN)) != 0
    }
}
