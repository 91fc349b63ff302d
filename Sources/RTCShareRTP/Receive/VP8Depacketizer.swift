import RTCShareCore

// Reassembles VP8 frames (RFC 7741) from RTP packets that arrive in order (after any
// jitter buffer), into one caller-provided frame buffer.
//
// Invariants:
// - A frame starts with a packet whose descriptor has S = 1 and PID = 0, and whose VP8 data
//   is not empty (its first byte's P bit, 0 for a keyframe, is read there: RFC 7741 §4.3).
// - Packets of a frame share a timestamp and have consecutive sequence numbers (mod 2^16);
//   the frame ends with the packet carrying the RTP marker bit.
// - A frame with any packet missing (a sequence gap, no start, no marker before the next
//   frame) is never handed out: it is reported once as dropped, and the packets left of it
//   are ignored until the next frame starts.
// - The frame's bytes are written at the start of the buffer passed to `push`; the caller
//   passes the same buffer for every packet and reads a frame when `push` returns it.

/// Why a frame was given up.
public enum VP8DropReason: Equatable, Sendable {
    /// A sequence number is missing inside the frame.
    case missingPacket
    /// Packets arrived for a frame whose first packet was not seen.
    case missingStart
    /// The next frame started before this one's marker packet arrived.
    case missingEnd
    /// The frame does not fit the frame buffer.
    case tooLarge
    /// A packet of it could not be parsed.
    case malformed(RTPError)
}

/// A complete frame, written at the start of the frame buffer.
public struct VP8AssembledFrame: Equatable, Sendable {
    public var byteCount: Int
    public var timestamp: UInt32
    /// The VP8 payload header's P bit was 0.
    public var isKeyframe: Bool
    /// From the first packet's descriptor, if it had one.
    public var pictureID: UInt16?
    public var firstSequenceNumber: UInt16
    public var lastSequenceNumber: UInt16
}

/// What one packet did: at most one completed frame and at most one report of a frame given
/// up (possibly an earlier one: a lost marker is only noticed when the next frame begins).
public struct VP8DepacketizerOutput: Equatable, Sendable {
    public var frame: VP8AssembledFrame?
    public var dropped: VP8DropReason?

    public init(frame: VP8AssembledFrame? = nil, dropped: VP8DropReason? = nil) {
        self.frame = frame
        self.dropped = dropped
    }
}

/// The reassembly state machine.
public struct VP8Depacketizer: Sendable {
    private struct Assembly: Sendable {
        var timestamp: UInt32
        var nextSequence: UInt16
        var firstSequence: UInt16
        var bytes: Int
        var isKeyframe: Bool
        var pictureID: UInt16?
    }

    private enum State: Sendable {
        case idle
        case assembling(Assembly)
        /// Ignoring the rest of the frame with this timestamp (already reported).
        case discarding(UInt32)
    }

    private var state = State.idle
    /// Frames handed out.
    public private(set) var framesCompleted: UInt64 = 0
    /// Frames given up (each counted once, including any `push` reported only one of).
    public private(set) var framesDropped: UInt64 = 0

    public init() {}

    /// Feeds one whole RTP packet (already SRTP-unprotected). A packet that is not RTP gives
    /// `.malformed` and abandons the frame in progress.
    public mutating func push(packet: UnsafeRawBufferPointer,
                              into frameBuffer: UnsafeMutableRawBufferPointer) -> VP8DepacketizerOutput {
        let parsed: RTPParsedPacket
        do {
            parsed = try RTPHeader.parse(packet)
        } catch {
            return abandonAll(.malformed(error))
        }
        return push(sequenceNumber: parsed.header.sequenceNumber, timestamp: parsed.header.timestamp,
                    marker: parsed.header.marker,
                    payload: UnsafeRawBufferPointer(rebasing: packet[parsed.payloadRange]), into: frameBuffer)
    }

