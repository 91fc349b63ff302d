// H264Depacketizer: access-unit reassembly (RFC 6184 mode 1: single NAL unit, STAP-A, FU-A)
// over a sequence of packets, as the receiver will feed it after the jitter buffer; and the
// packetizer's Annex B scan over the same bytes.
//
// Input layout (FuzzInput: reads past the end give zeros):
//   byte 0           buffer size: 64 × (1 + (b & 63)) bytes, allocated exactly (so an overrun
//                    is an AddressSanitizer report, not a silent write into slack)
//   then, repeated:  flags (1 byte), length (2 bytes BE), that many bytes
//     flags & 1 == 0: the bytes are a whole RTP packet  → push(packet:into:)
//     flags & 1 == 1: seq (2) timestamp (4) marker (1) then the H.264 payload
//                                                     → push(sequenceNumber:timestamp:marker:payload:into:)
//     flags & 2 == 2: the bytes are also planned as an Annex B access unit (payload size from
//                     the flags' upper bits) and every packet is written and read back
//
// Oracles: a completed access unit is not empty, fits the buffer, starts with a start code and
// is read in full (ASan checks every byte); `framesCompleted` counts exactly the units handed
// out; a push gives up at most two units; the packetizer's payloads stay within their limit and
// reassemble to the NAL units it found.

import FuzzSupport
import RTCShareRTP

@main
enum FuzzH264 {
    static func main() { runLibFuzzer(fuzzH264) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzH264(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(fuzzBytes(data, size))
    let capacity = 64 * (1 + Int(input.u8() & 63))
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
    defer { buffer.deallocate() }
    let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: 1500, alignment: 16)
    defer { packet.deallocate() }

    var depacketizer = H264Depacketizer()
    var frames: UInt64 = 0
    var pushes = 0
    while !input.isAtEnd {
        let flags = input.u8()
        let chunk = input.lengthPrefixed(wide: true)
        if flags & 2 != 0 { packetize(chunk, maxPayload: 3 + Int(flags >> 2) * 20, scratch: packet) }
        let out: H264DepacketizerOutput
        if flags & 1 == 0 {
            out = depacketizer.push(packet: chunk, into: buffer)
        } else {
            var fields = FuzzInput(chunk)
            let seq = fields.u16()
            let ts = fields.u32()
            let marker = fields.bool()
            out = depacketizer.push(sequenceNumber: seq, timestamp: ts, marker: marker, payload: fields.rest(), into: buffer)
        }
        pushes += 1
        if let f = out.frame {
            frames += 1
            fuzzCheck(f.byteCount >= 5 && f.byteCount <= capacity, "access unit of \(f.byteCount) bytes in a \(capacity)-byte buffer")
            fuzzCheck(buffer[0] == 0 && buffer[1] == 0 && buffer[2] == 0 && buffer[3] == 1, "no start code first")
            consume(UnsafeRawBufferPointer(rebasing: buffer[..<f.byteCount]))
            consume(f.timestamp)
            consume(f.isIDR)
            consume(f.hasParameterSets)
            consume(f.lastSequenceNumber &- f.firstSequenceNumber)
        }
        if let d = out.dropped { consumeDescription(d) }
    }
    fuzzCheck(depacketizer.framesCompleted == frames,
              "framesCompleted \(depacketizer.framesCompleted), frames handed out \(frames)")
    fuzzCheck(depacketizer.framesDropped <= 2 * UInt64(pushes), "framesDropped \(depacketizer.framesDropped) after \(pushes) pushes")
    return 0
}

/// Plans `bytes` as an access unit and writes every packet; each payload within the limit, and
/// the NAL units' bytes come out in order (their total is what the scan found).
private func packetize(_ bytes: UnsafeRawBufferPointer, maxPayload: Int, scratch: UnsafeMutableRawBufferPointer) {
    guard !bytes.isEmpty, var plan = try? H264Packetizer().beginFrame(byteCount: bytes.count, maxPayloadSize: maxPayload)
    else { return }
    var found = 0
    var at = 0
    while let nal = H264AnnexB.nextNALUnit(in: bytes, from: at) {
        found += nal.range.count
        at = nal.next
    }
    var carried = 0
    var packets = 0
    var sawLast = false
    do {
        while let p = try plan.nextPacket(in: bytes) {
            fuzzCheck(!sawLast, "a packet after the one marked last")
            fuzzCheck(p.payloadSize <= maxPayload, "payload \(p.payloadSize) over \(maxPayload)")
            let n = try plan.writePayload(of: p, frame: bytes, into: scratch)
            fuzzCheck(n == p.payloadSize, "wrote \(n), planned \(p.payloadSize)")
            consume(UnsafeRawBufferPointer(rebasing: scratch[..<n]))
            switch p.kind {
            case .single(let r): carried += r.count
            case .stapA: carried += n - 1 - 2 * countUnits(UnsafeRawBufferPointer(rebasing: scratch[..<n]))
            case .fuA(_, let r, let isStart, _): carried += r.count + (isStart ? 1 : 0)
            }
            sawLast = p.isLast
            packets += 1
        }
    } catch {
        fuzzCheck(found == 0, "planning refused bytes with NAL units in them: \(error)")
        return
    }
    fuzzCheck(packets == 0 || sawLast, "the last packet is not marked")
    fuzzCheck(carried == found, "packets carry \(carried) NAL bytes, the scan found \(found)")
}

/// Units in a STAP-A payload the packetizer wrote (its size fields are trusted here).
private func countUnits(_ p: UnsafeRawBufferPointer) -> Int {
    var at = 1, n = 0
    while at + 2 <= p.count {
        at += 2 + (Int(p[at]) << 8 | Int(p[at + 1]))
        n += 1
    }
    return n
}
