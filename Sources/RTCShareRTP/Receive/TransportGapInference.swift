// Finding a lost video packet before the next one arrives, from the transport-wide numbers.
//
// A packet is normally known lost only when a higher sequence number of its stream arrives: the
// last packet of a frame (at 20 fps, often the whole frame) waits for the next frame, 50 ms. The
// transport-wide sequence number (one counter over every packet of ours: video, resends, audio)
// shows it sooner, since audio goes every 20 ms: when two consecutive audio packets arrive, the
// numbers between them are not audio; those above the newest video packet's number that did not
// arrive are video sent after it (or a resend or probe) and lost. So many numbers above the
// newest video sequence number may be asked for at once (`NackGenerator.inferMissing`).
//
// Invariants:
// - Only evidence counts: numbers between two audio packets that are not consecutive (an audio
//   packet lost, or reordered) are not counted, nor numbers under the newest video packet's.
// - The count is of numbers missing above the newest video packet since it arrived; a newer
//   video packet starts it again (what went missing before it is the ordinary gap's business).
// - A resend (an older sequence number, or one on the RTX stream) is recorded as arrived but is
//   not the newest video packet.
// - Memory: a fixed window of the last `window` numbers seen; nothing grows. Numbers further
//   apart than the window are not looked at.
// - Sans-IO: packets in, a count out; no clock.

/// Counts video packets lost above the newest one, from gaps in the transport-wide numbers.
public struct TransportGapInference: Sendable {
    /// Transport-wide numbers remembered (a power of two).
    public static let window = 256

    private var seen: [Int64]
    private var newest: Int64?
    /// The newest original video packet: its transport-wide number and sequence number.
    private var video: (transport: Int64, sequence: Int64)?
    private var audio: (transport: Int64, sequence: UInt16)?
    /// Non-audio numbers found missing above `video.transport` so far.
    private var missingAboveVideo = 0

    public init() {
        seen = [Int64](repeating: -1, count: Self.window)
    }

    /// Video packets lost above the newest one, as far as the evidence goes.
    public var missingVideo: Int { missingAboveVideo }

    private mutating func record(_ transportSequence: UInt16) -> Int64 {
        let n = newest.map { transportSequence.extended(around: $0) } ?? Int64(transportSequence) + (1 << 16)
        newest = max(newest ?? n, n)
        seen[Int(n & Int64(Self.window - 1))] = n
        return n
    }

    private func arrived(_ n: Int64) -> Bool { seen[Int(n & Int64(Self.window - 1))] == n }

    /// A video packet as it was first sent (not RTX); a resend of an older number is only recorded.
    public mutating func videoArrived(transportSequence: UInt16, sequenceNumber: UInt16) {
        let n = record(transportSequence)
        let s = video.map { sequenceNumber.extended(around: $0.sequence) } ?? Int64(sequenceNumber) + (1 << 16)
        guard s > video?.sequence ?? Int64.min else { return }
        if n > video?.transport ?? Int64.min { missingAboveVideo = 0 }
        video = (n, s)
    }

    /// Any other packet of ours carrying the number (an RTX resend, padding).
    public mutating func otherArrived(transportSequence: UInt16) {
        _ = record(transportSequence)
    }

    /// An audio packet. Returns the video packets now known lost above the newest one (the
    /// count since it arrived, this packet's evidence added).
    @discardableResult
    public mutating func audioArrived(transportSequence: UInt16, sequenceNumber: UInt16) -> Int {
        let n = record(transportSequence)
        defer { if n > audio?.transport ?? Int64.min { audio = (n, sequenceNumber) } }
        guard let previous = audio, sequenceNumber == previous.sequence &+ 1, n > previous.transport,
              let v = video, n > v.transport else { return missingAboveVideo }
        let low = max(previous.transport, v.transport)
        guard n - low <= Int64(Self.window) else { return missingAboveVideo }
        var k = low + 1
        while k < n {
            if !arrived(k) { missingAboveVideo += 1 }
            k += 1
        }
        return missingAboveVideo
    }
}
