import RTCShareCore

/// What a transport asks of the pipeline after reading feedback and running its timers: one
/// struct from the send core (`RTPSender.takeRequests`) up through a WebRTC connection and a
/// share's outputs (`MediaSink.service`) to the pipeline's policy, which acts on each field.
public struct TransportRequests: Sendable, Equatable {
    /// A receiver lost the picture (PLI, FIR, or a NACK for a packet no longer held).
    public var keyframe = false
    /// Of those, the receiver asked itself (PLI or FIR): it is one that asks when it must.
    public var keyframeAsked = false
    /// A ceiling on the video bitrate from the receiver (REMB); nil: none came.
    public var bitrateCeilingKbps: Int?
    /// The fraction lost (lost / 256) of the newest receiver report for the video stream; nil:
    /// none came. The transport's rate control (`SendBitrateController`) turns it into the target.
    public var videoFractionLost: UInt8?
    /// The same for the audio stream (the Opus encoder's in-band FEC follows it).
    public var audioFractionLost: UInt8?
    /// The receiver said goodbye (RTCP BYE).
    public var peerLeft = false
    /// Media just started to flow to a receiver that has seen nothing (keys arrived, a
    /// connection came up): the next frame must be a keyframe, whatever the rate limit says.
    public var mediaStarted = false
    /// With `mediaStarted`: no transport-wide feedback was negotiated, so the sender has no
    /// delay signal of its own on this path (REMB and receiver reports only).
    public var withoutTransportFeedback = false
    /// With `mediaStarted`: the path's round trip measured before media (ICE checks), if known.
    public var pathRoundTripMicroseconds: Int64?
    /// The receiver's RTCP stopped arriving, or came back (`FeedbackWatch`).
    public var feedback: FeedbackChange?
    /// Feedback came back after an outage of this long (`FeedbackReturnWatch`); `keyframe` is
    /// set with it.
    public var feedbackReturnedAfterMilliseconds: Int64?
    /// The delay-based estimate from the newest transport-wide feedback (kbit/s); nil: none came.
    public var delayBasedKbps: Int?
    /// The one target the transport's rate control makes of every estimate (delay-based, REMB,
    /// loss) under the maximum; it paces by it. nil: the transport has no rate control (a file,
    /// a receiving end, or no maximum set yet).
    public var targetKbps: Int?
    /// The maximum the target is under (with `targetKbps`).
    public var maximumKbps: Int?
    /// With `targetKbps`: the path holds the target down (the delay-based estimate binds, or a
    /// REMB with a queue or loss showing: `SendBitrateController.pathHoldsTarget`).
    public var pathHoldsTarget = false
    /// With `mediaStarted`: the path gives no delay signal of the sender's own, so the target
    /// starts below the maximum and grows with clean reports.
    public var startedBelowMaximum = false
    /// When the transport next wants to be serviced (reports, retransmission timers, the
    /// pacer's next packet); nil: no timer of its own.
    public var nextWakeup: MediaTime?

    public init(keyframe: Bool = false, bitrateCeilingKbps: Int? = nil, videoFractionLost: UInt8? = nil,
                peerLeft: Bool = false, nextWakeup: MediaTime? = nil) {
        self.keyframe = keyframe
        self.bitrateCeilingKbps = bitrateCeilingKbps
        self.videoFractionLost = videoFractionLost
        self.peerLeft = peerLeft
        self.nextWakeup = nextWakeup
    }
}
