import Glibc

/// Writes encoded VP8 frames (or H.264 access units, fourcc "H264", which ffmpeg reads) to an IVF file, the container libvpx's tools, ffmpeg and GStreamer
/// read, for recording a share or inspecting what the encoder made.
///
/// ```
/// file header (32 bytes, little-endian)      frame header (12 bytes), then the frame
///  0  "DKIF"                                   0  frame size in bytes (u32)
///  4  version 0 (u16)                          4  pts in timebase units (u64)
///  6  header size 32 (u16)
///  8  fourcc "VP80"
/// 12  width, 14 height (u16)
/// 16  timebase denominator, 20 numerator (u32): pts x num / den = seconds
/// 24  frame count (u32; written as 0, patched on close when the file is seekable)
/// 28  unused (u32)
/// ```
///
/// The count field follows libvpx's writer (frames). ffmpeg's reader takes that field as the
/// stream's duration in timebase units, so with a timebase other than 1/frame-rate ffprobe
/// shows a wrong duration; per-frame timestamps are unaffected.
///
/// Frame headers and small frames are gathered in one fixed buffer allocated at open and written
/// in large pieces; a frame that does not fit goes straight to the file after the buffer. Nothing is allocated
/// per frame. Non-copyable: one value owns the file descriptor.
public struct IVFWriter: ~Copyable {
    public static let fileHeaderSize = 32
    public static let frameHeaderSize = 12

    /// The path given at open (for error messages).
    public let path: String
    public let width: Int
    public let height: Int
    /// Frames written so far.
    public private(set) var frameCount: UInt32 = 0

    private var fd: Int32
    private let buffer: UnsafeMutableRawBufferPointer
    private var buffered = 0

    /// Creates (or truncates) `path` and writes the file header. Timestamps given to `write`
    /// count in units of `timebaseNumerator / timebaseDenominator` seconds (default:
    /// microseconds, as frames carry them). Throws `.file(path, .open, errno)` for a path that
    /// cannot be created, `.file(path, .write, errno)` when the header cannot be written, and
    /// `.invalidConfiguration` for a size or timebase IVF cannot hold.
    public init(path: String, width: Int, height: Int, timebaseNumerator: UInt32 = 1,
                timebaseDenominator: UInt32 = 1_000_000,
                bufferBytes: Int = 64 * 1024, fourcc: String = "VP80") throws(MediaError) {
        guard fourcc.utf8.count == 4 else { throw .invalidConfiguration("IVF fourcc '\(fourcc)' is not 4 bytes") }
        guard (1...65535).contains(width), (1...65535).contains(height) else {
            throw .invalidConfiguration("IVF size \(width)x\(height) outside 1...65535")
        }
        guard timebaseNumerator > 0, timebaseDenominator > 0 else {
            throw .invalidConfiguration("IVF timebase \(timebaseNumerator)/\(timebaseDenominator)")
        }
        let bufferBytes = max(bufferBytes, Self.frameHeaderSize)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .file(path: path, operation: .open, errno: errno) }

        var header: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &header) { h in
            h.copyBytes(from: "DKIF".utf8)
            h.storeBytes(of: UInt16(0).littleEndian, toByteOffset: 4, as: UInt16.self)
            h.storeBytes(of: UInt16(Self.fileHeaderSize).littleEndian, toByteOffset: 6, as: UInt16.self)
            UnsafeMutableRawBufferPointer(rebasing: h[8..<12]).copyBytes(from: fourcc.utf8)
            h.storeBytes(of: UInt16(width).littleEndian, toByteOffset: 12, as: UInt16.self)
            h.storeBytes(of: UInt16(height).littleEndian, toByteOffset: 14, as: UInt16.self)
            h.storeBytes(of: timebaseDenominator.littleEndian, toByteOffset: 16, as: UInt32.self)
            h.storeBytes(of: timebaseNumerator.littleEndian, toByteOffset: 20, as: UInt32.self)
            // 24: frame count, patched on close; 28: unused.
        }
        // The header goes out now, so an unwritable target (a full disk, a read-only mount
        // that still allowed the open) fails here rather than on the first frame.
        do throws(MediaError) {
            try withUnsafeBytes(of: &header) { (h) throws(MediaError) in
                try Self.writeAll(h, fd: fd, path: path)
            }
        } catch {
            _ = Glibc.close(fd)
            throw error
        }

        self.path = path
        self.width = width
        self.height = height
        self.fd = fd
        self.buffer = .allocate(byteCount: bufferBytes, alignment: 16)
    }

    deinit {
        // Dropped without close(): keep what was written, best effort, errors ignored.
        if fd >= 0 {
            if buffered > 0 {
                try? writeAll(UnsafeRawBufferPointer(rebasing: buffer[0..<buffered]))
            }
            patchFrameCount()
            _ = Glibc.close(fd)
        }
        buffer.deallocate()
    }

    /// Appends one frame with timestamp `pts` (timebase units).
    public mutating func write(frame: UnsafeRawBufferPointer, pts: Int64) throws(MediaError) {
        precondition(fd >= 0, "IVFWriter used after close")
        guard let size = UInt32(exactly: frame.count), frameCount < UInt32.max else {
            throw .invalidConfiguration("IVF frame of \(frame.count) bytes or frame count overflow")
        }
        if buffer.count - buffered < Self.frameHeaderSize { try flush() }
        buffer.storeBytes(of: size.littleEndian, toByteOffset: buffered, as: UInt32.self)
        buffer.storeBytes(of: UInt64(bitPattern: pts).littleEndian, toByteOffset: buffered + 4,
                          as: UInt64.self)
        buffered += Self.frameHeaderSize
        if frame.count <= buffer.count - buffered {
            if let source = frame.baseAddress {
                (buffer.baseAddress! + buffered).copyMemory(from: source, byteCount: frame.count)
            }
            buffered += frame.count
        } else {
            try flush()
            try writeAll(frame)
        }
        frameCount += 1
    }

    /// Writes out what is buffered, patches the frame count into the header and closes the
    /// file. Throws the first failure; the descriptor is closed either way.
    public consuming func close() throws(MediaError) {
        var failure: MediaError?
        do { try flush() } catch { failure = error }
        if failure == nil, !patchFrameCount() {
            failure = .file(path: path, operation: .seek, errno: errno)
        }
        // close() is where NFS and some FUSE file systems report a failed write-back.
        if Glibc.close(fd) != 0, failure == nil {
            failure = .file(path: path, operation: .close, errno: errno)
        }
        fd = -1
        if let failure { throw failure }
    }

    // MARK: internals

    private mutating func flush() throws(MediaError) {
        guard buffered > 0 else { return }
        let pending = UnsafeRawBufferPointer(rebasing: buffer[0..<buffered])
        buffered = 0
        try writeAll(pending)
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(MediaError) {
        try Self.writeAll(bytes, fd: fd, path: path)
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, fd: Int32,
                                 path: String) throws(MediaError) {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw .file(path: path, operation: .write, errno: errno)
            }
            offset += n
        }
    }

    /// Writes the frame count at offset 24; true on success or when the file is a pipe or
    /// terminal (no offsets; readers then count frames themselves).
    @discardableResult
    private func patchFrameCount() -> Bool {
        var count = frameCount.littleEndian
        let n = withUnsafeBytes(of: &count) { pwrite(fd, $0.baseAddress, 4, 24) }
        return n == 4 || (n < 0 && errno == ESPIPE)
    }
}
