// One cursor over untrusted bytes for every wire format (RTP, RTCP, STUN, DTLS framing, IPC,
// WAV): each read checks that the bytes are there before it loads them and throws when they
// are not, so a parser cannot read past a datagram whatever its length fields claim. Parsers
// still check the lengths their format declares, for a message that says which field was
// wrong; the reader's own check is what makes a forgotten or wrong check a clear error rather
// than an out-of-bounds load. The reader throws its format's own error: a format's error type
// says once (`ByteReaderFailure`) what a read past the end is in its terms, and every `try`
// in its parser then needs no conversion.
//
// The reader holds a borrowed pointer: make it inside the closure or call that lends the bytes
// and let it go before that returns. It never copies and never allocates (per-packet paths use
// it); every method is inlinable so the checks fold into the caller's code.

/// An error a `ByteReader` can throw: what a format calls a read past the end of its bytes.
public protocol ByteReaderFailure: Error {
    /// A read of `needed` bytes at `offset` when only `available` were left.
    static func readPastEnd(offset: Int, needed: Int, available: Int) -> Self
}

extension CoreError: ByteReaderFailure {}

/// A bounds-checked cursor over borrowed bytes: big-endian (network order) reads by default,
/// little-endian ones for formats that need them (IPC, RIFF). It throws `Failure`, the error
/// type of the format being read.
@frozen
public struct ByteReader<Failure: ByteReaderFailure> {
    /// The bytes read from; offsets count from their start.
    public let bytes: UnsafeRawBufferPointer
    @usableFromInline
    var position: Int

    /// Where the next read starts; always in `0...bytes.count`.
    @inlinable @inline(__always)
    public var offset: Int { position }

    /// A reader at the start of `bytes`.
    @inlinable @inline(__always)
    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.position = 0
    }

    /// Bytes not yet read.
    @inlinable @inline(__always)
    public var remaining: Int { bytes.count &- offset }

    /// Whether every byte has been read.
    @inlinable @inline(__always)
    public var isAtEnd: Bool { offset == bytes.count }

    /// Checks that `count` bytes remain and returns where they start, moving past them.
    @inlinable @inline(__always)
    mutating func advance(_ count: Int) throws(Failure) -> Int {
        guard count >= 0, count <= bytes.count &- offset else {
            throw Failure.readPastEnd(offset: offset, needed: count, available: bytes.count &- offset)
        }
        let start = offset
        position = start &+ count
        return start
    }

    @inlinable @inline(__always)
    mutating func load<T: FixedWidthInteger>(_: T.Type) throws(Failure) -> T {
        let start = try advance(MemoryLayout<T>.size)
        return bytes.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: start, as: T.self)
    }

    @inlinable @inline(__always)
    public mutating func u8() throws(Failure) -> UInt8 { try load(UInt8.self) }

    @inlinable @inline(__always)
    public mutating func u16() throws(Failure) -> UInt16 { UInt16(bigEndian: try load(UInt16.self)) }

    /// A 24-bit big-endian field (RTCP report blocks, VP8 sizes) in the low bits.
    @inlinable @inline(__always)
    public mutating func u24() throws(Failure) -> UInt32 {
        let start = try advance(3)
        let p = bytes.baseAddress.unsafelyUnwrapped + start
        return UInt32(p.load(as: UInt8.self)) << 16 | UInt32(p.load(fromByteOffset: 1, as: UInt8.self)) << 8
            | UInt32(p.load(fromByteOffset: 2, as: UInt8.self))
    }

    @inlinable @inline(__always)
    public mutating func u32() throws(Failure) -> UInt32 { UInt32(bigEndian: try load(UInt32.self)) }

    @inlinable @inline(__always)
    public mutating func u64() throws(Failure) -> UInt64 { UInt64(bigEndian: try load(UInt64.self)) }

    @inlinable @inline(__always)
    public mutating func u16LE() throws(Failure) -> UInt16 { UInt16(littleEndian: try load(UInt16.self)) }

    @inlinable @inline(__always)
    public mutating func u32LE() throws(Failure) -> UInt32 { UInt32(littleEndian: try load(UInt32.self)) }

    @inlinable @inline(__always)
    public mutating func u64LE() throws(Failure) -> UInt64 { UInt64(littleEndian: try load(UInt64.self)) }

    /// The next `count` bytes, borrowed from `bytes` (no copy).
    @inlinable @inline(__always)
    public mutating func bytes(_ count: Int) throws(Failure) -> UnsafeRawBufferPointer {
        let start = try advance(count)
        return UnsafeRawBufferPointer(rebasing: bytes[start..<(start &+ count)])
    }

    // Reads at an offset from the start, without moving: for formats laid out at fixed
    // offsets within a length already checked (RTCP's packets and blocks, a trailer such as
    // RTP's padding count). Bounds-checked the same way.

    @inlinable @inline(__always)
    func load<T: FixedWidthInteger>(at offset: Int, _: T.Type) throws(Failure) -> T {
        let size = MemoryLayout<T>.size
        guard offset >= 0, offset <= bytes.count &- size else {
            throw Failure.readPastEnd(offset: offset, needed: size, available: max(0, bytes.count &- offset))
        }
        return bytes.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: offset, as: T.self)
    }

    @inlinable @inline(__always)
    public func u8(at offset: Int) throws(Failure) -> UInt8 { try load(at: offset, UInt8.self) }

    @inlinable @inline(__always)
    public func u16(at offset: Int) throws(Failure) -> UInt16 { UInt16(bigEndian: try load(at: offset, UInt16.self)) }

    @inlinable @inline(__always)
    public func u32(at offset: Int) throws(Failure) -> UInt32 { UInt32(bigEndian: try load(at: offset, UInt32.self)) }

    /// The `count` bytes at `offset` from the start, borrowed, without moving: a fixed-size
    /// structure checked once, then read with its own reader whose checks fold away.
    @inlinable @inline(__always)
    public func bytes(at offset: Int, count: Int) throws(Failure) -> UnsafeRawBufferPointer {
        guard offset >= 0, count >= 0, offset <= bytes.count &- count else {
            throw Failure.readPastEnd(offset: offset, needed: count, available: max(0, bytes.count &- offset))
        }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset &+ count)])
    }

    /// Moves past `count` bytes without reading them.
    @inlinable @inline(__always)
    public mutating func skip(_ count: Int) throws(Failure) {
        _ = try advance(count)
    }

    /// Moves to `offset` (from the start of `bytes`, either direction): for formats whose
    /// fields say where the next structure starts.
    @inlinable @inline(__always)
    public mutating func seek(to offset: Int) throws(Failure) {
        guard offset >= 0, offset <= bytes.count else {
            throw Failure.readPastEnd(offset: self.offset, needed: offset - self.offset, available: remaining)
        }
        self.position = offset
    }
}
