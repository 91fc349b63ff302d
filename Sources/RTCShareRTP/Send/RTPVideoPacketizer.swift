import RTCShareCore

// The codec-neutral face of video packetization that `RTPSender` drives: a packetizer turns
// one encoded frame into a plan, and the plan hands out its packets one at a time (payload
// size and whether it ends the frame, known before its payload is written, so the RTP header
// with the marker bit can go first). Packets are written into the sender's one packet buffer;
// what happens after — history, NACK answers, RTX, SRTP — never looks inside the payload.

/// One planned packet of a frame.
public protocol RTPVideoPacket {
    /// Bytes of its RTP payload (the payload-format header included).
    var payloadSize: Int { get }
    /// Whether it ends the frame (the RTP marker bit).
    var isLast: Bool { get }
}

/// The packets of one frame, one at a time. Plans keep no pointer: each call is handed the
/// frame's bytes again.
public protocol RTPVideoFramePlan {
    associatedtype Packet: RTPVideoPacket
    /// The next packet, or nil when the frame is done.
    mutating func nextPacket(in frame: UnsafeRawBufferPointer) throws(RTPError) -> Packet?
    /// Writes `packet`'s payload at the start of `buffer`; returns its size.
    func writePayload(of packet: Packet, frame: UnsafeRawBufferPointer,
                      into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int
}

/// The packetizer of the stream's codec.
public enum RTPVideoPacketizer: Sendable {
    case vp8(VP8Packetizer)
    case h264(H264Packetizer)

    public init(codec: VideoCodec) {
        switch codec {
        case .vp8: self = .vp8(VP8Packetizer())
        case .h264: self = .h264(H264Packetizer())
        }
    }
}

/// A VP8 frame plan walked in packet order.
public struct VP8PacketCursor: RTPVideoFramePlan {
    public struct Packet: RTPVideoPacket {
        public let index: Int
        public let payloadSize: Int
        public let isLast: Bool
    }

    public let plan: VP8FramePlan
    private var next = 0

    public init(_ plan: VP8FramePlan) { self.plan = plan }

    public mutating func nextPacket(in frame: UnsafeRawBufferPointer) throws(RTPError) -> Packet? {
        guard next < plan.packetCount else { return nil }
        defer { next += 1 }
        return Packet(index: next, payloadSize: plan.payloadSize(ofPacket: next), isLast: plan.isLast(next))
    }

    public func writePayload(of packet: Packet, frame: UnsafeRawBufferPointer,
                             into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        try plan.writePayload(ofPacket: packet.index, frame: frame, into: buffer)
    }
}
