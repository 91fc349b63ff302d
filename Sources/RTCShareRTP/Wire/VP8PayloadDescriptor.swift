import RTCShareCore

// The VP8 payload descriptor, RFC 7741 §4.2, at the start of every VP8 RTP payload:
//
//           0 1 2 3 4 5 6 7
//          +-+-+-+-+-+-+-+-+
//          |X|R|N|S|R| PID | (REQUIRED)
//          +-+-+-+-+-+-+-+-+
//     X:   |I|L|T|K| RSV   | (OPTIONAL)
//          +-+-+-+-+-+-+-+-+
//     I:   |M| PictureID   | (OPTIONAL)
//          +-+-+-+-+-+-+-+-+
//          |   PictureID   | (present when M = 1: 15-bit PictureID)
//          +-+-+-+-+-+-+-+-+
//     L:   |   TL0PICIDX   | (OPTIONAL)
//          +-+-+-+-+-+-+-+-+
//     T/K: |TID|Y| KEYIDX  | (OPTIONAL)
//          +-+-+-+-+-+-+-+-+
//
// Parsing is bounds-checked and never traps. R and RSV bits are ignored as the RFC asks, so
// the round trip is by value: what parses writes back to bytes that parse to the same value.

/// The fields of a VP8 payload descriptor. nil = the optional field is absent.
public struct VP8PayloadDescriptor: Equatable, Sendable {
    /// N: the frame can be discarded without hurting others.
    public var nonReference: Bool
    /// S: this packet starts a VP8 partition.
    public var startOfPartition: Bool
    /// PID: the partition index, 0...7.
    public var partitionIndex: UInt8
    /// PictureID, 7 bits (`longPictureID` false) or 15 bits (true).
    public var pictureID: UInt16?
    /// M: the PictureID has 15 bits. Only meaningful when `pictureID` is set.
    public var longPictureID: Bool
    public var tl0PicIndex: UInt8?
    /// TID, 0...3 (T = 1).
    public var temporalLayer: UInt8?
    /// Y: layer sync; only meaningful when `temporalLayer` is set.
    public var layerSync: Bool
    /// KEYIDX, 0...31 (K = 1).
    public var keyIndex: UInt8?

    public init(nonReference: Bool = false, startOfPartition: Bool, partitionIndex: UInt8 = 0,
                pictureID: UInt16? = nil, longPictureID: Bool = true, tl0PicIndex: UInt8? = nil,
                temporalLayer: UInt8? = nil, layerSync: Bool = false, keyIndex: UInt8? = nil) {
        self.nonReference = nonReference
        self.startOfPartition = startOfPartition
        self.partitionIndex = partitionIndex
        self.pictureID = pictureID
        self.longPictureID = longPictureID
        self.tl0PicIndex = tl0PicIndex
        self.temporalLayer = temporalLayer
        self.layerSync = layerSync
        self.keyIndex = keyIndex
    }

    /// Whether the X byte is needed.
    private var hasExtension: Bool {
        pictureID != nil || tl0PicIndex != nil || temporalLayer != nil || keyIndex != nil
    }

    /// Bytes `write` produces.
    public var size: Int {
        guard hasExtension else { return 1 }
        var n = 2
        if pictureID != nil { n += longPictureID ? 2 : 1 }
        if tl0PicIndex != nil { n += 1 }
        if temporalLayer != nil || keyIndex != nil { n += 1 }
        return n
    }

    /// Writes the descriptor at the start of `buffer`; returns `size`. Refuses values out of
    /// their field's range.
    public func write(into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let n = size
        guard buffer.count >= n else { throw .bufferTooSmall(needed: n, available: buffer.count) }
        guard partitionIndex <= 7 else { throw .malformed("VP8 partition index \(partitionIndex) > 7") }
        if let p = pictureID, p > (longPictureID ? 0x7FFF : 0x7F) {
            throw .malformed("VP8 PictureID \(p) does not fit \(longPictureID ? 15 : 7) bits")
        }
        if let t = temporalLayer, t > 3 { throw .malformed("VP8 TID \(t) > 3") }
        if let k = keyIndex, k > 31 { throw .malformed("VP8 KEYIDX \(k) > 31") }
        var w = RTPWriter(buffer)
        w.u8((hasExtension ? 0x80 : 0) | (nonReference ? 0x20 : 0) | (startOfPartition ? 0x10 : 0) | partitionIndex)
        if hasExtension {
            w.u8((pictureID != nil ? 0x80 : 0) | (tl0PicIndex != nil ? 0x40 : 0)
                 | (temporalLayer != nil ? 0x20 : 0) | (keyIndex != nil ? 0x10 : 0))
            if let p = pictureID {
                if longPictureID { w.u16(0x8000 | p) } else { w.u8(UInt8(p)) }
            }
            if let l = tl0PicIndex { w.u8(l) }
            if temporalLayer != nil || keyIndex != nil {
                w.u8((temporalLayer ?? 0) << 6 | (temporalLayer != nil && layerSync ? 0x20 : 0) | (keyIndex ?? 0))
            }
        }
        return try w.finish()
    }

    /// Parses the descriptor at the start of a VP8 payload; returns it and its size (the VP8
    /// data starts there).
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(RTPError) -> (VP8PayloadDescriptor, size: Int) {
        var r = RTPReader(bytes)
        guard r.remaining >= 1 else { throw .truncated("empty VP8 payload") }
        let b0 = try r.u8()
        var d = VP8PayloadDescriptor(nonReference: b0 & 0x20 != 0, startOfPartition: b0 & 0x10 != 0,
                                     partitionIndex: b0 & 0x07)
        guard b0 & 0x80 != 0 else { return (d, r.offset) }
        guard r.remaining >= 1 else { throw .truncated("VP8 descriptor X byte missing") }
        let x = try r.u8()
        if x & 0x80 != 0 {
            guard r.remaining >= 1 else { throw .truncated("VP8 PictureID missing") }
            if try r.u8(at: r.offset) & 0x80 != 0 {
                guard r.remaining >= 2 else { throw .truncated("VP8 15-bit PictureID cut") }
                d.pictureID = try r.u16() & 0x7FFF
                d.longPictureID = true
            } else {
                d.pictureID = UInt16(try r.u8())
                d.longPictureID = false
            }
        }
        if x & 0x40 != 0 {
            guard r.remaining >= 1 else { throw .truncated("VP8 TL0PICIDX missing") }
            d.tl0PicIndex = try r.u8()
        }
        if x & 0x30 != 0 {
            guard r.remaining >= 1 else { throw .truncated("VP8 TID/KEYIDX byte missing") }
            let tk = try r.u8()
            if x & 0x20 != 0 {
                d.temporalLayer = tk >> 6
                d.layerSync = tk & 0x20 != 0
            }
            if x & 0x10 != 0 { d.keyIndex = tk & 0x1F }
        }
        return (d, r.offset)
    }
}
