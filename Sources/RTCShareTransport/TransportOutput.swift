import RTCShareCore
import RTCShareICE
import RTCShareRTP

/// Where a datagram of the transport goes. A plain `--peer` transport names the route (the edge
/// maps each to a socket and an address: four with separate RTCP ports); a WebRTC transport
/// sends everything to one address, the peer of the selected ICE pair (or the STUN server or
/// candidate a check is for).
public enum TransportDestination: Sendable, Equatable {
    case route(RTPRoute)
    case address(ICEAddress)
}

/// What a transport puts out, handed to the edge as it is made: datagrams to send and, on a
/// receiving transport, the media it reassembled. The bytes are valid only during the call.
public protocol TransportOutput {
    func transmit(_ datagram: UnsafeRawBufferPointer, to destination: TransportDestination)
    /// A complete encoded frame, in order (a receiving transport only).
    func videoFrame(_ frame: ReceivedVideoFrame, bytes: UnsafeRawBufferPointer)
    /// An Opus payload in order, or nil for a lost one (a receiving transport only).
    func audioPacket(_ payload: UnsafeRawBufferPointer?)
}

extension TransportOutput {
    public func videoFrame(_ frame: ReceivedVideoFrame, bytes: UnsafeRawBufferPointer) {}
    public func audioPacket(_ payload: UnsafeRawBufferPointer?) {}
}
