// The receive core (`RTPReceiver`) as the built-in receiver drives it: whole datagrams in, time
// passing, polls. Plain RTP (no SRTP: authentication would reject every mutated packet before
// the parsers are reached), RTX declared, audio declared.
//
// Input layout (FuzzInput: reads past the end give zeros):
//   byte 0  flags: & 1 the video SSRC is named up front; & 2 RTX is declared; & 4 the video is
//           H.264 (else VP8); & 8 transport-wide feedback is on (extension ID 3): built packets
//           then carry a transport-wide sequence number, which moves by (a & 3) − 1 each time
//   then events; op = one byte, op & 3 selects:
//     0  a raw datagram: a length-prefixed run of the input (anything at all)
//     1  a well-formed VP8 RTP packet: seq = previous + Int8(a), timestamp step b, marker and
//        start bits and the keyframe bit from c, payload length d (built, then maybe one byte
//        flipped when op & 4), on the video, RTX (op & 8) or audio (op & 16) payload type
//     2  time passes: a ms (op & 4: a × 100 ms)
//     3  poll
//   and every event also advances time by (op >> 5) × 500 µs.
//
// Oracles: frames come out no larger than the frame buffer and with as many bytes as they say;
// frames handed out ≤ video packets accepted, and as many as counted; feedback datagrams are
// RTCP that fits an MTU, on an RTCP route; after a poll the next deadline is later than now.

import FuzzSupport
import RTCShareCore
import RTCShareRTP

@main
enum FuzzReceiver {
    static func main() { runLibFuzzer(fuzzReceiver) }
}

private let budget = try! MemoryBudget(capBytes: 8 << 20, prefault: false)

private struct RNG: RandomNumberGenerator {
    var state: UInt64 = 1
    mutating func next() -> UInt64 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return state
    }
}

