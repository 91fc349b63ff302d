/// What the video encoder may still spend: a leaky bucket of the bits it coded, drained at the
/// rate it is asked for (the frame dropper of libwebrtc's media optimisation, simplified). A
/// frame the encoder would code while it is more than `aheadMicroseconds` of its ask ahead is
/// skipped before it reaches the encoder — unless the picture has gone too long without one
/// (`ScreenFrameRate.mayDrop`) or a keyframe is due. The share skips frames for it only while
/// the path holds the rate down (`SendBitrateController.pathHoldsTarget`: the delay-based
/// estimate, or a REMB with the receiver reports showing a queue or loss), not under a bare REMB
/// or loss-based target, which may merely follow what the sender happened to send.
///
/// Why not only libvpx's own dropping: its buffer is a second of the target and drops only
/// below 30 % of its 600 ms optimum, so it lets the encoder spend ~0.8 s of the target ahead —
/// and after a cut, or when frames cannot get smaller (busy 720p at the coarsest quantizer is
/// 7–29 KB a frame), it keeps spending the old rate for that long. Through the 1 Mbit/s path
/// (`bench/run-network.sh bottleneck1m`) the encoder put out 0.9–1.15 Mbit/s for a second
/// against an ask of 480–790 and filled the 250 ms queue; a 200 ms lead keeps such a burst
/// under the 150 ms of queueing the share is allowed. The frames it skips do not make the next
/// one bigger: after a skip the encoder sizes the next for the frame rate in force, not for the
/// time since the last it coded (`VP8Encoder.noteSkipped`); before, the two settled together at
/// one frame a lead (~5 fps) whatever the content.
///
/// Invariants: the debt never goes below zero (an idle encoder banks nothing: a quiet screen
/// must not buy a burst) nor above `maximumDebtMicroseconds` of the ask (a frame coded against
/// the budget, or a keyframe, is paid back, not owed for ever). Sans-IO: times passed in (µs),
/// no allocation.
public struct FrameBudget: Sendable, Equatable {
    /// How far ahead of its ask the encoder may be before frames are skipped.
    public static let aheadMicroseconds: Int64 = 200_000
    /// The most the encoder can owe, in time of its ask.
    public static let maximumDebtMicroseconds: Int64 = 1_000_000

    /// Bits coded and not yet paid for at the ask.
    public private(set) var debtBits = 0.0
    private var updatedAt: Int64?

    public init() {}

    private mutating func leak(to now: Int64, askKbps: Int) {
        if let last = updatedAt, now > last {
            debtBits = max(0, debtBits - Double(max(askKbps, 1)) * Double(now - last) / 1000)
        }
        updatedAt = max(updatedAt ?? now, now)
    }

    /// Whether a frame may be coded at `now` with the encoder asked for `askKbps`.
    public mutating func allows(at now: Int64, askKbps: Int) -> Bool {
        leak(to: now, askKbps: askKbps)
        return debtBits <= Double(max(askKbps, 1)) * Double(Self.aheadMicroseconds) / 1000
    }

    /// The encoder coded a frame of `bytes` at `now`. A keyframe is charged only up to the lead
    /// (never past it): it repairs a picture the receiver lost, and skipping the frames after
    /// it would freeze the picture it just repaired (its size is capped at the encoder instead).
    public mutating func coded(bytes: Int, isKeyframe: Bool = false, at now: Int64, askKbps: Int) {
        leak(to: now, askKbps: askKbps)
        let ask = Double(max(askKbps, 1))
        var next = debtBits + Double(max(bytes, 0) * 8)
        if isKeyframe { next = max(debtBits, min(next, ask * Double(Self.aheadMicroseconds) / 1000)) }
        debtBits = min(next, ask * Double(Self.maximumDebtMicroseconds) / 1000)
    }
}
