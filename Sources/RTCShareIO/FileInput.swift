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

    /// Opens `path` ("-" is standard input).
    public init(path: String, bufferBytes: Int = 64 << 10) throws(FileInputError) {
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
