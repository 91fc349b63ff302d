extension UInt16 {
    /// This 16-bit sequence number (RTP, transport-wide) as the 64-bit count nearest
    /// `reference` — within −32768...+32767 of it: how a sequence is followed across its wraps.
    @inline(__always)
    func extended(around reference: Int64) -> Int64 {
        reference + Int64(Int16(bitPattern: self &- UInt16(truncatingIfNeeded: reference)))
    }
}
