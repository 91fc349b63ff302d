import Glibc
import RTCShare
import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP
import TestSupport
import Testing

/// The sender's side of feedback, over real loopback sockets and real SRTP: a test socket plays
/// the receiver, reads what `PeerSink` sends and answers with SRTCP the way a receiver would.
@Suite struct PeerSinkTests {
    /// A receiver on 127.0.0.1: its socket, its SRTP contexts (same key both ways, as SDES
    /// with one a=crypto line has it) and what it has read.
    final class TestReceiver {
        let socket: UDPSocket
        var unprotect: SRTPContext
        var protect: SRTPContext
        var senderAddress: SocketAddress?
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)

        init(key: SRTPMasterKey) throws {
            socket = try UDPSocket(bindingTo: SocketAddress(parsing: "127.0.0.1:1").with(port: 0))
            unprotect = try SRTPContext(key: key, direction: .receiver)
            protect = try SRTPContext(key: key, direction: .sender)
        }

        deinit { buffer.deallocate() }

        /// The raw SRTP bytes of packets `readRTP` was told to lose, by sequence number.
        var lost: [UInt16: [UInt8]] = [:]

        /// Every RTP packet waiting (up to `wait` µs for the first): (header, payload bytes).
        /// The packet at index `lose` is treated as lost on the way: kept raw, not read.
        func readRTP(wait: Int64 = 500_000, lose: Int? = nil) throws -> [(RTPHeader, [UInt8])] {
            var packets: [(RTPHeader, [UInt8])] = []
            var index = 0
            _ = socket.waitReadable(timeoutMicroseconds: wait)
            while case .datagram(let count, let from) = socket.receive(into: buffer) {
                senderAddress = from
                guard !(192...223).contains(buffer[1]) else { continue }  // an SR
                defer { index += 1 }
                if index == lose {
                    lost[UInt16(buffer[2]) << 8 | UInt16(buffer[3])] = Array(buffer[0..<count])
                    continue
                }
                let n = try unprotect.unprotectRTP(buffer, length: count)
                let parsed = try RTPHeader.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                packets.append((parsed.header, Array(buffer[parsed.payloadRange])))
                if !socket.waitReadable(timeoutMicroseconds: 20_000) { break }
            }
            return packets
        }

        /// Sends `packet` (a plain compound RTCP) protected, to the sink.
        func sendRTCP(_ bytes: [UInt8]) throws {
            bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
            let n = try protect.protectRTCP(buffer, length: bytes.count)
            _ = socket.send(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), to: try #require(senderAddress))
        }

