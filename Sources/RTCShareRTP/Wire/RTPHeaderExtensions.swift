import RTCShareCore

// RTP header extensions in the one-byte form of RFC 8285 §4.2, inside the extension block
// of RFC 3550 §5.3.1:
//
//      0                   1                   2                   3
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |       0xBE    |    0xDE       |           length              |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |  ID   |  L    |     data (L+1 bytes)  ...  |  0 (padding) ... |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// `length` counts 32-bit words of element data. IDs 1...14 name elements (the SDP's
// a=extmap maps them to URIs), a 0 byte is padding, and ID 15 ends the block. Element data
// is 1...16 bytes.
//
// Reading is bounds-checked and never traps; unknown IDs are skipped, and a known ID with the
// wrong length is ignored (as libwebrtc does) rather than failing the whole packet.

/// One-byte header extension elements: the profile, an element reader and the ID rules.
public enum RTPOneByteExtensions {
    /// The "defined by profile" value that marks the one-byte form.
    public static let profile: UInt16 = 0xBEDE
    /// IDs an element may carry.
    public static let validIDs: ClosedRange<UInt8> = 1...14
    /// Data bytes an element may carry.
    public static let validDataLengths: ClosedRange<Int> = 1...16

    /// One element found by `Reader`: its ID and where its data lies in the block's data.
    public struct Element: Equatable, Sendable {
        public var id: UInt8
        public var range: Range<Int>
    }

    /// Walks the elements of a one-byte block's data (the bytes after the 4-byte block
    /// header). Holds only an offset, so no pointer outlives the call that passes the bytes;
    /// pass the same bytes to every `next`.
    public struct Reader: Sendable {
        public private(set) var offset = 0
        private var stopped = false

        public init() {}

        /// The next element, nil at the end (or after ID 15). Throws `.truncated` when an
        /// element's data runs past the end of the block.
        public mutating func next(in data: UnsafeRawBufferPointer) throws(RTPError) -> Element? {
            var r = RTPReader(data)
            try r.seek(to: offset)
            defer { offset = r.offset }
            while !stopped && !r.isAtEnd {
                let b = try r.u8()
                let id = b >> 4
                if id == 0 { continue }  // a padding byte (its length field is ignored, RFC 8285 §4.2)
                if id == 15 {  // reserved: processing of the block ends here
                    stopped = true
                    return nil
                }
                let length = Int(b & 0x0F) + 1
                let start = r.offset
                guard r.remaining >= length else {
                    stopped = true
                    throw .truncated("one-byte extension id \(id) of \(length) bytes at \(start) past end \(data.count)")
                }
                try r.skip(length)
                return Element(id: id, range: start..<r.offset)
            }
            return nil
        }
    }

    /// Writes one element (`data` of 1...16 bytes, id 1...14) at `offset`; returns the offset
    /// after it.
    public static func writeElement(id: UInt8, data: UnsafeRawBufferPointer,
                                    into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(RTPError) -> Int {
        guard validIDs.contains(id) else { throw .malformed("one-byte extension id \(id) outside 1...14") }
        guard validDataLengths.contains(data.count) else {
            throw .malformed("one-byte extension data of \(data.count) bytes outside 1...16")
        }
        let end = offset + 1 + data.count
        guard offset >= 0, buffer.count >= end else { throw .bufferTooSmall(needed: end, available: buffer.count) }
        var w = RTPWriter(buffer, at: offset)
        w.u8(id << 4 | UInt8(data.count - 1))
        w.bytes(data)
        return try w.finish()
    }

    /// Writes the 4-byte block header at 0 for `dataBytes` of elements already written from
    /// offset 4, zero-pads them to a multiple of 4, and returns the block's total size.
    public static func finishBlock(dataBytes: Int, in buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let padded = (dataBytes + 3) & ~3
        let total = RTPHeader.extensionHeaderSize + padded
        guard dataBytes >= 0, padded / 4 <= Int(UInt16.max) else { throw .malformed("extension block of \(dataBytes) bytes") }
        guard buffer.count >= total else { throw .bufferTooSmall(needed: total, available: buffer.count) }
        var w = RTPWriter(buffer)
        w.u16(profile)
        w.u16(UInt16(padded / 4))
        w.seek(to: RTPHeader.extensionHeaderSize + dataBytes)
        w.zeros(padded - dataBytes)
        return try w.finish()
    }
}

/// The IDs the SDP negotiated for the elements this sender writes; nil = not negotiated (not
/// written, ignored when read). Invariant: every ID is in 1...14 and no two are equal.
public struct RTPExtensionMap: Equatable, Sendable {
    public let absSendTime: UInt8?
    public let transportSequenceNumber: UInt8?
    public let videoOrientation: UInt8?
    /// The MID element (`RTPMid`).
    public let mid: UInt8?

