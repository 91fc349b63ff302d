// What carries relayed datagrams between a TURN client and its server, read and written in
// place (RFC 8656 §11, §12): no copy into an attribute, no allocation per datagram.
//
// ChannelData (§12.4), once a channel is bound to the peer; 4 bytes of overhead:
//
//     |         Channel Number        |            Length             |
//     |                       Application Data ...                    |
//
// On a stream (TCP, TLS) it is padded to a multiple of 4; over UDP the padding may be left off
// (§12.5), and is. Channel numbers are 0x4000...0x4FFF, so the first byte is 64...79 (RFC 7983).
//
// Send and Data indications (§11.4, §11.6) before a channel exists: a STUN message with
// XOR-PEER-ADDRESS and DATA. An indication carries no MESSAGE-INTEGRITY; the server accepts a
// Send only toward a peer that has a permission.
//
// On a stream, STUN messages and ChannelData follow each other with nothing between:
// `frameLength` says how long the frame starting a buffer is, from its first four bytes.

/// Reading and writing TURN's data framing.
public enum TURNWire {
    public static let channelDataHeader = 4
    /// A Send indication's bytes before the payload: STUN header, XOR-PEER-ADDRESS (IPv6 at
    /// most), DATA's header.
    public static let sendIndicationOverhead = STUNMessage.headerSize + 24 + 4
    /// Most bytes wrapping adds to a payload (a Send indication to an IPv6 peer, padded).
    public static let maximumOverhead = sendIndicationOverhead + 3
    public static let channelNumbers: ClosedRange<UInt16> = 0x4000...0x4FFF

    /// Whether a datagram from the server is ChannelData (first byte 64...79).
    public static func isChannelData(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= channelDataHeader && (0x40...0x4F).contains(bytes[0])
    }

    /// Writes ChannelData for `payload` into `buffer`; returns its length, or nil when it does
    /// not fit. `padded` on streams.
    public static func writeChannelData(_ payload: UnsafeRawBufferPointer, channel: UInt16, padded: Bool,
                                        into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let n = payload.count
        let total = channelDataHeader + (padded ? (n + 3) & ~3 : n)
        guard n <= 0xFFFF, total <= buffer.count else { return nil }
        buffer.stunPut16(channel, at: 0)
        buffer.stunPut16(UInt16(n), at: 2)
        if n > 0 { (buffer.baseAddress! + channelDataHeader).copyMemory(from: payload.baseAddress!, byteCount: n) }
        for i in (channelDataHeader + n)..<total { buffer[i] = 0 }
        return total
    }

    /// The channel and the application data of a ChannelData message: the range of `bytes`
    /// holding it; nil when the length field claims more than is there.
    public static func readChannelData(_ bytes: UnsafeRawBufferPointer) -> (channel: UInt16, data: Range<Int>)? {
        guard isChannelData(bytes) else { return nil }
        let n = Int(bytes.stunU16(2))
        guard channelDataHeader + n <= bytes.count else { return nil }
        return (bytes.stunU16(0), channelDataHeader..<(channelDataHeader + n))
    }

    /// Writes a Send indication carrying `payload` to `peer`; its length, or nil when it does
    /// not fit.
    public static func writeSendIndication(_ payload: UnsafeRawBufferPointer, to peer: ICEAddress,
                                           transactionID: STUNTransactionID,
                                           into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let peerAttribute = STUNAttribute.xorPeerAddress(peer)
        let n = payload.count
        let total = STUNMessage.headerSize + peerAttribute.size + 4 + (n + 3) & ~3
        guard n <= 0xFFFF, total <= buffer.count, total - STUNMessage.headerSize <= 0xFFFC else { return nil }
        buffer.stunPut16(STUNMessageType(method: STUNMessageType.sendMethod, class: .indication).rawValue, at: 0)
        buffer.stunPut16(UInt16(total - STUNMessage.headerSize), at: 2)
        buffer.stunPut32(STUNMessage.magicCookie, at: 4)
        transactionID.write(into: buffer, at: 8)
        var offset = STUNMessage.headerSize
        peerAttribute.write(into: buffer, at: offset, transactionID: transactionID)
        offset += peerAttribute.size
        buffer.stunPut16(STUNAttribute.Code.data, at: offset)
        buffer.stunPut16(UInt16(n), at: offset + 2)
        offset += 4
        if n > 0 { (buffer.baseAddress! + offset).copyMemory(from: payload.baseAddress!, byteCount: n) }
        for i in (offset + n)..<total { buffer[i] = 0 }
        return total
    }

