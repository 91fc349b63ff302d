import Glibc

/// A non-blocking TCP connection, for a TURN server reached over TCP or TLS (RFC 8656 §3.1): the
/// connect is started at once and finished when the socket is writable (`finishConnect`);
/// sends and receives never wait. TCP_NODELAY, because what goes over it is real-time media in
/// small frames that must not wait for each other.
public final class TCPConnection: @unchecked Sendable {
    // Sendable: used by the thread that runs the share only; closed in deinit.
    public let descriptor: Int32
    public let remoteAddress: SocketAddress

    /// Starts connecting to `address`.
    public init(connectingTo address: SocketAddress) throws(SocketError) {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                        | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket") }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var a = address
        let status = withUnsafePointer(to: &a.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, a.length) }
        }
        guard status == 0 || errno == EINPROGRESS else {
            let error = SocketError.system("connect to \(address)")
            close(fd)
            throw error
        }
        descriptor = fd
        remoteAddress = address
    }

    deinit { close(descriptor) }

    /// After the socket turned writable: nil once connected, else why the connect failed.
    public func finishConnect() -> SocketError? {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { return .system("getsockopt") }
        return error == 0 ? nil : SocketError("connect to \(remoteAddress): \(String(cString: strerror(error)))")
    }

    /// The address the connection leaves from (once connected).
    public var localAddress: SocketAddress {
        var local = SocketAddress()
        local.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &local.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &local.length) }
        }
        return local
    }

    public enum IOResult: Equatable, Sendable {
        /// Bytes moved (a send may take fewer than offered).
        case bytes(Int)
        /// Nothing now (the send buffer is full, or nothing has arrived).
        case wouldBlock
        /// The peer closed the connection (a receive of 0 bytes).
        case closed
        case failed(SocketError)
    }

    public func send(_ bytes: UnsafeRawBufferPointer) -> IOResult {
        guard bytes.count > 0 else { return .bytes(0) }
        let n = Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
        if n >= 0 { return .bytes(n) }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock }
        return .failed(.system("send to \(remoteAddress)"))
    }

    public func receive(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        guard buffer.count > 0 else { return .bytes(0) }
        let n = recv(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
        if n > 0 { return .bytes(n) }
        if n == 0 { return .closed }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock }
        return .failed(.system("receive from \(remoteAddress)"))
    }

    /// Waits until the socket is readable and/or writable as asked, or the timeout passes.
    /// Returns (readable, writable); an error or hang-up counts as both.
    public func wait(readable: Bool, writable: Bool, timeoutMicroseconds: Int64) -> (Bool, Bool) {
        var events: Int16 = 0
        if readable { events |= Int16(POLLIN) }
        if writable { events |= Int16(POLLOUT) }
        var p = pollfd(fd: descriptor, events: events, revents: 0)
        let ms = Int32(clamping: max(0, (timeoutMicroseconds + 999) / 1000))
        guard poll(&p, 1, ms) > 0 else { return (false, false) }
        let failed = p.revents & Int16(POLLERR | POLLHUP) != 0
        return (failed || p.revents & Int16(POLLIN) != 0, failed || p.revents & Int16(POLLOUT) != 0)
    }
}
