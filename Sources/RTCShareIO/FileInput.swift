import Glibc

/// A read-only byte stream from a file or standard input through one fixed buffer: what the Y4M
/// source reads. Every failure is a `FileInputError` naming the path and the OS's reason.
public final class FileInput {
    public let path: String
    private let fd: Int32
    private let ownsDescriptor: Bool
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0

    /// Opens `path` ("-" is standard input). A pipe is asked to hold up to `pipeBytes` (see
    /// `enlargePipe`).
    public init(path: String, bufferBytes: Int = 64 << 10, pipeBytes: Int = 0) throws(FileInputError) {
        self.path = path
        if path == "-" {
            fd = STDIN_FILENO
            ownsDescriptor = false
        } else {
            let opened = open(path, O_RDONLY | O_CLOEXEC)
            guard opened >= 0 else { throw FileInputError(path: path, errno: errno, what: "open") }
            var info = stat()
            if fstat(opened, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                close(opened)
                throw FileInputError(path: path, errno: EISDIR, what: "open")
            }
            fd = opened
            ownsDescriptor = true
        }
        buffer = .allocate(byteCount: bufferBytes, alignment: 64)
        if pipeBytes > 0 { Self.enlargePipe(fd, to: pipeBytes) }
    }

    /// The most a pipe may hold without privileges (`/proc/sys/fs/pipe-max-size`'s default).
    static let pipeMaxBytes = 1 << 20

    /// Lets a pipe hold up to `bytes` (at most `pipeMaxBytes`) where it holds less; nothing for a
    /// file, or where the kernel refuses. A 1280x720 picture is 1.4 MB: through the default
    /// 64 KiB pipe the writer and this reader take turns ~22 times a frame, each turn a wake-up
    /// on both sides; at 1 MiB it is 2. The pages are the kernel's, only while data waits in
    /// the pipe (a live writer's frame), not this process's memory.
    static func enlargePipe(_ fd: Int32, to bytes: Int) {
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFIFO else { return }
        let want = Int32(min(bytes, pipeMaxBytes))
        let setPipeSize: Int32 = 1031, getPipeSize: Int32 = 1032  // F_SETPIPE_SZ, F_GETPIPE_SZ (Linux)
        guard fcntl(fd, getPipeSize) < want else { return }
        _ = fcntl(fd, setPipeSize, want)
    }

    deinit {
        if ownsDescriptor { close(fd) }
        buffer.deallocate()
    }

    /// Refills the buffer; false at end of file.
    private func fill() throws(FileInputError) -> Bool {
        if start == end { start = 0; end = 0 }
        if start > 0 && end == buffer.count {
            buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start)
            end -= start
            start = 0
        }
        while true {
            let n = read(fd, buffer.baseAddress! + end, buffer.count - end)
            if n > 0 { end += n; return true }
            if n == 0 { return false }
            if errno == EINTR { continue }
            throw FileInputError(path: path, errno: errno, what: "read")
        }
    }

    /// Reads the bytes up to (not including) the next newline, which is consumed, into `line`
    /// (its storage is reused, so a loop reading one line per frame does not allocate). false at
    /// a clean end of file; an error if no newline comes within `maxBytes`.
    public func readLine(maxBytes: Int, into line: inout [UInt8]) throws(FileInputError) -> Bool {
        line.removeAll(keepingCapacity: true)
        while true {
            if start == end, try !fill() {
                if line.isEmpty { return false }
                throw FileInputError(path: path, errno: 0, what: "truncated line")
            }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[start..<end])
            if let nl = chunk.firstIndex(of: UInt8(ascii: "\n")) {
                line.append(contentsOf: chunk[..<nl])
                start += nl + 1
                guard line.count <= maxBytes else { throw FileInputError(path: path, errno: 0, what: "line too long") }
                return true
            }
            line.append(contentsOf: chunk)
            start = end
            guard line.count <= maxBytes else { throw FileInputError(path: path, errno: 0, what: "line too long") }
        }
    }

    /// Reads what is available, up to `destination.count` bytes; returns how many, 0 only at
    /// the end of the file.
    public func readAvailable(into destination: UnsafeMutableRawBufferPointer) throws(FileInputError) -> Int {
        guard destination.count > 0, let target = destination.baseAddress else { return 0 }
        if start == end, try !fill() { return 0 }
        let n = min(end - start, destination.count)
        target.copyMemory(from: buffer.baseAddress! + start, byteCount: n)
        start += n
        return n
    }

    /// Fills `destination` completely; false if the file ended first (a clean end only when
    /// nothing at all was read).
    public func readExactly(into destination: UnsafeMutableRawBufferPointer) throws(FileInputError) -> Bool {
        var done = 0
        while done < destination.count {
            // A buffer's worth or more left and nothing buffered: the kernel copies straight into
            // the destination (a whole picture plane), not into the buffer and again out of it.
            if start == end, destination.count - done >= buffer.count {
                let n = read(fd, destination.baseAddress! + done, destination.count - done)
                if n > 0 { done += n; continue }
                if n < 0 && errno == EINTR { continue }
                if n < 0 { throw FileInputError(path: path, errno: errno, what: "read") }
                if done == 0 { return false }
                throw FileInputError(path: path, errno: 0, what: "truncated frame")
            }
            if start == end, try !fill() {
                if done == 0 { return false }
                throw FileInputError(path: path, errno: 0, what: "truncated frame")
            }
            let n = min(end - start, destination.count - done)
            (destination.baseAddress! + done).copyMemory(from: buffer.baseAddress! + start, byteCount: n)
            start += n
            done += n
        }
        return true
    }
}

/// A failed read of a file or stream: one line saying which file and why.
public struct FileInputError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let errno: Int32
    public let what: String

    public var description: String {
        let name = path == "-" ? "standard input" : path
        return errno == 0 ? "\(name): \(what)" : "\(name): \(what): \(String(cString: strerror(errno)))"
    }
}
