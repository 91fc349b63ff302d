import RTCShareCore

// RFC 6184 packetization of one H.264 access unit (Annex B from the encoder), in
// packetization-mode 1 (non-interleaved): NAL units go out in order, as
//
// - a single NAL unit packet (§5.6) when one fits the payload size alone;
// - a STAP-A (§5.7.1) when several consecutive ones fit together — SPS and PPS (and the IDR
//   slice, when small) in front of every IDR travel in one packet:
//
//     |F|NRI|  24    | size (16) | NAL unit | size (16) | NAL unit | ...
//
//   with F the OR and NRI the largest of the aggregated units' (§5.7);
// - FU-A fragments (§5.8) for a NAL unit larger than the payload size; its header byte is not
//   sent but split over the FU indicator (F, NRI, type 28) and the FU header (S, E, R = 0, type):
//
//     |F|NRI|  28    |S|E|R|  Type   | fragment ...
//
//   Fragments are of balanced sizes (they differ by at most one byte: no runt last packet).
//
// The marker bit goes on the last packet of the access unit. Nothing here allocates or keeps a
// pointer: the plan holds offsets, and each call gets the access unit's bytes again.

/// Plans the packets of H.264 access units. Stateless: RFC 6184 numbers nothing per frame.
public struct H264Packetizer: Sendable {
    /// Bytes of the STAP-A header, and of each unit's size field in it.
    public static let stapHeaderSize = 1
    public static let stapSizeFieldSize = 2
    /// FU indicator + FU header.
    public static let fuHeaderSize = 2

    public init() {}

    /// Plans the packets of an access unit of `byteCount` bytes, every payload at most
    /// `maxPayloadSize` bytes. Throws `.malformed` for an empty access unit or a payload size
    /// too small for any fragment.
    public func beginFrame(byteCount: Int, maxPayloadSize: Int) throws(RTPError) -> H264FramePlan {
        guard byteCount > 0 else { throw .malformed("empty H.264 access unit") }
        guard maxPayloadSize > Self.fuHeaderSize else {
            throw .malformed("max payload size \(maxPayloadSize) leaves no room for H.264 data")
        }
        return H264FramePlan(frameByteCount: byteCount, maxPayloadSize: maxPayloadSize)
    }
}

/// The packets of one access unit, handed out in order. Invariants: every payload is at most
/// `maxPayloadSize`; each NAL unit's bytes are sent exactly once, in order; exactly the last
/// packet has `isLast`.
public struct H264FramePlan: RTPVideoFramePlan, Sendable {
    public enum Kind: Equatable, Sendable {
        /// One NAL unit as the payload: `nal` is its range in the access unit.
        case single(nal: Range<Int>)
        /// `count` consecutive NAL units spanning `span` (first unit's start to last one's end).
        case stapA(span: Range<Int>, count: Int)
        /// The bytes `fragment` of the NAL unit whose header byte is `header`.
        case fuA(header: UInt8, fragment: Range<Int>, isStart: Bool, isEnd: Bool)
    }

    public struct Packet: RTPVideoPacket, Equatable, Sendable {
        public let kind: Kind
        public let payloadSize: Int
        public let isLast: Bool
    }

    public let frameByteCount: Int
    public let maxPayloadSize: Int

    /// The next NAL unit not yet (fully) planned, already found, and where to look after it.
    private var lookahead: (range: Range<Int>, next: Int)?
    private var scanned = false
    /// The NAL unit being fragmented: its payload (header byte excluded), fragments planned.
    private var fragmenting: (header: UInt8, body: Range<Int>, count: Int, index: Int)?

    init(frameByteCount: Int, maxPayloadSize: Int) {
        self.frameByteCount = frameByteCount
        self.maxPayloadSize = maxPayloadSize
    }