private final class Output: RTPReceiverOutput {
    var frames = 0
    var maxFrameBytes = 0
    func transmit(_ datagram: UnsafeRawBufferPointer, route: RTPRoute) {
        fuzzCheck(datagram.count >= 8 && datagram.count <= 1500, "feedback datagram of \(datagram.count) bytes")
        fuzzCheck((192...223).contains(datagram[1]), "feedback that is not RTCP")
        fuzzCheck(route == .videoRTCP || route == .audioRTCP, "feedback on \(route)")
        consume(datagram)
    }
    func videoFrame(_ frame: ReceivedVideoFrame, bytes: UnsafeRawBufferPointer) {
        fuzzCheck(bytes.count == frame.byteCount && bytes.count <= maxFrameBytes,
                  "frame of \(bytes.count) bytes (says \(frame.byteCount))")
        frames += 1
        consume(bytes)
    }
    func audioPacket(_ payload: UnsafeRawBufferPointer?) {
        if let payload { consume(payload) } else { consume(0) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReceiver(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(fuzzBytes(data, size))
    let flags = input.u8()
    let videoSSRC: UInt32 = 0x1111_2222
    var c = RTPReceiverConfiguration()
    c.videoJitterPackets = 64
    c.audioJitterPackets = 16
    c.maxFrameBytes = 16 << 10
    c.nack.capacity = 64
    c.videoSSRC = flags & 1 != 0 ? videoSSRC : nil
    c.rtxPayloadType = flags & 2 != 0 ? 97 : nil
    // H.264: the built packets are not H.264 payloads (malformed for it), raw datagrams may be.
    c.videoCodec = flags & 4 != 0 ? .h264 : .vp8
    let transportWide = flags & 8 != 0
    c.transportSequenceID = transportWide ? 3 : nil
    let receiver: RTPReceiver
    do {
        receiver = try RTPReceiver(configuration: c, budget: budget, random: RNG())
    } catch {
        fuzzCheck(false, "the budget cannot give the receive buffers: \(error) (a block was not given back?)")
        return 0
    }
    let output = Output()
    output.maxFrameBytes = max(c.maxFrameBytes, 4096)
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: RTPReceiverConfiguration.datagramBytes + 64,
                                                        alignment: 16)
    defer { buffer.deallocate() }
    var now = MediaTime(microseconds: 1_000_000)
    var seq: UInt16 = 1000
    var rtxSeq: UInt16 = 50
    var timestamp: UInt32 = 90_000
    var pictureID: UInt16 = 0
    var transportSeq: UInt16 = 65_500

    while !input.isAtEnd {
        let op = input.u8()
        now = now + .microseconds(Int64(op >> 5) * 500)
        switch op & 3 {
        case 0:
            let bytes = input.lengthPrefixed(wide: true)
            let n = min(bytes.count, RTPReceiverConfiguration.datagramBytes)
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<n]))
            consumeDescription(receiver.receive(datagram: buffer, count: n, at: now))
        case 1:
            let a = input.u8(), b = input.u8(), bits = input.u8(), d = input.u8()
            seq = seq &+ UInt16(bitPattern: Int16(Int8(bitPattern: a)))
            timestamp = timestamp &+ UInt32(b) * 300
            if bits & 1 != 0 { pictureID = (pictureID &+ 1) & 0x7FFF }
            let audio = op & 16 != 0
            let rtx = !audio && op & 8 != 0
            var n = 0
            func put(_ v: UInt8) { buffer[n] = v; n += 1 }
            put(transportWide ? 0x90 : 0x80)
            put((bits & 2 != 0 ? 0x80 : 0) | (audio ? 111 : rtx ? 97 : 96))
            let s = rtx ? rtxSeq : seq
            if rtx { rtxSeq &+= 1 }
            put(UInt8(s >> 8)); put(UInt8(truncatingIfNeeded: s))
            for k in [24, 16, 8, 0] { put(UInt8(truncatingIfNeeded: timestamp >> UInt32(k))) }
            let ssrc: UInt32 = audio ? 0x3333_4444 : rtx ? 0x5555_6666 : videoSSRC
            for k in [24, 16, 8, 0] { put(UInt8(truncatingIfNeeded: ssrc >> UInt32(k))) }
            if transportWide {
                // RFC 8285 one-byte block: id 3, two bytes of transport-wide sequence number.
                transportSeq = transportSeq &+ UInt16(a & 3) &- 1
                for v: UInt8 in [0xBE, 0xDE, 0x00, 0x01, 0x31] { put(v) }
                put(UInt8(transportSeq >> 8)); put(UInt8(truncatingIfNeeded: transportSeq)); put(0)
            }
            if rtx { put(UInt8(seq >> 8)); put(UInt8(truncatingIfNeeded: seq)) }
            if !audio {
                // VP8 descriptor: X, S (start), PID 0; I with a 15-bit PictureID.
                put(0x80 | (bits & 4 != 0 ? 0x10 : 0))
                put(0x80)
                put(0x80 | UInt8(pictureID >> 8)); put(UInt8(truncatingIfNeeded: pictureID))
                put(bits & 8 != 0 ? 0x00 : 0x01)  // the VP8 payload header's P bit
            }
            for k in 0..<Int(d) { put(UInt8(truncatingIfNeeded: k &+ Int(b))) }
            if op & 4 != 0, n > 0 {
                let at = Int(d) % n
                buffer[at] ^= bits | 1
            }
            consumeDescription(receiver.receive(datagram: buffer, count: n, at: now))
        case 2:
            now = now + .milliseconds(Int64(input.u8()) * (op & 4 != 0 ? 100 : 1))
        default:
            receiver.poll(at: now, output: output)
            // Everything due was done: what is left is later (the NACK ring is smaller than one
            // NACK's list, so no number due is left behind).
            if let next = receiver.nextDeadline {
                fuzzCheck(next > now, "after a poll at \(now.microseconds) µs the next deadline is \(next.microseconds)")
            }
        }
    }
    receiver.drain(at: MediaTime(microseconds: Int64.max / 4), output: output)
    fuzzCheck(UInt64(output.frames) <= receiver.stats.packets, "\(output.frames) frames from \(receiver.stats.packets) packets")
    fuzzCheck(UInt64(output.frames) == receiver.stats.framesDelivered, "frames handed out \(output.frames) vs counted")
    if !transportWide { fuzzCheck(receiver.stats.transportFeedbackSent == 0, "transport-wide feedback sent unasked") }
    consumeDescription(receiver.stats)
    return 0
}
