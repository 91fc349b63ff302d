/// A stream of bytes a parser pulls from: a file (`FileInput` in RTCShareIO), or memory in
/// tests and fuzzers. Parsers of untrusted files read through it so that a file is never
/// loaded whole: each call fills at most the caller's buffer. It lives in the core layer so
/// that any parser can take one without depending on the media module; a failed read is
/// `CoreError.readFailed`, which each parser turns into its own error.
public protocol ByteSource: AnyObject {
    /// Reads up to `buffer.count` bytes into `buffer`; returns how many, 0 at the end.
    func readBytes(into buffer: UnsafeMutableRawBufferPointer) throws(CoreError) -> Int
}

/// A `ByteSource` over bytes held in memory, handed out at most `maximumRead` at a time (to
/// exercise readers against short reads).
public final class MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0
    private let maximumRead: Int

    public init(_ bytes: [UInt8], maximumRead: Int = .max) {
        self.bytes = bytes
        self.maximumRead = max(maximumRead, 1)
    }

    public func readBytes(into buffer: UnsafeMutableRawBufferPointer) throws(CoreError) -> Int {
        let n = min(buffer.count, bytes.count - offset, maximumRead)
        guard n > 0, let dst = buffer.baseAddress else { return 0 }
        bytes.withUnsafeBytes { src in dst.copyMemory(from: src.baseAddress! + offset, byteCount: n) }
        offset += n
        return n
    }
}
