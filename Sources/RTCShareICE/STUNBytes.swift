// Big-endian loads and stores on raw buffers, shared by the STUN wire types of this module.
// They do not check bounds: every caller checks the length first (the parser against the
// untrusted count, the writer against the size it computed), so these stay branch-free.

extension UnsafeRawBufferPointer {
    @inline(__always)
    func stunU16(_ offset: Int) -> UInt16 {
        UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
    }

    @inline(__always)
    func stunU32(_ offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16
            | UInt32(self[offset + 2]) << 8 | UInt32(self[offset + 3])
    }

    @inline(__always)
    func stunU64(_ offset: Int) -> UInt64 {
        UInt64(stunU32(offset)) << 32 | UInt64(stunU32(offset + 4))
    }
}

extension UnsafeMutableRawBufferPointer {
    @inline(__always)
    func stunPut16(_ value: UInt16, at offset: Int) {
        self[offset] = UInt8(truncatingIfNeeded: value >> 8)
        self[offset + 1] = UInt8(truncatingIfNeeded: value)
    }

    @inline(__always)
    func stunPut32(_ value: UInt32, at offset: Int) {
        stunPut16(UInt16(truncatingIfNeeded: value >> 16), at: offset)
        stunPut16(UInt16(truncatingIfNeeded: value), at: offset + 2)
    }

    @inline(__always)
    func stunPut64(_ value: UInt64, at offset: Int) {
        stunPut32(UInt32(truncatingIfNeeded: value >> 32), at: offset)
        stunPut32(UInt32(truncatingIfNeeded: value), at: offset + 4)
    }
}
