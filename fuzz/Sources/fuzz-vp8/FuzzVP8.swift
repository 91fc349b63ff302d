// VP8Depacketizer: frame reassembly (RFC 7741) over a sequence of packets, as the receiver feeds
// it after the jitter buffer.
//
// Input layout (FuzzInput: reads past the end give zeros):
//   byte 0           frame buffer size: 64 × (1 + (b & 63)) bytes, allocated exactly (so an
//                    overrun is an AddressSanitizer report, not a silent write into slack)
//   then, repeated:  flags (1 byte), length (2 bytes BE), that many bytes
//     flags & 1 == 0: the bytes are a whole RTP packet  → push(packet:into:)
//     flags & 1 == 1: seq (2) timestamp (4) marker (1) then the VP8 payload
//                                                     → push(sequenceNumber:timestamp:marker:payload:into:)
//
// Oracles: a completed frame is not empty, fits the buffer and is read in full (ASan checks
// every byte); `framesCompleted` counts exactly the frames handed out; a push gives up at most
// two frames (the one in progress and the one it fails to start).

import FuzzSupport
import RTCShareRTP

@main
enum FuzzVP8 {
    static func main() { runLibFuzzer(fuzzVP8) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVP8(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(fuzzBytes(data, size))
    let capacity = 64 * (1 + Int(input.u8() & 63))
    let frameBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
    defer { frameBuffer.deallocate() }

    var depacketizer = VP8Depacketizer()
    var frames: UInt64 = 0
    var pushes = 0
    while !input.isAtEnd {
        let flags = input.u8()
        let chunk = input.lengthPrefixed(wide: true)
        let out: VP8DepacketizerOutput
        if flags & 1 == 0 {
            out = depacketizer.push(packet: chunk, into: frameBuffer)
        } else {
            var fields = FuzzInput(chunk)
            let seq = fields.u16()
            let ts = fields.u32()
            let marker = fields.bool()
            out = depacketizer.push(sequenceNumber: seq, timestamp: ts, marker: marker,
                                    payload: fields.rest(), into: frameBuffer)
        }
        pushes += 1
        if let f = out.frame {
            frames += 1
            fuzzCheck(f.byteCount >= 0 && f.byteCount <= capacity, "frame of \(f.byteCount) bytes in a \(capacity)-byte buffer")
            fuzzCheck(f.byteCount >= 1, "a completed frame has no bytes (its start packet had VP8 data)")
            consume(UnsafeRawBufferPointer(rebasing: frameBuffer[..<f.byteCount]))
            consume(f.timestamp)
            consume(f.isKeyframe)
            consume(f.pictureID ?? 0xFFFF)
            consume(f.lastSequenceNumber &- f.firstSequenceNumber)
        }
        if let d = out.dropped { consumeDescription(d) }
    }
    fuzzCheck(depacketizer.framesCompleted == frames,
              "framesCompleted \(depacketizer.framesCompleted), frames handed out \(frames)")
    fuzzCheck(depacketizer.framesDropped <= 2 * UInt64(pushes), "framesDropped \(depacketizer.framesDropped) after \(pushes) pushes")
    return 0
}
