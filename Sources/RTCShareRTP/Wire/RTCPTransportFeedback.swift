import RTCShareCore

// Transport-wide congestion control feedback (RTPFB, FMT 15,
// draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1): which packets of the transport-wide
// sequence arrived, and when, so the sender can see queues build up before they overflow.
//
//      0                   1                   2                   3
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |V=2|P|  FMT=15 |    PT=205     |           length              |
//     |                     SSRC of packet sender                     |
//     |                      SSRC of media source                     |
//     |      base sequence number     |      packet status count      |
//     |                 reference time                | fb pkt. count |
//     |          packet chunk         |         packet chunk          |
//     :                              ...                              :
//     |         packet chunk          |  recv delta   |  recv delta   |
//     :                              ...                              :
//     |           recv delta          |  recv delta   | zero padding  |
//
// Packet chunks (§3.1.3, §3.1.4), 16 bits each:
//     run length:    |0|S S|  run length (13 bits)  |   S repeated `run length` times
//     status vector: |1|0| 14 one-bit symbols |         0 not received, 1 small delta
//                    |1|1| 7 two-bit symbols  |
// Symbols: 00 not received, 01 received with a small delta (one unsigned byte), 10 received
// with a large or negative delta (two bytes, signed), 11 reserved. Deltas count 250 µs; the
// first is relative to the reference time (a signed 24-bit count of 64 ms), each next one to
// the packet before it.
//
// Parsing is strict and never traps: exactly `packet status count` statuses (the last chunk may
// cover more, the surplus is ignored), a reserved symbol or a status count of 0 is refused,
// every delta must lie inside the packet and at most 3 bytes (zero padding) may follow them.

/// The status of one packet in a transport-wide feedback.
public enum TransportPacketStatus: Equatable, Sendable {
    case notReceived
    /// Arrived; the delta to the previous arrival (or the reference time) in 250 µs ticks.
    case received(deltaTicks: Int32)

    fileprivate var symbol: UInt8 {
        switch self {
        case .notReceived: 0
        case .received(let d): (0...255).contains(d) ? 1 : 2
        }
    }
}

/// A whole transport-wide feedback packet, as the receiver writes it.
public struct RTCPTransportFeedback: RTCPWritable, Equatable, Sendable {
    public static let format: UInt8 = 15
    /// One receive-delta tick.
    public static let tickMicroseconds: Int64 = 250
    /// One reference-time unit.
    public static let referenceMicroseconds: Int64 = 64_000
    /// Largest run a run-length chunk holds.
    static let maxRun = 8191

    public var sender: UInt32
    public var media: UInt32
    public var baseSequence: UInt16
    /// Signed 24 bits, in multiples of 64 ms.
    public var referenceTime: Int32
    public var feedbackCount: UInt8
    /// One status per packet from `baseSequence` on (at least one, at most 65535).
    public var statuses: [TransportPacketStatus]

    public init(sender: UInt32, media: UInt32, baseSequence: UInt16, referenceTime: Int32, feedbackCount: UInt8,
                statuses: [TransportPacketStatus]) {
        self.sender = sender
        self.media = media
        self.baseSequence = baseSequence
        self.referenceTime = referenceTime
        self.feedbackCount = feedbackCount
        self.statuses = statuses
    }

    /// The chunks that carry the statuses, greedily: a run of 14 or more identical symbols is one
    /// run-length chunk; otherwise 14 one-bit symbols if none of them needs a large delta,
    /// else 7 two-bit symbols.
    private func forEachChunk(_ body: (UInt16) -> Void) {
        let n = statuses.count
        var i = 0
        while i < n {
            let s = statuses[i].symbol
            var run = 1
            while i + run < n, run < Self.maxRun, statuses[i + run].symbol == s { run += 1 }
            if run >= 14 || i + run == n {
                body(UInt16(s) << 13 | UInt16(run))
                i += run
                continue
            }
            let oneBit = statuses[i..<min(i + 14, n)].allSatisfy { $0.symbol < 2 }
            if oneBit {
                var chunk: UInt16 = 0x8000
                for k in 0..<14 where i + k < n && statuses[i + k].symbol == 1 { chunk |= 1 << (13 - k) }
                body(chunk)
                i += 14
            } else {
                var chunk: UInt16 = 0xC000
                for k in 0..<7 where i + k < n { chunk |= UInt16(statuses[i + k].symbol) << (12 - 2 * k) }
                body(chunk)
                i += 7
            }
        }
    }

    private var chunkCount: Int {
        var c = 0
        forEachChunk { _ in c += 1 }
        return c
    }

    private var deltaBytes: Int { statuses.reduce(0) { $0 + Int($1.symbol) } }

