import CIPCShims
import Glibc
import RTCShareCore

// The socket edge of the IPC source (docs/ipc.md): AF_UNIX SOCK_SEQPACKET, so one receive is one
// whole message and a passed file descriptor arrives with the message it belongs to. Every call
// here is non-blocking; waiting happens only in `IPCPoll.wait`, with a deadline.

/// A failed system call of the IPC edge: one line naming what and why.
public struct IPCSystemError: Error, Equatable, CustomStringConvertible {
    public let what: String
    public let errno: Int32

    public init(_ what: String, errno: Int32) {
        self.what = what
        self.errno = errno
    }

    public var description: String {
        errno == 0 ? what : "\(what): \(String(cString: strerror(errno)))"
    }
}

/// What a send did.
public enum IPCSendResult: Equatable, Sendable {
    case sent
    /// The peer's queue is full: it is not reading.
    case queueFull
    /// The peer is gone.
    case closed
    case failed(Int32)
}

/// What a receive gave.
public enum IPCReceiveResult: Equatable, Sendable {
    /// A message of this many bytes is in the buffer.
    case message(Int)
    /// A message longer than the buffer came (and was discarded), or more descriptors than allowed.
    case truncated
    /// Nothing is waiting.
    case nothing
    /// The peer closed the connection.
    case closed
    case failed(Int32)
}

/// Descriptors that arrived with one message. Owned: whatever is not taken is closed when the
/// value ends, so a producer can never make rtcshare leak descriptors.
public struct ReceivedDescriptors: ~Copyable {
    fileprivate var fds: (Int32, Int32, Int32, Int32) = (-1, -1, -1, -1)
    public fileprivate(set) var count = 0

    public init() {}

    deinit { Self.closeEach(fds) }

    // Field by field, not through an array: this runs for every message received.
    private static func closeEach(_ fds: (Int32, Int32, Int32, Int32)) {
        if fds.0 >= 0 { close(fds.0) }
        if fds.1 >= 0 { close(fds.1) }
        if fds.2 >= 0 { close(fds.2) }
        if fds.3 >= 0 { close(fds.3) }
    }

    /// Hands the first descriptor over to the caller (who then owns it); nil if none came.
    public mutating func takeFirst() -> Int32? {
        guard count > 0, fds.0 >= 0 else { return nil }
        let fd = fds.0
        fds.0 = -1
        return fd
    }

    /// Closes every descriptor still held.
    public mutating func closeAll() {
        Self.closeEach(fds)
        fds = (-1, -1, -1, -1)
        count = 0
    }
}

/// One connected end of an IPC socket, owning its descriptor.
public struct IPCConnection: ~Copyable {
    public let descriptor: Int32

    /// Takes over `descriptor` (closed when the value ends).
    public init(adopting descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Connects to a listener at `path`; the connection is non-blocking.
    public static func connect(to path: String) throws(IPCSystemError) -> IPCConnection {
        var address = try IPCAddress.make(path)
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw IPCSystemError("socket", errno: errno) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            let e = errno
            close(fd)
            throw IPCSystemError("connect \(path)", errno: e)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return IPCConnection(adopting: fd)
    }

    /// Sends one message, passing `fileDescriptor` along (SCM_RIGHTS) if it is >= 0.
    public func send(_ bytes: UnsafeRawBufferPointer, passing fileDescriptor: Int32 = -1) -> IPCSendResult {
        let n = rtcs_ipc_send(descriptor, bytes.baseAddress, bytes.count, fileDescriptor)
        if n == bytes.count { return .sent }
        if n >= 0 { return .failed(EMSGSIZE) }
        switch errno {
        case EAGAIN, EWOULDBLOCK, ENOBUFS: return .queueFull
        case EPIPE, ECONNRESET, ENOTCONN: return .closed
        case let e: return .failed(e)
        }
    }

    /// Receives one message into `buffer`, its descriptors (at most 4) into `descriptors`.
    public func receive(into buffer: UnsafeMutableRawBufferPointer,
                        descriptors: inout ReceivedDescriptors) -> IPCReceiveResult {
        // A peer that closes while our last message to it is still unread makes Linux report
        // ECONNRESET once, ahead of whatever it sent before closing (a BYE saying why). The
        // error is cleared by reporting it, so one more read gets those messages.
        var attempts = 0
        while true {
            descriptors.closeAll()
            var count: Int32 = 0
            var flags: Int32 = 0
            let n = withUnsafeMutablePointer(to: &descriptors.fds) { tuple in
                tuple.withMemoryRebound(to: Int32.self, capacity: 4) {
                    rtcs_ipc_receive(descriptor, buffer.baseAddress, buffer.count, $0, 4, &count, &flags)
                }
            }
            descriptors.count = Int(count)
            if n < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK: return attempts == 0 ? .nothing : .closed
                case ECONNRESET where attempts == 0:
                    attempts += 1
                    continue
                case ECONNRESET, ENOTCONN: return .closed
                case let e: return .failed(e)
                }
            }
            if flags != 0 { return .truncated }
            if n == 0 { return .closed }
            return .message(n)
        }
    }

    /// Reads and discards up to `limit` waiting messages (closing any descriptors), so that
    /// closing afterwards does not reset the peer before it reads our last message.
    public func discardWaiting(into scratch: UnsafeMutableRawBufferPointer, limit: Int = 16) {
        var descriptors = ReceivedDescriptors()
        for _ in 0..<limit {
            guard case .message = receive(into: scratch, descriptors: &descriptors) else { return }
        }
    }

    /// The peer's process id (SO_PEERCRED), if the kernel says.
    public var peerProcessID: Int32? {
        let pid = rtcs_ipc_peer_pid(descriptor)
        return pid > 0 ? pid : nil
    }
}

