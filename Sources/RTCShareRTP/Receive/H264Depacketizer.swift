import RTCShareCore

// Reassembles H.264 access units (RFC 6184, packetization-mode 1: single NAL unit packets,
// STAP-A, FU-A) from RTP packets that arrive in order (after any jitter buffer), into one
// caller-provided buffer, in Annex B form (each NAL unit behind 00 00 00 01): what a decoder
// such as `H264Decoder` takes.
//
// Invariants:
// - An access unit starts with a packet whose first NAL unit begins a picture: a non-VCL unit
//   (SPS, PPS, SEI, access unit delimiter) or a slice with first_mb_in_slice = 0 (the slice
//   header's first bit is 1), whole or as the first FU-A fragment. H.264 has no start bit in
//   the payload format, so this is how a lost first packet is told apart.
// - Packets of an access unit share a timestamp and have consecutive sequence numbers
//   (mod 2^16); it ends with the packet carrying the RTP marker bit.
// - FU-A fragments of one NAL unit follow each other without another packet between them,
//   from one with S = 1 to one with E = 1.
// - An access unit with any packet missing, or any payload that is not well-formed, is never
//   handed out: it is reported once as dropped, and its remaining packets are ignored until
//   the next access unit starts. Every length read from a payload is checked against the
//   payload before use; nothing traps on input.

/// Why an access unit was given up.
public enum H264DropReason: Equatable, Sendable {
    /// A sequence number is missing inside the access unit.
    case missingPacket
    /// Packets arrived for an access unit whose first packet was not seen.
    case missingStart
    /// The next access unit started before this one's marker packet arrived.
    case missingEnd
    /// The access unit does not fit the buffer.
    case tooLarge
    /// A packet of it is not a well-formed mode-1 payload.
    case malformed(RTPError)
}

/// A complete access unit, written at the start of the buffer in Annex B form.
public struct H264AssembledFrame: Equatable, Sendable {
    public var byteCount: Int
    public var timestamp: UInt32
    /// It holds an IDR slice: decoding can start here.
    public var isIDR: Bool
    /// It carries both an SPS and a PPS.
    public var hasParameterSets: Bool
    public var firstSequenceNumber: UInt16
    public var lastSequenceNumber: UInt16
}

/// What one packet did: at most one completed access unit and at most one report of one given up.
public struct H264DepacketizerOutput: Equatable, Sendable {
    public var frame: H264AssembledFrame?
    public var dropped: H264DropReason?

    public init(frame: H264AssembledFrame? = nil, dropped: H264DropReason? = nil) {
        self.frame = frame
        self.dropped = dropped
    }
}

/// The reassembly state machine.
public struct H264Depacketizer: Sendable {
    /// The Annex B start code written before each NAL unit.
    public static let startCode: [UInt8] = [0, 0, 0, 1]

    private struct Assembly: Sendable {
        var timestamp: UInt32
        var nextSequence: UInt16
        var firstSequence: UInt16
        var bytes = 0
        var isIDR = false
        var sawSPS = false
        var sawPPS = false
        /// Inside a fragmented NAL unit (an FU-A with S seen, E not yet).
        var inFragment = false
        /// The type of that NAL unit, which every fragment must repeat.
        var fragmentType: UInt8 = 0
    }

    private enum State: Sendable {
        case idle
        case assembling(Assembly)
        /// Ignoring the rest of the access unit with this timestamp (already reported).
        case discarding(UInt32)
    }

    private var state = State.idle
    public private(set) var framesCompleted: UInt64 = 0
    public private(set) var framesDropped: UInt64 = 0

    public init() {}

    /// Feeds one whole RTP packet (already SRTP-unprotected).
    public mutating func push(packet: UnsafeRawBufferPointer,
                              into buffer: UnsafeMutableRawBufferPointer) -> H264DepacketizerOutput {
        let parsed: RTPParsedPacket
        do {
            parsed = try RTPHeader.parse(packet)
        } catch {
            return abandon(.malformed(error), timestamp: nil)
        }
        return push(sequenceNumber: parsed.header.sequenceNumber, timestamp: parsed.header.timestamp,
                    marker: parsed.header.marker,
                    payload: UnsafeRawBufferPointer(rebasing: packet[parsed.payloadRange]), into: buffer)
    }

