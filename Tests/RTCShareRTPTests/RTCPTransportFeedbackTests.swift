import TestSupport
import Testing
@testable import RTCShareRTP

/// Transport-wide feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1): byte
/// tables annotated field by field for each chunk kind, the writer's round trip through the
/// parser, refusal of malformed packets, and the receiver's recorder.
@Suite struct RTCPTransportFeedbackTests {
    /// Every packet a parsed feedback reports: (sequence number, arrival µs or nil).
    static func packets(_ bytes: [UInt8]) throws -> [(UInt16, Int64?)] {
        var header: RTCPTransportCCHeader?
        try RTCPParser.parse(bytes) { if case .transportCC(let h) = $0 { header = h } }
        let h = try #require(header)
        var out: [(UInt16, Int64?)] = []
        try bytes.withUnsafeBytes { raw in
            try RTCPTransportFeedback.forEachPacket(of: h, in: raw) { out.append(($0, $1)) }
        }
        return out
    }

    /// One transport-cc packet, byte by byte: a two-bit status vector with a small delta, a
    /// packet not received and a large negative delta (RTCPFeedbackTests reads its header).
    static let twoBitVector: [UInt8] = [
        0x8F, 0xCD, 0x00, 0x06,                     // FMT=15, PT=205, length 6 (28 bytes)
        0x00, 0x00, 0x00, 0x01,                     // sender
        0x00, 0x00, 0x00, 0x02,                     // media
        0x00, 0x0A,                                 // base sequence 10
        0x00, 0x03,                                 // status count 3
        0xFF, 0xFF, 0xFE,                           // reference time -2 (× 64 ms)
        0x05,                                       // feedback packet count 5
        0xD2, 0x00,                                 // 1 1 | 01 00 10 00 00 00 00: small, not received, large
        0x04,                                       // small delta 4 (1 ms)
        0xFF, 0xF8,                                 // large delta -8 (-2 ms)
        0x00, 0x00, 0x00,                           // zero padding
    ]

    @Test func twoBitVectorByteTable() throws {
        let bytes = Self.twoBitVector
        let fb = RTCPTransportFeedback(sender: 1, media: 2, baseSequence: 10, referenceTime: -2, feedbackCount: 5,
                                       statuses: [.received(deltaTicks: 4), .notReceived, .received(deltaTicks: -8)])
        #expect(try fb.serialized() == bytes)
        let got = try Self.packets(bytes)
        #expect(got.map(\.0) == [10, 11, 12])
        let expected: [Int64?] = [-127_000, nil, -129_000]  // −2 × 64 ms + 1 ms, then − 2 ms
        #expect(got.map(\.1) == expected)
    }

    @Test func runLengthAndOneBitVectorByteTable() throws {
        var bytes: [UInt8] = [
            0x8F, 0xCD, 0x00, 0x09,                     // FMT=15, PT=205, length 9 (40 bytes)
            0x00, 0x00, 0x00, 0x07,                     // sender
            0x00, 0x00, 0x00, 0x08,                     // media
            0xFF, 0xF8,                                 // base sequence 65528 (wraps within the packet)
            0x00, 0x11,                                 // status count 17
            0x00, 0x00, 0x10,                           // reference time 16 (1.024 s)
            0x00,                                       // feedback packet count 0
            0x20, 0x0E,                                 // run length: 0 | 01 | 14 — small delta × 14
            0x90, 0x00,                                 // one-bit vector 1 0 | 0 1 0 …: not received, received, not received
        ]
        bytes += [UInt8](repeating: 0x01, count: 14)    // 14 small deltas of 250 µs
        bytes += [0x02]                                 // small delta 2 (500 µs)
        let statuses = [TransportPacketStatus](repeating: .received(deltaTicks: 1), count: 14)
            + [.notReceived, .received(deltaTicks: 2), .notReceived]
        let fb = RTCPTransportFeedback(sender: 7, media: 8, baseSequence: 65528, referenceTime: 16, feedbackCount: 0,
                                       statuses: statuses)
        #expect(try fb.serialized() == bytes + [0])
        let got = try Self.packets(bytes + [0])
        #expect(got.map(\.0) == (0..<17).map { UInt16(truncatingIfNeeded: 65528 + $0) })
        #expect(got[13].1 == Int64(1_024_000 + 14 * 250))
        #expect(got[14].1 == nil && got[15].1 == Int64(1_024_000 + 14 * 250 + 500) && got[16].1 == nil)
    }

    @Test func writtenFeedbackParsesBackToTheSameStatuses() throws {
        var rng = SeededRandom(seed: 41)
        for _ in 0..<200 {
            let n = Int.random(in: 1...300, using: &rng)
            var statuses: [TransportPacketStatus] = []
            var runOf: TransportPacketStatus? = nil
            for _ in 0..<n {
                // Runs and mixtures both: keep the last status half of the time.
                if let r = runOf, Bool.random(using: &rng) { statuses.append(r); continue }
                let s: TransportPacketStatus = switch Int.random(in: 0..<4, using: &rng) {
                case 0: .notReceived
                case 1: .received(deltaTicks: Int32.random(in: 0...255, using: &rng))
                case 2: .received(deltaTicks: Int32.random(in: -32768...32767, using: &rng))
                default: .received(deltaTicks: Int32.random(in: 0...3, using: &rng))
                }
                statuses.append(s)
                runOf = s
            }
            let reference = Int32.random(in: -(1 << 23)...((1 << 23) - 1), using: &rng)
            let fb = RTCPTransportFeedback(sender: 1, media: 2, baseSequence: UInt16.random(in: 0...65535, using: &rng),
                                           referenceTime: reference, feedbackCount: 9, statuses: statuses)
            let bytes = try fb.serialized()
            #expect(bytes.count == fb.size && bytes.count % 4 == 0)
            let got = try Self.packets(bytes)
            var time = Int64(reference) * 64_000
            var expected: [(UInt16, Int64?)] = []
            for (i, s) in statuses.enumerated() {
                let seq = fb.baseSequence &+ UInt16(i)
                if case .received(let d) = s {
                    time += Int64(d) * 250
                    expected.append((seq, time))
                } else {
                    expected.append((seq, nil))
                }
            }
            #expect(got.map(\.0) == expected.map(\.0) && got.map(\.1) == expected.map(\.1))
        }
    }

