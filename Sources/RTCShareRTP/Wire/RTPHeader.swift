import RTCShareCore

// The RTP fixed header, RFC 3550 §5.1:
//
//      0                   1                   2                   3
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |V=2|P|X|  CC   |M|     PT      |       sequence number         |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |                           timestamp                           |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |           synchronization source (SSRC) identifier            |
//     +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//     |            contributing source (CSRC) identifiers             |
//     |                             ....                              |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// followed, when X = 1, by the extension block of §5.3.1 (16-bit profile, 16-bit length in
// 32-bit words, then the data), the payload, and, when P = 1, padding whose last octet counts
// the padding octets (itself included).
//
// `RTPHeader.parse` takes untrusted bytes: it checks every length before reading (and reads
// through the bounds-checked `RTPReader`) and throws `RTPError`, never traps. It does not copy: it says where the extension data and the payload
// lie in the bytes it was given.

/// The contributing sources of a packet (0...15 of them), held inline so that a header is a
/// plain value with no allocation.
public struct RTPCSRCList: Equatable, Sendable {
    /// The most a header can carry (the CC field has 4 bits).
    public static let capacity = 15
    private var storage = CSRCStorage()
    /// How many are present; 0...15.
    public private(set) var count = 0

    public init() {}

    /// At most 15 values; further ones are dropped (a header cannot carry them).
    public init(_ values: some Sequence<UInt32>) {
        for v in values where count < Self.capacity { append(v) }
    }

    /// Adds one; returns false (and adds nothing) when 15 are already present.
    @discardableResult
    public mutating func append(_ csrc: UInt32) -> Bool {
        guard count < Self.capacity else { return false }
        storage[count] = csrc
        count += 1
        return true
    }

    public subscript(index: Int) -> UInt32 {
        precondition(index >= 0 && index < count, "CSRC index out of range")
        return storage[index]
    }

    public static func == (a: RTPCSRCList, b: RTPCSRCList) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a.storage[i] != b.storage[i] { return false }
        return true
    }
}

/// Fifteen values inline. `InlineArray` (Swift 6.2) where there is one; a tuple for Swift 6.0
/// (Debian 13's).
#if compiler(>=6.2)
private typealias CSRCStorage = InlineArray<15, UInt32>
extension InlineArray where Element == UInt32, count == 15 {
    fileprivate init() { self.init(repeating: 0) }
}
#else
private struct CSRCStorage: Sendable {
    private var values: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
                         UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    subscript(index: Int) -> UInt32 {
        get {
            precondition(index >= 0 && index < 15)
            return withUnsafeBytes(of: values) { $0.load(fromByteOffset: index * 4, as: UInt32.self) }
        }
        set {
            precondition(index >= 0 && index < 15)
            withUnsafeMutableBytes(of: &values) { $0.storeBytes(of: newValue, toByteOffset: index * 4, as: UInt32.self) }
        }
    }
}
#endif

/// The fields of an RTP fixed header (the version is always 2).
public struct RTPHeader: Equatable, Sendable {
    /// Bytes of the header without CSRCs.
    public static let fixedSize = 12
    /// The only version RFC 3550 defines; anything else is refused.
    public static let version: UInt8 = 2
    /// Bytes of an extension block's own header (profile + length).
    public static let extensionHeaderSize = 4

    /// M: for video the last packet of a frame, for audio the first packet of a talkspurt.
    public var marker: Bool
    /// PT: 0...127 (`write` refuses larger values).
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    public var csrcs: RTPCSRCList
    /// X: an extension block follows the CSRCs. `write` only sets the bit; the block is written
    /// after the header by its own writer (`RTPExtensionBlock`).
    public var hasExtension: Bool
    /// P: the packet ends with padding. `write` only sets the bit; the caller appends it.
    public var hasPadding: Bool

