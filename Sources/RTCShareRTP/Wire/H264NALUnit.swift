// H.264 NAL units as RTP sees them (RFC 6184 §1.3, ITU-T H.264 §7.3.1): the one-byte header
//
//     +---------------+
//     |0|1|2|3|4|5|6|7|
//     +-+-+-+-+-+-+-+-+
//     |F|NRI|  Type   |
//     +---------------+
//
// and the Annex B byte stream encoders write (each NAL unit behind a 00 00 01 or 00 00 00 01
// start code). Emulation prevention guarantees no start code inside a NAL unit, so a scan for
// 00 00 01 finds every boundary.

/// NAL unit types rtcshare names (H.264 Table 7-1, RFC 6184 Table 1).
public enum H264NALType {
    public static let slice: UInt8 = 1
    public static let idrSlice: UInt8 = 5
    public static let sei: UInt8 = 6
    public static let sps: UInt8 = 7
    public static let pps: UInt8 = 8
    public static let accessUnitDelimiter: UInt8 = 9
    /// RFC 6184 §5.7.1: single-time aggregation packet.
    public static let stapA: UInt8 = 24
    /// RFC 6184 §5.8: fragmentation unit.
    public static let fuA: UInt8 = 28

    /// The type in a NAL unit header byte.
    @inlinable public static func of(_ header: UInt8) -> UInt8 { header & 0x1F }
}

/// Finds NAL units in an Annex B byte stream.
public enum H264AnnexB {
    /// The NAL unit starting at or after `from`: its byte range (start code and trailing zero
    /// bytes excluded), and where to search for the next. nil when no further start code
    /// leads to a non-empty unit.
    public static func nextNALUnit(in bytes: UnsafeRawBufferPointer, from: Int) -> (range: Range<Int>, next: Int)? {
        var i = from
        while let start = startCodeEnd(in: bytes, from: i) {
            let end = startCodeBegin(in: bytes, from: start) ?? bytes.count
            var last = end
            while last > start && bytes[last - 1] == 0 { last -= 1 }
            if last > start { return (start..<last, end) }
            i = end
        }
        return nil
    }

    /// The index just past the first 00 00 01 at or after `from`.
    static func startCodeEnd(in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        startCodeBegin(in: bytes, from: from).map { $0 + 3 }
    }

    /// The index of the first 00 00 01 at or after `from`.
    static func startCodeBegin(in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard from >= 0, bytes.count >= 3 else { return nil }
        var i = from
        while i + 2 < bytes.count {
            let b2 = bytes[i + 2]
            // Skip fast: a start code has 0x01 at i+2 and zeros before it.
            if b2 > 1 { i += 3; continue }
            if b2 == 1 && bytes[i] == 0 && bytes[i + 1] == 0 { return i }
            i += 1
        }
        return nil
    }
}
