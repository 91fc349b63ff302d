// The receive side's state machines, fed fuzz-chosen sequence numbers, sizes and times as
// ReceiveSession drives them: JitterBuffer (reorder, wait, loss, overflow, resync),
// NackGenerator (missing numbers, retries, give-ups, restarts) and ReceiveStatistics
// (RFC 3550 A.1/A.3/A.8 counters and the report block).
//
// Input layout (FuzzInput: reads past the end give zeros):
//   byte 0  jitter capacity 16 << (b & 3); NACK ring [4, 16, 64, 512][(b >> 2) & 3];
//           NACK max tries 1 + ((b >> 4) & 3)
//   byte 1  jitter slot size 12 + 6 × b bytes
//   then events of 4 bytes: op, a, b, arg; op & 7 selects:
//     0, 1 a packet arrives, numbered the previous one + Int8(a) (most traffic is near in
//          sequence; a far jump costs the jitter buffer one hand-out per number skipped)
//     2    a packet arrives, numbered a << 8 | b (anywhere in the 16-bit space)
//          — packets: 12 + arg bytes, RTP timestamp 3000 × seq + 16 × b; op & 0x10: a retransmission
//     3    time passes: arg ms (op & 0x08: arg × 100 ms)
//     4    pop everything due from the jitter buffer (losses go to NackGenerator.abandon)
//     5    collect due NACKs (RTT arg ms, or none when arg is 0) and the keyframe request
//     6    make a report block; note a sender report
//     7    set the jitter wait to arg ms
//   and every event also advances time by (op >> 5) × 250 µs. Time only moves forward, as the
//   monotonic clock the session passes in does.
//
// Oracles: packets come out of the jitter buffer in sequence order (consecutive numbers,
// except across a resync) and with the bytes that were inserted for that number; held count
// within capacity; NACK counters consistent (recovered ≤ nacked ≤ missing, requests ≥ nacked)
// and the missing set within the ring; the report block's cumulative loss within 24 bits.

import FuzzSupport
import RTCShareCore
import RTCShareRTP

@main
enum FuzzRX {
    static func main() { runLibFuzzer(fuzzRX) }
}

/// One budget for every input; each jitter buffer gives its block back when the input ends.
private let budget = try! MemoryBudget(capBytes: 1 << 20, prefault: false)

