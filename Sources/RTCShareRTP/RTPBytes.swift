// Big-endian loads and stores on raw buffers, shared by the RTP wire types of this module.
// They do not check bounds: every caller checks the length first (the parsers against the
// untrusted count, the writers against the size they computed), so these stay branch-free.

extension UnsafeRawBufferPointer {
    @inline(__always)
    func rtpU8(_ offset: Int) -> UInt8 { self[offset] }

    @inline(__always)
    func rtpU16(_ offset: Int) -> UInt16 {
        UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
    }

    @inline(__always)
    func rtpU24(_ offset: Int) -> UInt32 {
        UInt32(self[offset]) << 16 | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2])
    }

    @inline(__always)
    func rtpU32(_ offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16
            | UInt32(self[offset + 2]) << 8 | UInt32(self[offset + 3])
    }
}

extension UnsafeMutableRawBufferPointer {
    @inline(__always)
    func rtpPut16(_ value: UInt16, at offset: Int) {
        self[offset] = UInt8(truncatingIfNeeded: value >> 8)
        self[offset + 1] = UInt8(truncatingIfNeeded: value)
    }

    @inline(__always)
    func rtpPut24(_ value: UInt32, at offset: Int) {
        self[offset] = UInt8(truncatingIfNeeded: value >> 16)
        self[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
        self[offset + 2] = UInt8(truncatingIfNeeded: value)
    }

    @inline(__always)
    func rtpPut32(_ value: UInt32, at offset: Int) {
        self[offset] = UInt8(truncatingIfNeeded: value >> 24)
        self[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        self[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        self[offset + 3] = UInt8(truncatingIfNeeded: value)
    }

    /// Copies `source` to `offset` (the caller checked that it fits).
    @inline(__always)
    func rtpCopy(_ source: UnsafeRawBufferPointer, at offset: Int) {
        guard source.count > 0, let src = source.baseAddress, let dst = baseAddress else { return }
        (dst + offset).copyMemory(from: src, byteCount: source.count)
    }
}
