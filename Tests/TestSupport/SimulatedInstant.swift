import RTCShareICE
import RTCShareMedia

/// A point in a simulation's fake time, so one `LossyLink` serves every layer whatever its
/// clock type: the RTP core counts in `MediaTime`, the ICE agent in `ICETime`.
public protocol SimulatedInstant: Comparable {
    associatedtype Interval
    static func + (lhs: Self, rhs: Interval) -> Self
}

extension MediaTime: SimulatedInstant {
    public typealias Interval = MediaDuration
}

extension ICETime: SimulatedInstant {
    public typealias Interval = ICEDuration
}