    /// Feeds one packet given as its header fields and RFC 6184 payload.
    public mutating func push(sequenceNumber seq: UInt16, timestamp: UInt32, marker: Bool,
                              payload: UnsafeRawBufferPointer,
                              into buffer: UnsafeMutableRawBufferPointer) -> H264DepacketizerOutput {
        var out = H264DepacketizerOutput()
        let isStart: Bool
        do {
            isStart = try Self.startsAccessUnit(payload)
        } catch {
            return abandon(.malformed(error), timestamp: timestamp)
        }

        var assembly: Assembly
        switch state {
        case .assembling(let a):
            if a.timestamp != timestamp {
                drop(&out, seq == a.nextSequence ? .missingEnd : .missingPacket)
                guard let fresh = begin(&out, isStart: isStart, seq: seq, timestamp: timestamp) else { return out }
                assembly = fresh
            } else if seq != a.nextSequence {
                drop(&out, .missingPacket)
                state = .discarding(timestamp)
                return out
            } else {
                assembly = a
            }
        case .discarding(let t):
            if t == timestamp { return out }
            guard let fresh = begin(&out, isStart: isStart, seq: seq, timestamp: timestamp) else { return out }
            assembly = fresh
        case .idle:
            guard let fresh = begin(&out, isStart: isStart, seq: seq, timestamp: timestamp) else { return out }
            assembly = fresh
        }

        do {
            try append(payload, to: &assembly, buffer: buffer)
        } catch {
            drop(&out, error.reason)
            state = .discarding(timestamp)
            return out
        }
        assembly.nextSequence = seq &+ 1
        guard marker else {
            state = .assembling(assembly)
            return out
        }
        state = .idle
        guard !assembly.inFragment else {
            drop(&out, .malformed(.malformed("H.264 access unit ends inside an FU-A")))
            return out
        }
        out.frame = H264AssembledFrame(byteCount: assembly.bytes, timestamp: timestamp, isIDR: assembly.isIDR,
                                       hasParameterSets: assembly.sawSPS && assembly.sawPPS,
                                       firstSequenceNumber: assembly.firstSequence, lastSequenceNumber: seq)
        framesCompleted += 1
        return out
    }

    private mutating func begin(_ out: inout H264DepacketizerOutput, isStart: Bool, seq: UInt16,
                                timestamp: UInt32) -> Assembly? {
        guard isStart else {
            drop(&out, .missingStart)
            state = .discarding(timestamp)
            return nil
        }
        return Assembly(timestamp: timestamp, nextSequence: seq, firstSequence: seq)
    }

    private mutating func drop(_ out: inout H264DepacketizerOutput, _ reason: H264DropReason) {
        framesDropped += 1
        if out.dropped == nil { out.dropped = reason }
    }

    private mutating func abandon(_ reason: H264DropReason, timestamp: UInt32?) -> H264DepacketizerOutput {
        var out = H264DepacketizerOutput()
        switch state {
        case .assembling(let a):
            drop(&out, reason)
            state = .discarding(timestamp ?? a.timestamp)
        case .discarding(let t):
            if let timestamp, timestamp != t {
                drop(&out, reason)
                state = .discarding(timestamp)
            } else {
                out.dropped = reason
            }
        case .idle:
            if let timestamp {
                drop(&out, reason)
                state = .discarding(timestamp)
            } else {
                out.dropped = reason
            }
        }
        return out
    }

    // MARK: payloads

    private struct H264AppendError: ByteReaderFailure {
        let reason: H264DropReason

        init(reason: H264DropReason) { self.reason = reason }

        static func readPastEnd(offset: Int, needed: Int, available: Int) -> H264AppendError {
            H264AppendError(reason: .malformed(.readPastEnd(offset: offset, needed: needed, available: available)))
        }
    }

    /// Whether the payload's first NAL unit begins a picture (see the invariants). Throws for
    /// a payload too short to say, or a type mode 1 does not use.
    static func startsAccessUnit(_ payload: UnsafeRawBufferPointer) throws(RTPError) -> Bool {
        guard let first = payload.first else { throw .truncated("empty H.264 payload") }
        guard first & 0x80 == 0 else { throw .malformed("H.264 NAL unit with the forbidden bit set") }
        switch H264NALType.of(first) {
        case H264NALType.stapA:
            // size (2), then the first unit's header and (for a slice) its first slice byte.
            guard payload.count >= 4 else { throw .truncated("STAP-A without a whole first unit") }
            var r = RTPReader(payload)
            try r.skip(1)
            let size = Int(try r.u16())
            guard size >= 1, 3 + size <= payload.count else { throw .truncated("STAP-A unit size past the payload") }
            return beginsPicture(header: payload[3], next: size >= 2 ? payload[4] : nil)
        case H264NALType.fuA:
            guard payload.count >= 3 else { throw .truncated("FU-A without data") }
            let fu = payload[1]
            guard fu & 0x80 != 0 else { return false }
            return beginsPicture(header: fu & 0x1F, next: payload[2])
        case 1...23:
            return beginsPicture(header: first, next: payload.count >= 2 ? payload[1] : nil)
        default:
            throw .malformed("H.264 payload type \(H264NALType.of(first)) is not used in packetization-mode 1")
        }
    }