    @Test func malformedFeedbackIsRefusedWhole() {
        let head: [UInt8] = [0, 0, 0, 1, 0, 0, 0, 2]
        func packet(count: UInt16, _ rest: [UInt8]) -> [UInt8] {
            let body = head + [0, 10, UInt8(count >> 8), UInt8(count & 0xFF), 0, 0, 1, 0] + rest
            let padded = body + [UInt8](repeating: 0, count: (4 - body.count % 4) % 4)
            return [0x8F, 0xCD, 0, UInt8(padded.count / 4)] + padded
        }
        let cases: [(String, [UInt8])] = [
            ("status count 0", packet(count: 0, [0x20, 0x01, 0x01])),
            ("reserved symbol", packet(count: 1, [0xF0, 0x00, 0x01])),
            ("run length 0", packet(count: 1, [0x20, 0x00, 0x01])),
            ("chunks past the end", packet(count: 40, [0x20, 0x0E, 0x01])),
            ("deltas past the end", packet(count: 3, [0x20, 0x03, 0x01])),
            ("large deltas past the end", packet(count: 4, [0x40, 0x04, 0x01, 0x02, 0x03])),
            ("a word after the deltas", packet(count: 1, [0x20, 0x01, 0x01, 0, 0, 0, 0, 0])),
        ]
        for (name, bytes) in cases {
            var delivered = 0
            #expect(throws: RTPError.self, "\(name)") { try RTCPParser.parse(bytes) { _ in delivered += 1 } }
            #expect(delivered == 0, "\(name)")
        }
        // The same shape, well formed, parses.
        #expect(throws: Never.self) { try RTCPParser.parse(packet(count: 1, [0x20, 0x01, 0x01])) { _ in } }
    }

    @Test func writerRefusesWhatTheWireCannotHold() {
        #expect(throws: RTPError.self) { try RTCPTransportFeedback(sender: 1, media: 2, baseSequence: 0, referenceTime: 0,
                                                                  feedbackCount: 0, statuses: []).serialized() }
        #expect(throws: RTPError.self) { try RTCPTransportFeedback(sender: 1, media: 2, baseSequence: 0, referenceTime: 0,
                                                                  feedbackCount: 0, statuses: [.received(deltaTicks: 40_000)]).serialized() }
        #expect(throws: RTPError.self) { try RTCPTransportFeedback(sender: 1, media: 2, baseSequence: 0, referenceTime: 1 << 23,
                                                                  feedbackCount: 0, statuses: [.notReceived]).serialized() }
    }

    // MARK: the recorder

    @Test func recorderReportsEachArrivalOnceWithLossesAndAcrossTheWrap() throws {
        var r = TransportFeedbackRecorder(intervalMicroseconds: 50_000)
        let t0: Int64 = 10_000_000
        // 65534, 65535, (0 lost), 1, 2 — then 3 arrives after the first feedback.
        for (i, seq) in [UInt16(65534), 65535, 1, 2].enumerated() { r.packetArrived(seq, at: t0 + Int64(i) * 1_000) }
        #expect(r.nextDeadline == t0 + 50_000)
        let early = r.takeFeedback(sender: 1, media: 2, now: t0 + 49_999)
        #expect(early == nil)
        let first = r.takeFeedback(sender: 1, media: 2, now: t0 + 50_000)
        let fb = try #require(first)
        #expect(fb.baseSequence == 65534 && fb.feedbackCount == 0)
        #expect(fb.statuses.count == 5 && fb.statuses[2] == .notReceived)
        #expect(r.nextDeadline == nil)
        let got = try Self.packets(try fb.serialized())
        let base = Int64(fb.referenceTime) * 64_000
        // Arrival times come back to the 250 µs tick, relative to the reference time.
        let offsets: [Int64] = got.compactMap(\.1).map { $0 - base }
        let sent: [Int64] = [0, 1_000, 2_000, 3_000].map { t0 % 64_000 + $0 }
        #expect(offsets == sent)
        // Reported numbers are not reported again; a late one is ignored.
        r.packetArrived(65535, at: t0 + 60_000)
        #expect(r.nextDeadline == nil)
        r.packetArrived(3, at: t0 + 61_000)
        let second = r.takeFeedback(sender: 1, media: 2, now: t0 + 120_000)
        let next = try #require(second)
        #expect(next.baseSequence == 3 && next.statuses.count == 1 && next.feedbackCount == 1)
    }

    @Test func aLongWindowIsSplitIntoSeveralFeedbacks() throws {
        var r = TransportFeedbackRecorder()
        for i in 0..<900 { r.packetArrived(UInt16(i), at: 1_000_000 + Int64(i) * 100) }
        var total = 0
        var sent = 0
        while let fb = r.takeFeedback(sender: 1, media: 2, now: 2_000_000) {
            #expect(fb.statuses.count <= TransportFeedbackRecorder.maxStatuses)
            #expect(fb.baseSequence == UInt16(total))
            #expect(try fb.serialized().count <= 1200)
            total += fb.statuses.count
            sent += 1
        }
        #expect(total == 900 && sent == 2)
    }
}
