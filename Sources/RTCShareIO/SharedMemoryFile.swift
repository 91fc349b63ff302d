import CIPCShims
import Glibc

/// A file of shared memory (a memfd) passed between a producer and rtcshare, owning its
/// descriptor. rtcshare only ever reads it with `pread` (`read(at:into:count:)`), never maps it:
/// the producer's pages then never count toward rtcshare's resident memory, and a file that
/// shrinks under it makes a read come up short instead of raising SIGBUS. The producer side
/// creates it and maps it to write its frames.
public struct SharedMemoryFile: ~Copyable {
    public let descriptor: Int32

    /// Takes over `descriptor` (closed when the value ends).
    public init(adopting descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// A new memfd of `bytes` bytes, sealed against changing size.
    public static func create(name: String, bytes: Int) throws(IPCSystemError) -> SharedMemoryFile {
        let fd = rtcs_ipc_memfd_create(name)
        guard fd >= 0 else { throw IPCSystemError("memfd_create", errno: errno) }
        let file = SharedMemoryFile(adopting: fd)
        guard ftruncate(fd, off_t(bytes)) == 0 else { throw IPCSystemError("ftruncate memfd to \(bytes) bytes", errno: errno) }
        guard rtcs_ipc_seal_size(fd) == 0 else { throw IPCSystemError("sealing the memfd", errno: errno) }
        return file
    }

    /// The file's size if it is a regular file (a memfd is), else nil.
    public var regularFileBytes: Int? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// Reads exactly `count` bytes at `offset` into `destination`; false if the file is shorter
    /// now than that, or the read fails.
    public func read(at offset: Int, into destination: UnsafeMutableRawPointer, count: Int) -> Bool {
        var done = 0
        while done < count {
            let n = pread(descriptor, destination + done, count - done, off_t(offset + done))
            if n > 0 {
                done += n
            } else if n < 0, errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Maps the first `bytes` bytes for reading and writing (the producer's side).
    public func mapWritable(bytes: Int) throws(IPCSystemError) -> SharedMapping {
        guard let base = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0),
              base != MAP_FAILED else {
            throw IPCSystemError("mmap \(bytes) bytes of shared memory", errno: errno)
        }
        return SharedMapping(base: base, count: bytes)
    }
}

/// A mapping of shared memory, unmapped when the value ends.
public struct SharedMapping: ~Copyable {
    public let base: UnsafeMutableRawPointer
    public let count: Int

    init(base: UnsafeMutableRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    deinit { munmap(base, count) }
}