/// The listening end, bound at `path` and removed from the file system again when it ends
/// (unless another listener has replaced it there meanwhile).
public final class IPCListener {
    public let path: String
    public let descriptor: Int32
    private let device: UInt
    private let inode: UInt

    /// Listens at `path`. A socket file left there by a process that is gone is replaced; a live
    /// listener, or a file that is not a socket, is an error.
    public init(path: String) throws(IPCSystemError) {
        var address = try IPCAddress.make(path)
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw IPCSystemError("\(path) exists and is not a socket", errno: 0)
            }
            if let probe = try? IPCConnection.connect(to: path) {
                _ = consume probe
                throw IPCSystemError("\(path): another process is already listening there", errno: 0)
            }
            unlink(path)  // stale: its listener is gone
        }
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
                        | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw IPCSystemError("socket", errno: errno) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, Glibc.listen(fd, 4) == 0 else {
            let e = errno
            close(fd)
            throw IPCSystemError("listen on \(path)", errno: e)
        }
        guard stat(path, &info) == 0 else {
            let e = errno
            close(fd)
            throw IPCSystemError("stat \(path)", errno: e)
        }
        self.path = path
        self.descriptor = fd
        self.device = UInt(info.st_dev)
        self.inode = UInt(info.st_ino)
    }

    deinit {
        close(descriptor)
        var info = stat()
        if stat(path, &info) == 0, UInt(info.st_dev) == device, UInt(info.st_ino) == inode {
            unlink(path)
        }
    }

    /// The next waiting connection (non-blocking), or nil.
    public func accept() -> IPCConnection? {
        let fd = rtcs_ipc_accept(descriptor)
        return fd >= 0 ? IPCConnection(adopting: fd) : nil
    }
}

/// Waiting for descriptors to become readable.
public enum IPCPoll {
    /// Waits until `first` or `second` (either may be -1: not watched) is readable or closed, or
    /// `deadline` passes; says which are ready.
    public static func wait(_ first: Int32, _ second: Int32, until deadline: MediaTime) -> (first: Bool, second: Bool) {
        var fds = (pollfd(fd: first, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: second, events: Int16(POLLIN), revents: 0))
        while true {
            let left = deadline.microseconds - MonotonicClock.now().microseconds
            let timeout = Int32(clamping: max(0, (left + 999) / 1000))
            let n = withUnsafeMutablePointer(to: &fds) {
                $0.withMemoryRebound(to: pollfd.self, capacity: 2) { poll($0, 2, timeout) }
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return (false, false) }
            return (first >= 0 && fds.0.revents != 0, second >= 0 && fds.1.revents != 0)
        }
    }
}

/// `sockaddr_un` for a path.
enum IPCAddress {
    static func make(_ path: String) throws(IPCSystemError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
            throw IPCSystemError("socket path '\(path)' must be 1...\(capacity - 1) bytes", errno: 0)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        return address
    }
}