    /// Feeds one packet given as its header fields and VP8 payload (descriptor included).
    public mutating func push(sequenceNumber seq: UInt16, timestamp: UInt32, marker: Bool,
                              payload: UnsafeRawBufferPointer,
                              into frameBuffer: UnsafeMutableRawBufferPointer) -> VP8DepacketizerOutput {
        var out = VP8DepacketizerOutput()
        let descriptor: VP8PayloadDescriptor
        let descriptorSize: Int
        do {
            (descriptor, descriptorSize) = try VP8PayloadDescriptor.parse(payload)
        } catch {
            return abandonAll(.malformed(error), discardingTimestamp: timestamp)
        }
        let data = UnsafeRawBufferPointer(rebasing: payload[descriptorSize...])
        let isStart = descriptor.startOfPartition && descriptor.partitionIndex == 0

        var assembly: Assembly
        switch state {
        case .assembling(let a):
            if a.timestamp != timestamp || isStart {
                // The frame in progress never got its marker packet.
                drop(&out, seq == a.nextSequence ? .missingEnd : .missingPacket)
                state = .idle
                guard let fresh = begin(&out, isStart: isStart, seq: seq, timestamp: timestamp,
                                        data: data, descriptor: descriptor) else { return out }
                assembly = fresh
            } else if seq != a.nextSequence {
                drop(&out, .missingPacket)
                state = .discarding(timestamp)
                return out
            } else {
                assembly = a
            }
        case .discarding(let t):
            if t == timestamp && !isStart { return out }
            state = .idle
            guard let fresh = begin(&out, isStart: isStart, seq: seq, timestamp: timestamp,
                                    data: data, descriptor: descriptor) else { return out }
            assembly = fresh
        case .idle:
            guard let fresh = begin(&out, isStart: isStart, seq: seq, timestamp: timestamp,
                                    data: data, descriptor: descriptor) else { return out }
            assembly = fresh
        }

        var w = RTPWriter(frameBuffer, at: assembly.bytes)
        w.bytes(data)
        guard w.fits else {
            drop(&out, .tooLarge)
            state = .discarding(timestamp)
            return out
        }
        assembly.bytes += data.count
        assembly.nextSequence = seq &+ 1
        if marker {
            out.frame = VP8AssembledFrame(byteCount: assembly.bytes, timestamp: timestamp,
                                          isKeyframe: assembly.isKeyframe, pictureID: assembly.pictureID,
                                          firstSequenceNumber: assembly.firstSequence, lastSequenceNumber: seq)
            framesCompleted += 1
            state = .idle
        } else {
            state = .assembling(assembly)
        }
        return out
    }

    /// Starts a frame at this packet, or reports and discards it if it cannot start one.
    private mutating func begin(_ out: inout VP8DepacketizerOutput, isStart: Bool, seq: UInt16, timestamp: UInt32,
                                data: UnsafeRawBufferPointer, descriptor: VP8PayloadDescriptor) -> Assembly? {
        guard isStart else {
            drop(&out, .missingStart)
            state = .discarding(timestamp)
            return nil
        }
        guard let first = data.first else {
            drop(&out, .malformed(.truncated("VP8 frame start without a payload header")))
            state = .discarding(timestamp)
            return nil
        }
        return Assembly(timestamp: timestamp, nextSequence: seq, firstSequence: seq, bytes: 0,
                        isKeyframe: first & 0x01 == 0, pictureID: descriptor.pictureID)
    }

    private mutating func drop(_ out: inout VP8DepacketizerOutput, _ reason: VP8DropReason) {
        framesDropped += 1
        if out.dropped == nil { out.dropped = reason }
    }

    private mutating func abandonAll(_ reason: VP8DropReason, discardingTimestamp: UInt32? = nil) -> VP8DepacketizerOutput {
        var out = VP8DepacketizerOutput()
        switch state {
        case .assembling(let a):
            drop(&out, reason)
            state = .discarding(discardingTimestamp ?? a.timestamp)
        case .discarding(let t):
            if let ts = discardingTimestamp, ts != t {
                drop(&out, reason)
                state = .discarding(ts)
            } else {
                out.dropped = reason
            }
        case .idle:
            // A packet that starts nothing: a frame (its timestamp's) is lost only if it had
            // a timestamp; bytes that are not RTP at all are reported but are no frame.
            if let ts = discardingTimestamp {
                drop(&out, reason)
                state = .discarding(ts)
            } else {
                out.dropped = reason
            }
        }
        return out
    }
}