    public init(absSendTime: UInt8? = nil, transportSequenceNumber: UInt8? = nil,
                videoOrientation: UInt8? = nil, mid: UInt8? = nil) throws(RTPError) {
        let ids = [absSendTime, transportSequenceNumber, videoOrientation, mid].compactMap { $0 }
        for id in ids where !RTPOneByteExtensions.validIDs.contains(id) {
            throw .malformed("extension id \(id) outside 1...14")
        }
        guard Set(ids).count == ids.count else { throw .malformed("extension ids \(ids) are not distinct") }
        self.absSendTime = absSendTime
        self.transportSequenceNumber = transportSequenceNumber
        self.videoOrientation = videoOrientation
        self.mid = mid
    }

    /// No extensions.
    public static let none = try! RTPExtensionMap()
}

/// The values of the extension elements this module knows, for one packet. nil = absent.
public struct RTPExtensionValues: Equatable, Sendable {
    /// abs-send-time, 24 bits (see `AbsSendTime`).
    public var absSendTime: UInt32?
    /// Transport-wide sequence number (see `TransportSequenceNumber`).
    public var transportSequenceNumber: UInt16?
    public var videoOrientation: RTPVideoOrientation?
    /// The m-line the packet belongs to (BUNDLE demultiplexing).
    public var mid: RTPMid?

    public init(absSendTime: UInt32? = nil, transportSequenceNumber: UInt16? = nil,
                videoOrientation: RTPVideoOrientation? = nil, mid: RTPMid? = nil) {
        self.absSendTime = absSendTime
        self.transportSequenceNumber = transportSequenceNumber
        self.videoOrientation = videoOrientation
        self.mid = mid
    }

    /// Bytes of the whole extension block (header included) `write` produces with `map`; 0 when
    /// no element is both present and mapped (then no block and X = 0).
    public func size(map: RTPExtensionMap) -> Int {
        var data = 0
        if absSendTime != nil, map.absSendTime != nil { data += 4 }
        if transportSequenceNumber != nil, map.transportSequenceNumber != nil { data += 3 }
        if videoOrientation != nil, map.videoOrientation != nil { data += 2 }
        if let mid, map.mid != nil { data += 1 + mid.count }
        return data == 0 ? 0 : RTPHeader.extensionHeaderSize + (data + 3) & ~3
    }

    /// Writes the block (0xBEDE header, elements, zero padding) at the start of `buffer`;
    /// returns `size(map:)`.
    public func write(into buffer: UnsafeMutableRawBufferPointer, map: RTPExtensionMap) throws(RTPError) -> Int {
        let total = size(map: map)
        guard total > 0 else { return 0 }
        guard buffer.count >= total else { throw .bufferTooSmall(needed: total, available: buffer.count) }
        var w = RTPWriter(buffer, at: RTPHeader.extensionHeaderSize)
        if let v = absSendTime, let id = map.absSendTime {
            w.u8(id << 4 | 2)
            w.u24(v & 0xFF_FFFF)
        }
        if let v = transportSequenceNumber, let id = map.transportSequenceNumber {
            w.u8(id << 4 | 1)
            w.u16(v)
        }
        if let v = videoOrientation, let id = map.videoOrientation {
            w.u8(id << 4)
            w.u8(v.byte)
        }
        if let v = mid, let id = map.mid {
            w.u8(id << 4 | UInt8(v.count - 1))
            v.write(into: &w)
        }
        let end = try w.finish()
        return try RTPOneByteExtensions.finishBlock(dataBytes: end - RTPHeader.extensionHeaderSize, in: buffer)
    }

    /// Reads the known elements of a packet's extension block: `data` is the block's data
    /// (`RTPParsedPacket.extensionRange`), `profile` its profile. A block of another profile
    /// (e.g. two-byte, 0x100X) gives no values.
    public static func parse(data: UnsafeRawBufferPointer, profile: UInt16?,
                             map: RTPExtensionMap) throws(RTPError) -> RTPExtensionValues {
        var values = RTPExtensionValues()
        guard profile == RTPOneByteExtensions.profile else { return values }
        var reader = RTPOneByteExtensions.Reader()
        while let e = try reader.next(in: data) {
            let n = e.range.count
            var field = RTPReader(data)
            try field.seek(to: e.range.lowerBound)
            if e.id == map.absSendTime, n == 3 {
                values.absSendTime = try field.u24()
            } else if e.id == map.transportSequenceNumber, n == 2 {
                values.transportSequenceNumber = try field.u16()
            } else if e.id == map.videoOrientation, n == 1 {
                values.videoOrientation = RTPVideoOrientation(byte: try field.u8())
            } else if e.id == map.mid {
                values.mid = RTPMid(bytes: UnsafeRawBufferPointer(rebasing: data[e.range]))
            }
        }
        return values
    }

