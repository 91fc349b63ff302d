// Opus over RTP, RFC 7587: the payload is exactly one Opus packet (RFC 6716), the RTP clock
// is 48 kHz whatever rate the encoder runs at, and the marker bit is set on the first packet
// of a talkspurt (the first packet sent, and the first after packets were left out by DTX).

/// The rules of RFC 7587 and a reader of the Opus TOC byte (RFC 6716 §3.1) for durations.
public enum OpusPayload {
    /// The RTP clock rate of Opus, always.
    public static let clockRate = 48_000
    /// The longest packet duration Opus allows: 120 ms at 48 kHz.
    public static let maxSamples = 5_760

    /// Samples per channel at 48 kHz of one frame for each TOC configuration 0...31.
    private static func frameSamples(config: UInt8) -> Int {
        switch config {
        case 0...11: [480, 960, 1920, 2880][Int(config & 3)]   // SILK: 10, 20, 40, 60 ms
        case 12...15: [480, 960][Int(config & 1)]              // Hybrid: 10, 20 ms
        default: [120, 240, 480, 960][Int(config & 3)]         // CELT: 2.5, 5, 10, 20 ms
        }
    }

    /// The duration of an Opus packet in 48 kHz samples (what its RTP timestamp advances by);
    /// nil for bytes that are not an Opus packet (empty, a code-3 packet without its count
    /// byte or with 0 frames, more than 120 ms).
    public static func samples(inPacket packet: UnsafeRawBufferPointer) -> Int? {
        guard let toc = packet.first else { return nil }
        let perFrame = frameSamples(config: toc >> 3)
        let frames: Int
        switch toc & 0x03 {
        case 0: frames = 1
        case 1, 2: frames = 2
        default:
            guard packet.count >= 2 else { return nil }
            frames = Int(packet[1] & 0x3F)
        }
        let total = perFrame * frames
        guard frames > 0, total <= maxSamples else { return nil }
        return total
    }
}

/// Decides the marker bit of each Opus packet: set on the first packet and whenever the
/// timestamp is not the previous one plus its duration (packets were not sent: DTX).
public struct OpusMarkerTracker: Sendable {
    private var expected: UInt32?

    public init() {}

    /// The marker for a packet starting at RTP timestamp `timestamp` and lasting `samples`.
    public mutating func marker(timestamp: UInt32, samples: Int) -> Bool {
        let marker = expected != timestamp
        expected = timestamp &+ UInt32(truncatingIfNeeded: samples)
        return marker
    }
}