    public mutating func nextPacket(in frame: UnsafeRawBufferPointer) throws(RTPError) -> Packet? {
        guard frame.count == frameByteCount else {
            throw .malformed("H.264 access unit of \(frame.count) bytes, planned for \(frameByteCount)")
        }
        if !scanned {
            scanned = true
            lookahead = H264AnnexB.nextNALUnit(in: frame, from: 0)
            guard lookahead != nil else { throw .malformed("H.264 access unit without a start code") }
        }
        if let f = fragmenting {
            return fragment(f, frame)
        }
        guard let nal = lookahead else { return nil }
        lookahead = H264AnnexB.nextNALUnit(in: frame, from: nal.next)

        if nal.range.count > maxPayloadSize {
            let body = (nal.range.lowerBound + 1)..<nal.range.upperBound
            let room = maxPayloadSize - H264Packetizer.fuHeaderSize
            let f = (header: frame[nal.range.lowerBound], body: body, count: (body.count + room - 1) / room, index: 0)
            return fragment(f, frame)
        }
        // Aggregate what follows while it fits.
        var size = H264Packetizer.stapHeaderSize + H264Packetizer.stapSizeFieldSize + nal.range.count
        var count = 1
        var end = nal.range.upperBound
        while let next = lookahead,
              size + H264Packetizer.stapSizeFieldSize + next.range.count <= maxPayloadSize {
            size += H264Packetizer.stapSizeFieldSize + next.range.count
            count += 1
            end = next.range.upperBound
            lookahead = H264AnnexB.nextNALUnit(in: frame, from: next.next)
        }
        if count == 1 {
            return Packet(kind: .single(nal: nal.range), payloadSize: nal.range.count, isLast: lookahead == nil)
        }
        return Packet(kind: .stapA(span: nal.range.lowerBound..<end, count: count), payloadSize: size,
                      isLast: lookahead == nil)
    }

    private mutating func fragment(_ f: (header: UInt8, body: Range<Int>, count: Int, index: Int),
                                   _ frame: UnsafeRawBufferPointer) -> Packet {
        let base = f.body.count / f.count, larger = f.body.count % f.count
        let start = f.body.lowerBound + f.index * base + min(f.index, larger)
        let range = start..<(start + base + (f.index < larger ? 1 : 0))
        let isEnd = f.index == f.count - 1
        fragmenting = isEnd ? nil : (f.header, f.body, f.count, f.index + 1)
        return Packet(kind: .fuA(header: f.header, fragment: range, isStart: f.index == 0, isEnd: isEnd),
                      payloadSize: H264Packetizer.fuHeaderSize + range.count, isLast: isEnd && lookahead == nil)
    }

    public func writePayload(of packet: Packet, frame: UnsafeRawBufferPointer,
                             into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        guard frame.count == frameByteCount else {
            throw .malformed("H.264 access unit of \(frame.count) bytes, planned for \(frameByteCount)")
        }
        guard buffer.count >= packet.payloadSize else {
            throw .bufferTooSmall(needed: packet.payloadSize, available: buffer.count)
        }
        var w = RTPWriter(buffer)
        switch packet.kind {
        case .single(let nal):
            w.bytes(UnsafeRawBufferPointer(rebasing: frame[nal]))
        case .stapA(let span, let count):
            w.seek(to: H264Packetizer.stapHeaderSize)
            var f: UInt8 = 0, nri: UInt8 = 0
            // The first unit's start code ends right before it: its last three bytes are 00 00 01.
            var from = max(span.lowerBound - 3, 0)
            for _ in 0..<count {
                guard let nal = H264AnnexB.nextNALUnit(in: UnsafeRawBufferPointer(rebasing: frame[..<span.upperBound]),
                                                       from: from) else {
                    throw .malformed("H.264 access unit changed since it was planned")
                }
                let header = frame[nal.range.lowerBound]
                f |= header & 0x80
                nri = max(nri, header & 0x60)
                w.u16(UInt16(nal.range.count))
                w.bytes(UnsafeRawBufferPointer(rebasing: frame[nal.range]))
                from = nal.next
            }
            guard w.fits, w.offset == packet.payloadSize else {
                throw .malformed("H.264 access unit changed since it was planned")
            }
            w.seek(to: 0)
            w.u8(f | nri | H264NALType.stapA)
        case .fuA(let header, let fragment, let isStart, let isEnd):
            w.u8(header & 0xE0 | H264NALType.fuA)
            w.u8((isStart ? 0x80 : 0) | (isEnd ? 0x40 : 0) | H264NALType.of(header))
            w.bytes(UnsafeRawBufferPointer(rebasing: frame[fragment]))
        }
        _ = try w.finish()
        return packet.payloadSize
    }
}