    /// The peer and the range of the DATA value of a Data indication (`bytes` a whole STUN
    /// message of that type, its length already checked against the datagram); nil when either
    /// attribute is missing or malformed.
    public static func readDataIndication(_ bytes: UnsafeRawBufferPointer) -> (peer: ICEAddress, data: Range<Int>)? {
        guard bytes.count >= STUNMessage.headerSize,
              STUNMessageType(rawValue: bytes.stunU16(0)) == STUNMessageType(method: STUNMessageType.dataMethod,
                                                                            class: .indication),
              STUNMessage.headerSize + Int(bytes.stunU16(2)) == bytes.count else { return nil }
        let id = STUNTransactionID(bytes, at: 8)
        var peer: ICEAddress?
        var data: Range<Int>?
        var offset = STUNMessage.headerSize
        while bytes.count - offset >= 4 {
            let code = bytes.stunU16(offset)
            let n = Int(bytes.stunU16(offset + 2))
            let start = offset + 4
            guard bytes.count - start >= n else { return nil }
            if code == STUNAttribute.Code.xorPeerAddress, peer == nil {
                let value = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + n)])
                guard case .xorPeerAddress(let a)? = try? STUNAttribute.parse(code: code, value: value, transactionID: id)
                else { return nil }
                peer = a
            } else if code == STUNAttribute.Code.data, data == nil {
                data = start..<(start + n)
            }
            offset = start + (n + 3) & ~3
        }
        guard let peer, let data else { return nil }
        return (peer, data)
    }

    /// Bytes of the frame that starts `prefix` on a stream (its first four bytes suffice):
    /// a STUN message's 20-byte header and length, or ChannelData's 4 and length padded to 4.
    /// nil when the first byte is neither (the stream is out of step: a broken server).
    public static func frameLength(_ prefix: UnsafeRawBufferPointer) -> Int? {
        guard prefix.count >= 4 else { return nil }
        let length = Int(prefix.stunU16(2))
        switch prefix[0] {
        case 0...3: return length % 4 == 0 ? STUNMessage.headerSize + length : nil
        case 0x40...0x4F: return channelDataHeader + (length + 3) & ~3
        default: return nil
        }
    }
}

/// Whole frames out of the bytes a TURN server sends on a stream (TCP, TLS), in a fixed buffer:
/// bytes are appended as they arrive, `nextFrame` hands out each complete STUN message or
/// ChannelData frame in order, and a frame longer than `maximumFrame` is skipped, not kept. A
/// first byte that is neither STUN nor ChannelData means the stream is out of step: broken.
public struct TURNStreamReassembly: ~Copyable {
    public let maximumFrame: Int
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var count = 0
    /// Bytes of an oversized frame still to be skipped.
    private var skipping = 0
    public private(set) var skippedFrames = 0

    public init(capacity: Int = 16 << 10, maximumFrame: Int = 4096) {
        precondition(maximumFrame >= 24 && capacity >= maximumFrame, "a TURN stream buffer holds at least one frame")
        buffer = .allocate(byteCount: capacity, alignment: 16)
        self.maximumFrame = maximumFrame
    }

    deinit { buffer.deallocate() }

    /// Where the next bytes from the stream go (read into it, then `appended`).
    public mutating func freeSpace() -> UnsafeMutableRawBufferPointer {
        if start > 0 {
            if count > 0 { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: count) }
            start = 0
        }
        return UnsafeMutableRawBufferPointer(rebasing: buffer[count...])
    }

    public mutating func appended(_ n: Int) {
        precondition(n >= 0 && start + count + n <= buffer.count, "more appended than there was room for")
        count += n
    }

    public enum Next {
        /// A whole frame: `bytes` (valid until the next call) holds `length` bytes of it, and room after.
        case frame(UnsafeMutableRawBufferPointer, length: Int)
        /// No whole frame yet.
        case needMore
        /// The stream is out of step (the first byte of a frame says neither STUN nor ChannelData).
        case broken(UInt8)
    }

    public mutating func nextFrame() -> Next {
        while true {
            if skipping > 0 {
                let n = min(skipping, count)
                skipping -= n
                start += n
                count -= n
                if skipping > 0 { return .needMore }
            }
            guard count >= 4 else { return .needMore }
            guard let length = TURNWire.frameLength(UnsafeRawBufferPointer(rebasing: buffer[start..<(start + 4)])) else {
                return .broken(buffer[start])
            }
            if length > maximumFrame {
                skipping = length
                skippedFrames += 1
                continue
            }
            guard count >= length else { return .needMore }
            let frame = UnsafeMutableRawBufferPointer(rebasing: buffer[start..<buffer.count])
            start += length
            count -= length
            return .frame(frame, length: length)
        }
    }
}