/// The bytes inserted for `seq`: the number at offset 2 (where RTP has it), then a pattern.
@inline(__always)
private func patternByte(_ seq: UInt16, _ i: Int) -> UInt8 {
    switch i {
    case 2: UInt8(truncatingIfNeeded: seq >> 8)
    case 3: UInt8(truncatingIfNeeded: seq)
    default: UInt8(truncatingIfNeeded: Int(seq) &* 31 &+ i)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRX(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(fuzzBytes(data, size))
    let c0 = input.u8()
    let slotBytes = 12 + 6 * Int(input.u8())
    var nackConfig = NackGenerator.Configuration()
    nackConfig.capacity = [4, 16, 64, 512][Int(c0 >> 2) & 3]
    nackConfig.maxTries = 1 + (Int(c0 >> 4) & 3)

    var jitter: JitterBuffer
    do {
        jitter = try JitterBuffer(budget: budget, capacity: 16 << Int(c0 & 3), slotBytes: slotBytes)
    } catch {
        fuzzCheck(false, "the budget cannot give a jitter buffer: \(error) (a block was not given back?)")
        return 0
    }
    var nack = NackGenerator(configuration: nackConfig)
    var stats = ReceiveStatistics(ssrc: 0x1234_5678, clockRate: 90_000)

    var now: Int64 = 1_000_000
    var lastSeq: UInt16 = 0
    var lastOut: UInt16? = nil
    var resyncsAtLastOut: UInt64 = 0
    var packet = [UInt8](repeating: 0, count: 12 + 255)
    var due = [UInt16](repeating: 0, count: 32)

    while !input.isAtEnd {
        let op = input.u8()
        let a = input.u8(), b = input.u8()
        let arg = input.u8()
        now += Int64(op >> 5) * 250
        switch op & 7 {
        case 0, 1, 2:
            let seq = op & 7 == 2 ? UInt16(a) << 8 | UInt16(b)
                : lastSeq &+ UInt16(bitPattern: Int16(Int8(bitPattern: a)))
            lastSeq = seq
            let length = 12 + Int(arg)
            for i in 0..<length { packet[i] = patternByte(seq, i) }
            let result = packet.withUnsafeBytes { raw in
                jitter.insert(UnsafeRawBufferPointer(rebasing: raw[..<length]), sequenceNumber: seq, now: now)
            }
            consumeDescription(result)
            if let rtt = nack.packetReceived(sequenceNumber: seq, now: now) {
                fuzzCheck(rtt >= 0, "negative NACK round trip \(rtt)")
            }
            let ts = UInt32(seq) &* 3000 &+ UInt32(b) &* 16
            if stats.received(sequenceNumber: seq, rtpTimestamp: ts, arrival: now, isRetransmission: op & 0x10 != 0) {
                fuzzCheck(stats.expected >= 1, "expected \(stats.expected) after a counted packet")
            }
        case 3:
            now += Int64(arg) * (op & 0x08 != 0 ? 100_000 : 1_000)
        case 4:
            while let out = jitter.pop(now: now) {
                let s: UInt16
                switch out {
                case .packet(let n, _, let length):
                    s = n
                    fuzzCheck(length >= 12 && length <= 12 + 255, "popped packet of \(length) bytes")
                    let same = jitter.withPacket(out) { bytes in
                        bytes.count == length && bytes.indices.allSatisfy { bytes[$0] == patternByte(n, $0) }
                    }
                    fuzzCheck(same == true, "packet \(n) came out with other bytes than went in")
                case .lost(let n):
                    s = n
                    nack.abandon(sequenceNumber: n)
                }
                let resyncs = jitter.counters.resyncs
                if let last = lastOut, resyncs == resyncsAtLastOut {
                    fuzzCheck(s == last &+ 1, "jitter buffer handed out \(s) after \(last)")
                }
                lastOut = s
                resyncsAtLastOut = resyncs
            }
            fuzzCheck(jitter.heldCount <= jitter.capacity, "holds \(jitter.heldCount) of \(jitter.capacity)")
            consume(jitter.nextDeadline ?? -1)
        case 5:
            let rtt: Int64? = arg == 0 ? nil : Int64(arg) * 1_000
            let n = due.withUnsafeMutableBufferPointer { nack.collectDue(now: now, roundTripMicroseconds: rtt, into: $0) }
            fuzzCheck(n >= 0 && n <= due.count, "collectDue wrote \(n)")
            for i in 0..<n { consume(due[i]) }
            consume(nack.takeKeyframeRequest())
            consume(nack.nextDeadline ?? -1)
        case 6:
            if let block = stats.makeReportBlock(now: now) {
                fuzzCheck(RTCPReportBlock.cumulativeLostRange.contains(block.cumulativeLost),
                          "cumulative lost \(block.cumulativeLost)")
                fuzzCheck(block.extendedHighestSequence == stats.extendedHighestSequence, "extended highest")
                consume(block.fractionLost)
                consume(block.jitter &+ block.delaySinceLastSenderReport)
            }
            stats.senderReportReceived(ntpTime: NTPTime(seconds: UInt32(a) << 24 | UInt32(b) << 8, fraction: UInt32(arg) << 24),
                                       arrival: now)
            consume(stats.jitterMicroseconds)
        default:
            jitter.waitMicroseconds = Int64(arg) * 1_000
        }
        let c = nack.counters
        fuzzCheck(c.recovered <= c.nacked && c.nacked <= c.missing && c.requests >= c.nacked,
                  "NACK counters \(c)")
        fuzzCheck(nack.missingCount >= 0 && nack.missingCount <= nack.configuration.capacity,
                  "\(nack.missingCount) missing in a ring of \(nack.configuration.capacity)")
    }
    consumeDescription(jitter.counters)
    consume(stats.cumulativeLost)
    return 0
}
