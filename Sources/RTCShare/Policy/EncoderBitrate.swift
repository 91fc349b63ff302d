/// The bitrate the video encoder is asked for, from the network target. The target is a rate
/// for everything the share puts on the wire (the estimates measure all of it); the encoder
/// makes only part of it:
///
/// - Overhead: what the transport sends beyond the encoder's bytes — RTP/SRTP headers, audio,
///   resends, RTCP — measured each second as the bytes sent minus the bytes encoded, smoothed
///   (half and half), comes off the target.
/// - Never less than half the target: a second of many resends must not starve the picture.
///
/// Only the encoder is asked for less: the target itself (the pacer, the estimates) is the
/// network's and stays as it is — lowering the estimates by the overhead would lower what is
/// sent, then what is acknowledged, then the estimates again. Not divided by a measured encoder
/// overshoot either: libvpx's output comes in bursts (dropped frames, then large ones), a ratio
/// of one second's output to the ask swings, and asking for less made it drop more frames.
/// Sans-IO: the session hands in one second's figures; no clock.
public struct EncoderBitrate: Sendable, Equatable {
    /// What the transport adds to the encoder's output (kbit/s, smoothed).
    public private(set) var overheadKbps = 0.0

    public init() {}

    /// One second's figures: what the encoder made (`encodedKbps`) and what went on the wire for
    /// the share (`sentKbps`, all streams; nil without a network output).
    public mutating func second(encodedKbps: Int, sentKbps: Int?) {
        guard let sentKbps else { return }
        overheadKbps = (overheadKbps + Double(max(sentKbps - encodedKbps, 0))) / 2
    }

    /// The encoder's ask for a network target of `targetKbps`.
    public func askKbps(target targetKbps: Int) -> Int {
        max(Int(Double(targetKbps) - overheadKbps), max(targetKbps / 2, 1))
    }
}