    /// Rewrites, in place, the per-send elements of a packet about to go out again (a
    /// retransmission, plain or RTX): the transport-wide sequence number, which counts every
    /// packet put on the wire (a receiver's transport feedback must see each send once), and
    /// abs-send-time. Elements the packet does not carry stay absent; nothing else changes.
    /// Returns whether a transport-wide sequence number was written.
    @discardableResult
    public static func rewriteSendElements(packet: UnsafeMutableRawBufferPointer, length: Int, map: RTPExtensionMap,
                                           transportSequenceNumber: UInt16,
                                           absSendTime: UInt32) throws(RTPError) -> Bool {
        guard length <= packet.count else { throw .truncated("length \(length) past buffer \(packet.count)") }
        let parsed = try RTPHeader.parse(UnsafeRawBufferPointer(rebasing: packet[0..<length]))
        guard parsed.extensionProfile == RTPOneByteExtensions.profile else { return false }
        let block = parsed.extensionRange
        let data = UnsafeMutableRawBufferPointer(rebasing: packet[block])
        var reader = RTPOneByteExtensions.Reader()
        var wrote = false
        while let e = try reader.next(in: UnsafeRawBufferPointer(data)) {
            var field = RTPWriter(data, at: e.range.lowerBound)
            if e.id == map.transportSequenceNumber, e.range.count == 2 {
                field.u16(transportSequenceNumber)
                wrote = true
            } else if e.id == map.absSendTime, e.range.count == 3 {
                field.u24(absSendTime)
            }
            _ = try field.finish()
        }
        return wrote
    }

    /// Convenience: the known elements of a whole parsed packet.
    public static func parse(packet: UnsafeRawBufferPointer, _ parsed: RTPParsedPacket,
                             map: RTPExtensionMap) throws(RTPError) -> RTPExtensionValues {
        guard parsed.extensionRange.upperBound <= packet.count else {
            throw .truncated("extension range \(parsed.extensionRange) past end \(packet.count)")
        }
        return try parse(data: UnsafeRawBufferPointer(rebasing: packet[parsed.extensionRange]),
                         profile: parsed.extensionProfile, map: map)
    }
}

/// abs-send-time (http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time): the send time as
/// 24-bit 6.18 fixed-point seconds, so it wraps every 64 s and counts in 2^-18 s (~3.8 µs).
public enum AbsSendTime {
    public static let uri = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"
    /// Units per second (2^18).
    public static let unitsPerSecond: Int64 = 1 << 18
    private static let wrapMicroseconds: Int64 = 64_000_000

    /// The 24-bit value for a time in microseconds (any epoch; only the time mod 64 s matters),
    /// rounded to the nearest unit.
    public static func value(microseconds: Int64) -> UInt32 {
        var r = microseconds % wrapMicroseconds
        if r < 0 { r += wrapMicroseconds }
        let units = ((r << 18) + 500_000) / 1_000_000
        return UInt32(truncatingIfNeeded: units) & 0xFF_FFFF
    }