    public var size: Int { (20 + 2 * chunkCount + deltaBytes + 3) & ~3 }

    public func validate() throws(RTPError) {
        guard !statuses.isEmpty, statuses.count <= Int(UInt16.max) else {
            throw .malformed("transport-cc with \(statuses.count) statuses")
        }
        guard (-(1 << 23)...((1 << 23) - 1)).contains(referenceTime) else {
            throw .malformed("transport-cc reference time \(referenceTime) outside 24 bits")
        }
        for case .received(let d) in statuses where !(Int32(Int16.min)...Int32(Int16.max)).contains(d) {
            throw .malformed("transport-cc delta of \(d) ticks outside 16 bits")
        }
        guard size / 4 - 1 <= Int(UInt16.max) else { throw .malformed("transport-cc of \(size) bytes") }
    }

    public func unsafeWrite(_ w: inout RTCPWriter) {
        let total = size
        w.header(count: Int(Self.format), type: RTCPPacketType.transportFeedback, bytes: total)
        w.u32(sender)
        w.u32(media)
        w.u16(baseSequence)
        w.u16(UInt16(statuses.count))
        w.u8(UInt8(truncatingIfNeeded: referenceTime >> 16))
        w.u16(UInt16(truncatingIfNeeded: referenceTime))
        w.u8(feedbackCount)
        forEachChunk { w.u16($0) }
        var written = 20 + 2 * chunkCount
        for case .received(let d) in statuses {
            if (0...255).contains(d) {
                w.u8(UInt8(d))
                written += 1
            } else {
                w.u16(UInt16(bitPattern: Int16(d)))
                written += 2
            }
        }
        w.zeros(total - written)
    }

    /// Calls `body` with each packet a parsed feedback reports, in sequence order: its
    /// transport-wide sequence number and, if it arrived, its arrival time in microseconds on
    /// the receiver's clock (reference time included, so only differences mean anything).
    /// `bytes` is the datagram the header was parsed from. Throws for what `RTCPParser` would
    /// refuse (it validates with this same walk before it hands out the header).
    public static func forEachPacket(of header: RTCPTransportCCHeader, in bytes: UnsafeRawBufferPointer,
                                     _ body: (UInt16, Int64?) -> Void) throws(RTPError) {
        let info = header.packetInfo
        guard info.lowerBound >= 0, info.upperBound <= bytes.count else {
            throw .truncated("transport-cc packet info \(info) past \(bytes.count) bytes")
        }
        let r = RTPReader(UnsafeRawBufferPointer(rebasing: bytes[info]))
        let end = info.count
        let count = Int(header.statusCount)
        guard count > 0 else { throw .malformed("transport-cc with a status count of 0") }
        // First pass: the chunks, to find where the deltas start; statuses are read again below.
        var chunks = 0
        var covered = 0
        while covered < count {
            let chunk = try r.u16(at: 2 * chunks)
            chunks += 1
            covered += chunk & 0x8000 == 0 ? Int(chunk & 0x1FFF) : (chunk & 0x4000 == 0 ? 14 : 7)
            if chunk & 0x8000 == 0, chunk & 0x1FFF == 0 { throw .malformed("transport-cc run-length chunk of 0") }
        }
        var deltaAt = 2 * chunks
        var time = Int64(header.referenceTime) * referenceMicroseconds
        var sequence = header.baseSequence
        var done = 0
        for c in 0..<chunks {
            let chunk = try r.u16(at: 2 * c)
            let symbols: Int, width: Int
            if chunk & 0x8000 == 0 {
                (symbols, width) = (Int(chunk & 0x1FFF), 0)
            } else {
                (symbols, width) = chunk & 0x4000 == 0 ? (14, 1) : (7, 2)
            }
            for k in 0..<min(symbols, count - done) {
                let symbol: UInt16
                switch width {
                case 0: symbol = (chunk >> 13) & 0x3
                case 1: symbol = (chunk >> UInt16(13 - k)) & 0x1
                default: symbol = (chunk >> UInt16(12 - 2 * k)) & 0x3
                }
                switch symbol {
                case 0:
                    body(sequence, nil)
                case 1:
                    time += Int64(try r.u8(at: deltaAt)) * tickMicroseconds
                    deltaAt += 1
                    body(sequence, time)
                case 2:
                    time += Int64(Int16(bitPattern: try r.u16(at: deltaAt))) * tickMicroseconds
                    deltaAt += 2
                    body(sequence, time)
                default:
                    throw .malformed("transport-cc reserved status symbol for packet \(sequence)")
                }
                sequence &+= 1
                done += 1
            }
        }
        guard end - deltaAt < 4 else { throw .malformed("transport-cc has \(end - deltaAt) bytes after its deltas") }
    }
}