    /// A non-VCL unit opens a picture; a slice does when its first_mb_in_slice is 0 (ue(v)
    /// codes 0 as a single 1 bit).
    private static func beginsPicture(header: UInt8, next: UInt8?) -> Bool {
        switch H264NALType.of(header) {
        case 1...5:
            guard let next else { return false }
            return next & 0x80 != 0
        default:
            return true
        }
    }

    /// Writes the payload's NAL units (or fragment) after what the assembly holds.
    private func append(_ payload: UnsafeRawBufferPointer, to a: inout Assembly,
                        buffer: UnsafeMutableRawBufferPointer) throws(H264AppendError) {
        func fail(_ error: RTPError) -> H264AppendError { H264AppendError(reason: .malformed(error)) }
        let first = payload[0]  // startsAccessUnit checked the payload is not empty
        let type = H264NALType.of(first)
        if a.inFragment && type != H264NALType.fuA {
            throw fail(.malformed("an FU-A was interrupted by another packet"))
        }
        switch type {
        case H264NALType.stapA:
            var r = ByteReader<H264AppendError>(payload)
            try r.skip(1)
            var units = 0
            while !r.isAtEnd {
                guard r.remaining >= 2 else { throw fail(.truncated("STAP-A size field cut short")) }
                let size = Int(try r.u16())
                guard size >= 1, size <= r.remaining else { throw fail(.truncated("STAP-A unit size past the payload")) }
                try write(unit: try r.bytes(size), into: &a, buffer)
                units += 1
            }
            guard units > 0 else { throw fail(.truncated("STAP-A with no unit")) }
        case H264NALType.fuA:
            guard payload.count >= 3 else { throw fail(.truncated("FU-A without data")) }
            let fu = payload[1]
            let isStart = fu & 0x80 != 0, isEnd = fu & 0x40 != 0
            let unitType = fu & 0x1F
            guard !(isStart && isEnd) else { throw fail(.malformed("FU-A with both S and E set")) }
            guard (1...23).contains(unitType) else { throw fail(.malformed("FU-A of NAL unit type \(unitType)")) }
            let data = UnsafeRawBufferPointer(rebasing: payload[2...])
            if isStart {
                guard !a.inFragment else { throw fail(.malformed("FU-A start inside another FU-A")) }
                var w = RTPWriter(buffer, at: a.bytes)
                for b in Self.startCode { w.u8(b) }
                w.u8(first & 0xE0 | unitType)
                w.bytes(data)
                guard w.fits else { throw H264AppendError(reason: .tooLarge) }
                a.bytes = w.offset
                a.inFragment = true
                a.fragmentType = unitType
                note(unitType, &a)
            } else {
                guard a.inFragment else { throw fail(.malformed("FU-A continuation without its start")) }
                guard unitType == a.fragmentType else { throw fail(.malformed("FU-A fragments of different units")) }
                var w = RTPWriter(buffer, at: a.bytes)
                w.bytes(data)
                guard w.fits else { throw H264AppendError(reason: .tooLarge) }
                a.bytes = w.offset
                if isEnd { a.inFragment = false }
            }
        case 1...23:
            try write(unit: payload, into: &a, buffer)
        default:
            throw fail(.malformed("H.264 payload type \(type) is not used in packetization-mode 1"))
        }
    }

    /// Writes one whole NAL unit behind a start code.
    private func write(unit: UnsafeRawBufferPointer, into a: inout Assembly,
                       _ buffer: UnsafeMutableRawBufferPointer) throws(H264AppendError) {
        let header = unit[0]
        guard header & 0x80 == 0 else {
            throw H264AppendError(reason: .malformed(.malformed("H.264 NAL unit with the forbidden bit set")))
        }
        guard (1...23).contains(H264NALType.of(header)) else {
            throw H264AppendError(reason: .malformed(.malformed("aggregated NAL unit of type \(H264NALType.of(header))")))
        }
        var w = RTPWriter(buffer, at: a.bytes)
        for b in Self.startCode { w.u8(b) }
        w.bytes(unit)
        guard w.fits else { throw H264AppendError(reason: .tooLarge) }
        a.bytes = w.offset
        note(H264NALType.of(header), &a)
    }

    private func note(_ type: UInt8, _ a: inout Assembly) {
        switch type {
        case H264NALType.idrSlice: a.isIDR = true
        case H264NALType.sps: a.sawSPS = true
        case H264NALType.pps: a.sawPPS = true
        default: break
        }
    }
}
