import RTCShareCore

// Per-stream send state (RFC 3550 §5.1, §6.4.1): the SSRC, the sequence number, the mapping
// from the capture clock to the RTP clock, and the counters a sender report needs. Sans-IO:
// capture times come in as microseconds, packets go out into the caller's buffers.
//
// Invariants: the SSRC, the first sequence number and the timestamp offset are random
// (RFC 3550 §5.1) unless a test fixes them; the sequence number advances by one per packet
// built, mod 2^16; the RTP timestamp is `offset + capture time x clockRate / 10^6` mod 2^32,
// so it follows the capture clock and not the send time; the counters wrap mod 2^32 as the
// SR fields do.

/// The send side of one RTP stream (one SSRC).
public struct RTPStream: Sendable {
    public let ssrc: UInt32
    public let payloadType: UInt8
    /// Ticks per second of the RTP clock: 90000 for video, 48000 for Opus.
    public let clockRate: Int
    /// Added to every RTP timestamp.
    public let timestampOffset: UInt32
    /// The sequence number the next packet gets.
    public private(set) var nextSequenceNumber: UInt16
    /// Packets built so far (SR sender's packet count, mod 2^32).
    public private(set) var packetCount: UInt32 = 0
    /// Payload octets built so far, without headers or padding (SR sender's octet count).
    public private(set) var octetCount: UInt32 = 0
    /// RTP timestamp of the last packet built. (A sender report's RTP time for "now" comes
    /// from `timestamp(captureMicroseconds:)` with the current time, the same mapping.)
    public private(set) var lastTimestamp: UInt32?

    /// Fixed start values (tests, or an SSRC the signalling chose).
    public init(ssrc: UInt32, payloadType: UInt8, clockRate: Int, initialSequenceNumber: UInt16,
                timestampOffset: UInt32) {
        precondition(payloadType < 128, "RTP payload type must be 0...127")
        precondition(clockRate > 0 && clockRate <= 1 << 32, "RTP clock rate must be in 1...2^32")
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.clockRate = clockRate
        self.nextSequenceNumber = initialSequenceNumber
        self.timestampOffset = timestampOffset
    }

    /// Random SSRC, first sequence number and timestamp offset from `rng`.
    public init(payloadType: UInt8, clockRate: Int, using rng: inout some RandomNumberGenerator) {
        self.init(ssrc: UInt32.random(in: 1...UInt32.max, using: &rng), payloadType: payloadType,
                  clockRate: clockRate, initialSequenceNumber: UInt16.random(in: 0...UInt16.max, using: &rng),
                  timestampOffset: UInt32.random(in: 0...UInt32.max, using: &rng))
    }

    /// Random start values from the system generator.
    public init(payloadType: UInt8, clockRate: Int) {
        var rng = SystemRandomNumberGenerator()
        self.init(payloadType: payloadType, clockRate: clockRate, using: &rng)
    }

    /// The RTP timestamp of something captured at `captureMicroseconds` (any epoch, may be
    /// negative), rounded down to a tick, mod 2^32. Exact for the whole Int64 range.
    public func timestamp(captureMicroseconds t: Int64) -> UInt32 {
        // Split into whole seconds and the rest, so the product never overflows.
        var seconds = t / 1_000_000
        var rest = t % 1_000_000
        if rest < 0 {
            rest += 1_000_000
            seconds -= 1
        }
        let ticks = UInt64(bitPattern: seconds) &* UInt64(clockRate)
            &+ UInt64(rest * Int64(clockRate) / 1_000_000)
        return timestampOffset &+ UInt32(truncatingIfNeeded: ticks)
    }

    /// Bytes of the header and extension block `writeHeader` produces.
    public func headerSize(extensions: RTPExtensionValues, map: RTPExtensionMap) -> Int {
        RTPHeader.fixedSize + extensions.size(map: map)
    }

    /// Writes the RTP header (and the extension block, if any element is present and mapped)
    /// of the next packet at the start of `buffer`, for a payload of `payloadSize` bytes that
    /// the caller writes right after it; takes a sequence number and counts the packet.
    /// Returns the header size (where the payload goes). `timestamp` is normally
    /// `timestamp(captureMicroseconds:)` of the frame; an audio sender may instead count
    /// samples from one such value, so packets follow each other exactly.
    public mutating func writeHeader(into buffer: UnsafeMutableRawBufferPointer, timestamp ts: UInt32,
                                     marker: Bool, extensions: RTPExtensionValues = RTPExtensionValues(),
                                     map: RTPExtensionMap = .none, payloadSize: Int) throws(RTPError) -> Int {
        let extSize = extensions.size(map: map)
        let headerSize = RTPHeader.fixedSize + extSize
        guard payloadSize >= 0 else { throw .malformed("payload size \(payloadSize)") }
        guard buffer.count >= headerSize + payloadSize else {
            throw .bufferTooSmall(needed: headerSize + payloadSize, available: buffer.count)
        }
        let header = RTPHeader(marker: marker, payloadType: payloadType, sequenceNumber: nextSequenceNumber,
                               timestamp: ts, ssrc: ssrc, hasExtension: extSize > 0)
        _ = try header.write(into: buffer)
        if extSize > 0 {
            _ = try extensions.write(into: UnsafeMutableRawBufferPointer(rebasing: buffer[RTPHeader.fixedSize...]),
                                     map: map)
        }
        nextSequenceNumber &+= 1
        packetCount &+= 1
        octetCount &+= UInt32(truncatingIfNeeded: payloadSize)
        lastTimestamp = ts
        return headerSize
    }

    /// Writes a whole packet (header, extensions, a copy of `payload`) at the start of
    /// `buffer`; returns its size. For payloads that exist already (an Opus packet).
    public mutating func writePacket(into buffer: UnsafeMutableRawBufferPointer, timestamp: UInt32,
                                     marker: Bool, extensions: RTPExtensionValues = RTPExtensionValues(),
                                     map: RTPExtensionMap = .none,
                                     payload: UnsafeRawBufferPointer) throws(RTPError) -> Int {
        let h = try writeHeader(into: buffer, timestamp: timestamp, marker: marker,
                                extensions: extensions, map: map, payloadSize: payload.count)
        var w = RTPWriter(buffer, at: h)
        w.bytes(payload)
        return try w.finish()
    }
}