    /// The time in 0..<64 s, in microseconds (rounded), that a 24-bit value stands for.
    public static func microseconds(_ value: UInt32) -> Int64 {
        (Int64(value & 0xFF_FFFF) * 1_000_000 + (unitsPerSecond >> 1)) >> 18
    }
}

/// Transport-wide sequence number (draft-holmer-rmcat-transport-wide-cc-extensions-01): a
/// 16-bit counter over every packet of the transport (all SSRCs), 2 bytes big-endian.
public enum TransportSequenceNumber {
    public static let uri = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
}

/// 3GPP Coordination of Video Orientation (`urn:3gpp:video-orientation`, TS 26.114 §7.4.5),
/// one byte:
///
///     bit  7 6 5 4 3 2  1  0
///          0 0 0 0 C F R1 R0
///
/// C: 1 = back-facing camera. F: the video on the link is mirrored left-right. R1R0: the
/// video on the link is turned R x 90° counter-clockwise, so the receiver turns it
/// **R x 90° clockwise** before display (TS 26.114 table 7.2: 01 → 90° CW, 10 → 180°,
/// 11 → 90° CCW; libwebrtc's `ConvertVideoRotationToCVOByte` maps its clockwise
/// `kVideoRotation_90` to 1 the same way).
///
/// TS 26.114 does not say whether the receiver mirrors before or after turning. This module
/// takes F as describing the video as sent, so the receiver's correction is: **mirror
/// left-right first, then turn R x 90° clockwise**. Mapping from the EXIF orientation of the
/// pixels sent (`Orientation`: what must be done to them to show them upright):
///
/// | EXIF | `Orientation`   | correction                  | F | R1R0 | byte (C=0) |
/// |------|-----------------|-----------------------------|---|------|------------|
/// | 1    | `.up`           | none                        | 0 | 00   | 0x00       |
/// | 2    | `.upMirrored`   | mirror                      | 1 | 00   | 0x04       |
/// | 3    | `.down`         | turn 180°                   | 0 | 10   | 0x02       |
/// | 4    | `.downMirrored` | mirror, turn 180° (= flip)  | 1 | 10   | 0x06       |
/// | 5    | `.leftMirrored` | mirror, turn 270° CW (= transpose)  | 1 | 11 | 0x07 |
/// | 6    | `.right`        | turn 90° CW                 | 0 | 01   | 0x01       |
/// | 7    | `.rightMirrored`| mirror, turn 90° CW (= transverse) | 1 | 01 | 0x05 |
/// | 8    | `.left`         | turn 270° CW (= 90° CCW)    | 0 | 11   | 0x03       |
///
/// The map is a bijection between the 8 orientations and the 8 (F, R) pairs. Receivers that
/// ignore F (libwebrtc does) show orientations 2, 4, 5 and 7 mirrored; a sender that needs
/// them right everywhere corrects the pixels instead (the transform does).
public struct RTPVideoOrientation: Equatable, Sendable {
    public static let uri = "urn:3gpp:video-orientation"

    /// The clockwise turn the receiver applies before display.
    public enum Rotation: UInt8, Sendable, CaseIterable {
        case none = 0
        case clockwise90 = 1
        case clockwise180 = 2
        case clockwise270 = 3

        public var degrees: Int { Int(rawValue) * 90 }
    }

    /// C: the back-facing camera (false: front-facing or unknown).
    public var backFacingCamera: Bool
    /// F: the video as sent is mirrored left-right; the receiver mirrors it before turning.
    public var flip: Bool
    public var rotation: Rotation

    public init(rotation: Rotation, flip: Bool = false, backFacingCamera: Bool = false) {
        self.rotation = rotation
        self.flip = flip
        self.backFacingCamera = backFacingCamera
    }

    /// From the wire byte. The upper four bits (zero in this 2-bit-granularity form, rotation
    /// bits in `urn:3gpp:video-orientation:6`) are ignored.
    public init(byte: UInt8) {
        rotation = Rotation(rawValue: byte & 0x03)!  // two bits: always 0...3
        flip = byte & 0x04 != 0
        backFacingCamera = byte & 0x08 != 0
    }

    /// The wire byte.
    public var byte: UInt8 { (backFacingCamera ? 0x08 : 0) | (flip ? 0x04 : 0) | rotation.rawValue }

    /// The CVO for pixels sent with EXIF orientation `orientation` (table above).
    public init(orientation: Orientation, backFacingCamera: Bool = false) {
        let (flip, rotation): (Bool, Rotation) = switch orientation {
        case .up: (false, .none)
        case .upMirrored: (true, .none)
        case .down: (false, .clockwise180)
        case .downMirrored: (true, .clockwise180)
        case .leftMirrored: (true, .clockwise270)
        case .right: (false, .clockwise90)
        case .rightMirrored: (true, .clockwise90)
        case .left: (false, .clockwise270)
        }
        self.init(rotation: rotation, flip: flip, backFacingCamera: backFacingCamera)
    }

    /// The EXIF orientation of the video as sent (table above; C does not take part).
    public var orientation: Orientation {
        switch (flip, rotation) {
        case (false, .none): .up
        case (true, .none): .upMirrored
        case (false, .clockwise180): .down
        case (true, .clockwise180): .downMirrored
        case (true, .clockwise270): .leftMirrored
        case (false, .clockwise90): .right
        case (true, .clockwise90): .rightMirrored
        case (false, .clockwise270): .left
        }
    }
}