    public init(marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32,
                ssrc: UInt32, csrcs: RTPCSRCList = RTPCSRCList(), hasExtension: Bool = false,
                hasPadding: Bool = false) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.hasExtension = hasExtension
        self.hasPadding = hasPadding
    }

    /// Bytes `write` produces: 12 + 4 per CSRC.
    public var size: Int { Self.fixedSize + 4 * csrcs.count }

    /// Writes the fixed header and CSRCs at the start of `buffer`; returns `size`.
    public func write(into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let n = size
        guard buffer.count >= n else { throw .bufferTooSmall(needed: n, available: buffer.count) }
        guard payloadType < 128 else { throw .malformed("RTP payload type \(payloadType) > 127") }
        var w = RTPWriter(buffer)
        w.u8(Self.version << 6 | (hasPadding ? 0x20 : 0) | (hasExtension ? 0x10 : 0) | UInt8(csrcs.count))
        w.u8((marker ? 0x80 : 0) | payloadType)
        w.u16(sequenceNumber)
        w.u32(timestamp)
        w.u32(ssrc)
        for i in 0..<csrcs.count { w.u32(csrcs[i]) }
        return try w.finish()
    }

    /// Parses the packet in `bytes` (one whole datagram, after SRTP unprotect).
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(RTPError) -> RTPParsedPacket {
        let total = bytes.count
        guard total >= fixedSize else { throw .truncated("RTP packet of \(total) bytes < 12-byte header") }
        var r = RTPReader(bytes)
        let b0 = try r.u8()
        guard b0 >> 6 == version else { throw .malformed("RTP version \(b0 >> 6)") }
        let hasPadding = b0 & 0x20 != 0
        let hasExtension = b0 & 0x10 != 0
        let cc = Int(b0 & 0x0F)
        let headerEnd = fixedSize + 4 * cc
        guard total >= headerEnd else { throw .truncated("RTP header with \(cc) CSRCs needs \(headerEnd) bytes, has \(total)") }
        let b1 = try r.u8()
        let sequenceNumber = try r.u16()
        let timestamp = try r.u32()
        let ssrc = try r.u32()
        var csrcs = RTPCSRCList()
        for _ in 0..<cc { csrcs.append(try r.u32()) }
        let header = RTPHeader(marker: b1 & 0x80 != 0, payloadType: b1 & 0x7F, sequenceNumber: sequenceNumber,
                               timestamp: timestamp, ssrc: ssrc, csrcs: csrcs, hasExtension: hasExtension,
                               hasPadding: hasPadding)

        var profile: UInt16? = nil
        var extensionRange = headerEnd..<headerEnd
        if hasExtension {
            guard r.remaining >= extensionHeaderSize else {
                throw .truncated("RTP extension header at \(r.offset) past end \(total)")
            }
            profile = try r.u16()
            let length = 4 * Int(try r.u16())
            let start = r.offset
            guard r.remaining >= length else {
                throw .truncated("RTP extension of \(length) bytes at \(start) past end \(total)")
            }
            try r.skip(length)
            extensionRange = start..<r.offset
        }
        let offset = r.offset

        var paddingLength = 0
        if hasPadding {
            paddingLength = Int(try r.u8(at: total - 1))
            guard paddingLength > 0 else { throw .malformed("RTP padding count 0") }
            guard paddingLength <= total - offset else {
                throw .malformed("RTP padding of \(paddingLength) bytes exceeds the \(total - offset) after the header")
            }
        }
        return RTPParsedPacket(header: header, extensionProfile: profile, extensionRange: extensionRange,
                               payloadRange: offset..<(total - paddingLength), paddingLength: paddingLength)
    }
}

/// Where the parts of a parsed packet lie in the bytes it was parsed from. Invariant:
/// header bytes ≤ `extensionRange` ≤ `payloadRange`, and `payloadRange.upperBound +
/// paddingLength` is the packet's length.
public struct RTPParsedPacket: Equatable, Sendable {
    public var header: RTPHeader
    /// The extension block's profile (0xBEDE for RFC 8285 one-byte elements); nil when X = 0.
    public var extensionProfile: UInt16?
    /// The extension block's data, after its 4-byte header; empty when there is none.
    public var extensionRange: Range<Int>
    public var payloadRange: Range<Int>
    /// Octets of padding at the end (the last one included); 0 when P = 0.
    public var paddingLength: Int

    /// Bytes before the payload: fixed header, CSRCs and the whole extension block.
    public var headerLength: Int { payloadRange.lowerBound }
}