        func sendRaw(_ bytes: [UInt8]) throws {
            _ = bytes.withUnsafeBytes { socket.send($0, to: senderAddress!) }
        }
    }

    static let key = SRTPMasterKey.generate(profile: .aesCM128HmacSHA1_80)

    func makeSink(_ receiver: TestReceiver, rtx: Bool = false,
                  historyBytes: Int = 64 << 10) throws -> (PeerSink, MemoryBudget) {
        var c = PeerConfiguration(videoPeer: receiver.socket.localAddress)
        c.protection = Self.key
        c.usesRTX = rtx
        c.historyBytes = historyBytes
        let budget = try MemoryBudget(capBytes: PeerSink.budgetBytes(c) + (256 << 10))
        return (try PeerSink(configuration: c, budget: budget), budget)
    }

    /// Sends a 6000-byte pseudo frame (the sink does not read VP8) and returns its packets.
    func sendFrame(_ sink: PeerSink, _ receiver: TestReceiver, timestamp: UInt32 = 9000, fill: UInt8 = 7,
                   lose: Int? = nil) throws -> [(RTPHeader, [UInt8])] {
        let frame = [UInt8](repeating: fill, count: 6000)
        try frame.withUnsafeBytes { bytes in
            try sink.send(video: OutgoingVideoFrame(bytes: bytes, isKeyframe: true, isDroppable: false,
                                                    captureTime: MonotonicClock.now(), mediaTimestamp: timestamp,
                                                    orientation: .up, width: 320, height: 240))
        }
        return try receiver.readRTP(lose: lose)
    }

    func nack(_ sink: PeerSink, _ sequences: [UInt16]) throws -> [UInt8] {
        try RTCPGenericNack(sender: 1, media: sink.video.ssrc,
                            entries: RTCPNackEntry.minimalEntries(lost: sequences)).serialized()
    }

    @Test func aFrameIsCutToTheMTUAndMarkedAtItsEnd() throws {
        let receiver = try TestReceiver(key: Self.key)
        let (sink, _) = try makeSink(receiver)
        let packets = try sendFrame(sink, receiver)
        #expect(packets.count >= 6)
        #expect(packets.map(\.0.marker) == Array(repeating: false, count: packets.count - 1) + [true])
        #expect(Set(packets.map(\.0.timestamp)).count == 1)
        #expect(packets.allSatisfy { $0.0.ssrc == sink.video.ssrc && $0.0.payloadType == 96 })
        let sequences = packets.map(\.0.sequenceNumber)
        #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
        // Every packet, protected, fits 1200 bytes of UDP payload.
        #expect(packets.allSatisfy { 12 + 16 + $0.1.count + 10 <= 1200 })
    }

    @Test func aNackedPacketStillHeldIsSentAgainWithAFreshTransportSequence() throws {
        let receiver = try TestReceiver(key: Self.key)
        let (sink, _) = try makeSink(receiver)
        let packets = try sendFrame(sink, receiver, lose: 2)
        let (sequence, original) = try #require(receiver.lost.first)
        #expect(packets.count >= 5 && !packets.contains { $0.0.sequenceNumber == sequence })
        try receiver.sendRTCP(try nack(sink, [sequence]))
        #expect(Tools.waitReadable(sink.descriptors, timeout: 2), "the feedback never reached the sink")
        let requests = try sink.service(at: MonotonicClock.now())
        #expect(!requests.keyframe)
        // Captured raw: the resend is the lost packet (same RTP header, same SRTP keystream, so
        // the same encrypted payload) except the per-send extensions (a fresh transport-wide
        // sequence number, a new send time) and so the tag; it decrypts now that it arrives
        // for the first time.
        _ = receiver.socket.waitReadable(timeoutMicroseconds: 500_000)
        guard case .datagram(let count, _) = receiver.socket.receive(into: receiver.buffer) else {
            Issue.record("nothing resent")
            return
        }
        let resent = Array(receiver.buffer[0..<count])
        #expect(resent.count == original.count)
        let map = try RTPExtensionMap(absSendTime: PeerConfiguration.absSendTimeID,
                                      transportSequenceNumber: PeerConfiguration.transportSequenceID)
        func parsed(_ bytes: [UInt8]) throws -> (RTPParsedPacket, RTPExtensionValues) {
            try bytes.withUnsafeBytes { raw in
                let p = try RTPHeader.parse(raw)
                return (p, try RTPExtensionValues.parse(packet: raw, p, map: map))
            }
        }
        let (before, beforeExtensions) = try parsed(original)
        let (after, afterExtensions) = try parsed(resent)
        #expect(after.header == before.header)
        #expect(resent[after.payloadRange.lowerBound..<(count - 10)] == original[before.payloadRange.lowerBound..<(count - 10)])
        let first = try #require(beforeExtensions.transportSequenceNumber)
        let again = try #require(afterExtensions.transportSequenceNumber)
        #expect(again &- first >= UInt16(packets.count - 1), "fresh: after every later packet of the frame")
        #expect(try receiver.unprotect.unprotectRTP(receiver.buffer, length: count) == count - 10)
        #expect(sink.transportStats?.nacksReceived == 1)
        #expect(sink.transportStats?.packetsRetransmitted == 1)
    }

    @Test func withRTXTheResendComesOnItsOwnStreamWithTheOriginalSequence() throws {
        let receiver = try TestReceiver(key: Self.key)
        let (sink, _) = try makeSink(receiver, rtx: true)
        let packets = try sendFrame(sink, receiver)
        let lost = packets[1]
        try receiver.sendRTCP(try nack(sink, [lost.0.sequenceNumber]))
        #expect(Tools.waitReadable(sink.descriptors, timeout: 2), "the feedback never reached the sink")
        _ = try sink.service(at: MonotonicClock.now())
        let resent = try receiver.readRTP()
        let rtxSSRC = try #require(sink.rtx?.ssrc)
        #expect(resent.count == 1)
        #expect(resent.first?.0.ssrc == rtxSSRC)
        #expect(resent.first?.0.payloadType == 97)
        // RFC 4588: the original sequence number, then the original payload.
        let osn = resent.first.map { UInt16($0.1[0]) << 8 | UInt16($0.1[1]) }
        #expect(osn == lost.0.sequenceNumber)
        #expect(resent.first.map { Array($0.1.dropFirst(2)) } == lost.1)
    }

    @Test func aNackForAPacketNoLongerHeldAsksForAKeyframe() throws {
        let receiver = try TestReceiver(key: Self.key)
        // A history of 64 KiB holds about ten 6000-byte frames: send twenty.
        let (sink, _) = try makeSink(receiver, historyBytes: 64 << 10)
        let first = try sendFrame(sink, receiver)
        for i in 1..<20 { _ = try sendFrame(sink, receiver, timestamp: UInt32(9000 + i * 4500)) }
        try receiver.sendRTCP(try nack(sink, [first[0].0.sequenceNumber]))
        #expect(Tools.waitReadable(sink.descriptors, timeout: 2), "the feedback never reached the sink")
        let requests = try sink.service(at: MonotonicClock.now())
        #expect(requests.keyframe)
        #expect(sink.transportStats?.retransmitsMissed == 1)
        #expect(try receiver.readRTP(wait: 50_000).filter { $0.0.ssrc == sink.video.ssrc }.isEmpty)
    }

    @Test func pliAndFirAskForAKeyframeAndRembCapsTheBitrate() throws {
        let receiver = try TestReceiver(key: Self.key)
        let (sink, _) = try makeSink(receiver)
        _ = try sendFrame(sink, receiver)
        try receiver.sendRTCP(try RTCPPictureLossIndication(sender: 1, media: sink.video.ssrc).serialized())
        #expect(Tools.waitReadable(sink.descriptors, timeout: 2), "the feedback never reached the sink")
        #expect(try sink.service(at: MonotonicClock.now()).keyframe)
        #expect(try !sink.service(at: MonotonicClock.now()).keyframe, "one request, one keyframe")
        try receiver.sendRTCP(try RTCPFullIntraRequest(sender: 1, entries: [RTCPFIREntry(ssrc: sink.video.ssrc, sequenceNumber: 1)]).serialized())
        try receiver.sendRTCP(try RTCPREMB(sender: 1, bitrate: 300_000, ssrcs: [sink.video.ssrc]).serialized())
        #expect(Tools.waitReadable(sink.descriptors, timeout: 2), "the feedback never reached the sink")
        let requests = try sink.service(at: MonotonicClock.now())
        #expect(requests.keyframe)
        #expect(requests.bitrateCeilingKbps == 300)
        #expect(sink.transportStats?.pliReceived == 1)
        #expect(sink.transportStats?.firReceived == 1)
    }

    @Test func aReceiverReportGivesLossJitterAndRoundTrip() throws {
        let receiver = try TestReceiver(key: Self.key)
        let (sink, _) = try makeSink(receiver)
        _ = try sendFrame(sink, receiver)
        // LSR of an SR sent 30 ms ago, held for 10 ms by the receiver: RTT ≈ 20 ms.
        let sentAt = NTPTime(unixMicroseconds: WallClock.nowMicroseconds() - 30_000)
        let block = RTCPReportBlock(ssrc: sink.video.ssrc, fractionLost: 64, cumulativeLost: 12,
                                    extendedHighestSequence: 100, jitter: 900, lastSenderReport: sentAt.middle32,
                                    delaySinceLastSenderReport: 655)  // 10 ms in 1/65536 s
        try receiver.sendRTCP(try RTCPReceiverReport(ssrc: 1, reportBlocks: [block]).serialized())
        #expect(Tools.waitReadable(sink.descriptors, timeout: 2), "the feedback never reached the sink")
        let requests = try sink.service(at: MonotonicClock.now())
        #expect(requests.videoFractionLost == 64, "the loss goes to the session's rate controller")
        #expect(try sink.service(at: MonotonicClock.now()).videoFractionLost == nil, "once per report")
        let stats = try #require(sink.transportStats)
        #expect(stats.fractionLost == 0.25)
        #expect(stats.cumulativeLost == 12)
        #expect(stats.jitterMicroseconds == 10_000)
        let rtt = try #require(stats.roundTripMicroseconds)
        #expect(rtt >= 19_000 && rtt < 200_000, "rtt \(rtt) µs")
    }

    @Test func malformedAndForgedRTCPIsCountedAndDropped() throws {
        let receiver = try TestReceiver(key: Self.key)
        let (sink, _) = try makeSink(receiver)
        _ = try sendFrame(sink, receiver)
        let pli = try RTCPPictureLossIndication(sender: 1, media: sink.video.ssrc).serialized()
        try receiver.sendRaw(pli + [0, 0, 0, 0x80] + Array(repeating: 0xAB, count: 10))  // not authenticated
        try receiver.sendRaw([0x80, 0xC8, 0x00])                                          // truncated
        try receiver.sendRaw([0x80, 0x60, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0])                   // RTP, not RTCP
        var garbage = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            try receiver.sendRaw((0..<Int.random(in: 8...300, using: &garbage)).map { _ in UInt8.random(in: 0...255, using: &garbage) })
        }
        // Well authenticated but with a length running past its end.
        try receiver.sendRTCP([0x81, 0xCE, 0x00, 0x09] + Array(pli[4...]))
        #expect(Tools.waitReadable(sink.descriptors, timeout: 2), "the datagrams never reached the sink")
        let requests = try sink.service(at: MonotonicClock.now())
        #expect(!requests.keyframe, "nothing forged or malformed is acted on")
        let stats = try #require(sink.transportStats)
        #expect(stats.unauthenticatedReceived >= 1, "the forged PLI")
        #expect(stats.malformedReceived >= 3, "truncated, RTP, bad length")
        #expect(stats.unauthenticatedReceived + stats.malformedReceived == 24)
        #expect(stats.pliReceived == 0)
    }
}
