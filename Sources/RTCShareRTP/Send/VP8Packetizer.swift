import RTCShareCore

// RFC 7741 packetization of one encoded VP8 frame: the frame is cut into chunks of balanced
// sizes (they differ by at most one byte, so there is no runt last packet), each behind a
// 4-byte payload descriptor
//
//     |1|0|0|S|0|0 0 0|   X = 1, N = 0, S = 1 on the first packet only, PID = 0
//     |1|0|0|0|0 0 0 0|   I = 1 (PictureID present), L = T = K = 0
//     |1| PictureID hi|   M = 1: 15-bit PictureID, the same in every packet of a frame
//     | PictureID lo  |
//
// and the RTP marker bit goes on the last packet. Nothing here allocates or keeps a pointer:
// `beginFrame` returns a plan (numbers only), and each packet's payload is written from the
// caller's frame bytes into the caller's packet buffer, normally right behind the RTP header
// that `RTPStream` wrote there.

/// Hands out the PictureID of each frame and plans its packets.
public struct VP8Packetizer: Sendable {
    /// Bytes of the descriptor this packetizer writes.
    public static let descriptorSize = 4
    /// The PictureID the next frame gets (15 bits; it wraps from 0x7FFF to 0).
    public private(set) var nextPictureID: UInt16

    /// Starts at `initialPictureID` (taken mod 2^15).
    public init(initialPictureID: UInt16) {
        nextPictureID = initialPictureID & 0x7FFF
    }

    /// Starts at a random PictureID (RFC 7741 recommends a random start).
    public init() {
        var rng = SystemRandomNumberGenerator()
        self.init(initialPictureID: UInt16.random(in: 0...0x7FFF, using: &rng))
    }

    /// Plans the packets of a frame of `byteCount` bytes so that every payload is at most
    /// `maxPayloadSize` bytes (descriptor included), and advances the PictureID. Throws
    /// `.malformed` for an empty frame or a payload size that leaves no room for data.
    public mutating func beginFrame(byteCount: Int, maxPayloadSize: Int) throws(RTPError) -> VP8FramePlan {
        guard byteCount > 0 else { throw .malformed("empty VP8 frame") }
        let room = maxPayloadSize - Self.descriptorSize
        guard room > 0 else { throw .malformed("max payload size \(maxPayloadSize) leaves no room for VP8 data") }
        let count = (byteCount + room - 1) / room
        let plan = VP8FramePlan(pictureID: nextPictureID, frameByteCount: byteCount, packetCount: count)
        nextPictureID = (nextPictureID &+ 1) & 0x7FFF
        return plan
    }
}

/// The packets of one frame. Invariants: `packetCount` ≥ 1; chunk sizes differ by at most
/// one (the larger ones first) and add up to `frameByteCount`; every payload is at most the
/// `maxPayloadSize` the plan was made for.
public struct VP8FramePlan: Equatable, Sendable {
    public let pictureID: UInt16
    public let frameByteCount: Int
    public let packetCount: Int

    init(pictureID: UInt16, frameByteCount: Int, packetCount: Int) {
        self.pictureID = pictureID
        self.frameByteCount = frameByteCount
        self.packetCount = packetCount
    }

    /// The bytes of the frame packet `index` carries.
    public func frameRange(ofPacket index: Int) -> Range<Int> {
        precondition(index >= 0 && index < packetCount, "VP8 packet index out of range")
        let base = frameByteCount / packetCount
        let larger = frameByteCount % packetCount
        let start = index * base + min(index, larger)
        return start..<(start + base + (index < larger ? 1 : 0))
    }

    /// The payload size of packet `index`: descriptor + chunk.
    public func payloadSize(ofPacket index: Int) -> Int {
        VP8Packetizer.descriptorSize + frameRange(ofPacket: index).count
    }

    /// Whether packet `index` ends the frame (it carries the RTP marker bit).
    public func isLast(_ index: Int) -> Bool { index == packetCount - 1 }

    /// Writes packet `index`'s payload (descriptor + chunk of `frame`) at the start of
    /// `buffer`; returns its size. `frame` must be the `frameByteCount` bytes planned for.
    public func writePayload(ofPacket index: Int, frame: UnsafeRawBufferPointer,
                             into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        guard frame.count == frameByteCount else {
            throw .malformed("VP8 frame of \(frame.count) bytes, planned for \(frameByteCount)")
        }
        let range = frameRange(ofPacket: index)
        let n = VP8Packetizer.descriptorSize + range.count
        guard buffer.count >= n else { throw .bufferTooSmall(needed: n, available: buffer.count) }
        var w = RTPWriter(buffer)
        w.u8(index == 0 ? 0x90 : 0x80)
        w.u8(0x80)
        w.u16(0x8000 | pictureID)
        w.bytes(UnsafeRawBufferPointer(rebasing: frame[range]))
        return try w.finish()
    }
}
