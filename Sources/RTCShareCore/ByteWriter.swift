// One writer for every wire format, into memory the caller owns (a packet slot, a stack
// buffer, the tail of a datagram): nothing is allocated, so per-packet paths use it.
//
// Writers of this project know their size before they write (a wire type's first operation is
// `size`), and they check the caller's buffer against it once, for an error that names both
// numbers. So a write that does not fit is never bad input, only a size computed wrong: the
// writer checks every write, writes nothing past the end, and remembers that it fell short.
// `finish()` then throws the format's own error for it (`ByteWriterFailure`). The writing code
// stays a plain sequence of stores with one check at the end instead of a `try` on each field.

/// An error a `ByteWriter` can throw: what a format calls a write that did not fit.
public protocol ByteWriterFailure: Error {
    /// A write of `needed` bytes at `offset` into a buffer of `available` bytes.
    static func writePastEnd(offset: Int, needed: Int, available: Int) -> Self
}

extension CoreError: ByteWriterFailure {}

/// A bounds-checked cursor writing big-endian (network order) fields by default, little-endian
/// ones for formats that need them, into a caller's buffer. `finish()` throws `Failure`, the
/// error type of the format being written.
@frozen
public struct ByteWriter<Failure: ByteWriterFailure> {
    /// The buffer written into; offsets count from its start.
    public let buffer: UnsafeMutableRawBufferPointer
    @usableFromInline
    var position: Int

    /// Where the next write goes; always in `0...buffer.count`.
    @inlinable @inline(__always)
    public var offset: Int { position }

    /// Where the first write that did not fit was to go (-1: none yet), and its size; once
    /// one has not fitted, later writes are dropped.
    @usableFromInline
    var failedAt: Int
    @usableFromInline
    var failedNeeded: Int

    /// A writer at `offset` in `buffer` (clamped to the buffer; a start past its end counts as
    /// a write that did not fit).
    @inlinable @inline(__always)
    public init(_ buffer: UnsafeMutableRawBufferPointer, at offset: Int = 0) {
        self.buffer = buffer
        self.position = min(max(offset, 0), buffer.count)
        self.failedAt = offset >= 0 && offset <= buffer.count ? -1 : max(offset, 0)
        self.failedNeeded = 0
    }

    /// Bytes left after `offset`.
    @inlinable @inline(__always)
    public var remaining: Int { buffer.count &- offset }

    /// Whether every write so far fitted.
    @inlinable @inline(__always)
    public var fits: Bool { failedAt < 0 }

    /// The offset after the last write, or the error for the first write that did not fit.
    @inlinable @inline(__always)
    public func finish() throws(Failure) -> Int {
        if failedAt >= 0 {
            throw Failure.writePastEnd(offset: failedAt, needed: failedNeeded, available: buffer.count)
        }
        return offset
    }

    /// Reserves `count` bytes and returns where they start, or nil (and remembers it) when
    /// they do not fit or an earlier write did not.
    @inlinable @inline(__always)
    mutating func claim(_ count: Int) -> Int? {
        guard failedAt < 0, count >= 0, count <= buffer.count &- position else {
            if failedAt < 0 {
                failedAt = position
                failedNeeded = count
            }
            return nil
        }
        let start = offset
        position = start &+ count
        return start
    }

    @inlinable @inline(__always)
    mutating func store<T: FixedWidthInteger>(_ value: T) {
        guard let start = claim(MemoryLayout<T>.size) else { return }
        buffer.baseAddress.unsafelyUnwrapped.storeBytes(of: value, toByteOffset: start, as: T.self)
    }

    @inlinable @inline(__always)
    public mutating func u8(_ value: UInt8) { store(value) }

    @inlinable @inline(__always)
    public mutating func u16(_ value: UInt16) { store(value.bigEndian) }

    /// The low 24 bits of `value`, big-endian.
    @inlinable @inline(__always)
    public mutating func u24(_ value: UInt32) {
        guard let start = claim(3) else { return }
        let p = buffer.baseAddress.unsafelyUnwrapped + start
        p.storeBytes(of: UInt8(truncatingIfNeeded: value >> 16), as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: value >> 8), toByteOffset: 1, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: value), toByteOffset: 2, as: UInt8.self)
    }

    @inlinable @inline(__always)
    public mutating func u32(_ value: UInt32) { store(value.bigEndian) }

    @inlinable @inline(__always)
    public mutating func u64(_ value: UInt64) { store(value.bigEndian) }

    @inlinable @inline(__always)
    public mutating func u16LE(_ value: UInt16) { store(value.littleEndian) }

    @inlinable @inline(__always)
    public mutating func u32LE(_ value: UInt32) { store(value.littleEndian) }

    @inlinable @inline(__always)
    public mutating func u64LE(_ value: UInt64) { store(value.littleEndian) }

    /// Copies `source`.
    @inlinable @inline(__always)
    public mutating func bytes(_ source: UnsafeRawBufferPointer) {
        guard let start = claim(source.count), source.count > 0 else { return }
        (buffer.baseAddress.unsafelyUnwrapped + start).copyMemory(from: source.baseAddress.unsafelyUnwrapped,
                                                                   byteCount: source.count)
    }

    /// Writes `count` zero bytes (padding, reserved fields).
    @inlinable @inline(__always)
    public mutating func zeros(_ count: Int) {
        guard let start = claim(count), count > 0 else { return }
        (buffer.baseAddress.unsafelyUnwrapped + start).initializeMemory(as: UInt8.self, repeating: 0, count: count)
    }

    /// Moves to `offset` without writing (either direction): to leave room for a field filled
    /// in later (a length, a checksum) and come back to it.
    @inlinable @inline(__always)
    public mutating func seek(to offset: Int) {
        guard failedAt < 0 else { return }
        guard offset >= 0, offset <= buffer.count else {
            failedAt = max(offset, 0)
            failedNeeded = 0
            return
        }
        self.position = offset
    }
}
