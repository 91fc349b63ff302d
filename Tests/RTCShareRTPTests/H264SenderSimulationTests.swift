import RTCShareCore
import RTCShareMedia
@testable import RTCShareRTP
import TestSupport
import Testing

/// The send core with real H.264 from openh264, in fake time and without sockets: what a NACK
/// brings back, and how soon a PLI is answered with an IDR a receiver can start from. The
/// pipeline's part (a keyframe request makes the next frame at once, as `ShareSession` does) is
/// played by the test loop.
@Suite struct H264SenderSimulationTests {
    static let width = 320, height = 240
    static let frameInterval = MediaDuration.milliseconds(50)

    final class Rig {
        let sender: RTPSender
        var encoder: H264Encoder
        let pool: FramePool
        let pattern = TestPattern(width: H264SenderSimulationTests.width, height: H264SenderSimulationTests.height)
        /// Every datagram sent, in order, with when it went.
        var sent: [(at: MediaTime, bytes: [UInt8])] = []
        var frames = 0

        init(rtx: Bool) throws {
            var c = RTPSenderConfiguration()
            c.protection = .insecure
            c.videoCodec = .h264
            c.videoPayloadType = 102
            c.rtxPayloadType = rtx ? 103 : nil
            // Without the per-send extensions a resend must be the original, byte for byte.
            c.absSendTimeID = nil
            c.transportSequenceID = nil
            let budget = try MemoryBudget(capBytes: 4 << 20)
            sender = try RTPSender(configuration: c, budget: budget, random: SeededRandom(seed: 7))
            pool = try FramePool(budget: budget, format: .i420, maxWidth: H264SenderSimulationTests.width,
                                 maxHeight: H264SenderSimulationTests.height, count: 1)
            // A small budget per frame, so IDRs take several packets (STAP-A and FU-A both).
            encoder = try H264Encoder(.init(width: H264SenderSimulationTests.width,
                                            height: H264SenderSimulationTests.height, bitrateKbps: 1500))
        }

        /// Encodes and sends the next frame at `now`.
        func sendFrame(at now: MediaTime) throws {
            var slot = try pool.acquire(format: .i420, width: pattern.width, height: pattern.height)
            slot.ptsMicroseconds = now.microseconds
            let i = frames
            slot.withMutablePixels { pattern.render(into: $0, counter: UInt32(i), captureMicros: UInt64(now.microseconds),
                                                   elapsedMicros: now.microseconds) }
            frames += 1
            let sender = self.sender
            var failure: (any Error)?
            try encoder.encode(slot) { frame in
                do {
                    try sender.sendVideo(frame.bytes, mediaTimestamp: UInt32(truncatingIfNeeded: now.microseconds * 9 / 100),
                                         orientation: .up, at: now) { bytes, _ in self.sent.append((now, Array(bytes))) }
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
        }

        /// Feeds an RTCP packet from the receiver (plain: the session is insecure).
        func feedback(_ packet: some RTCPWritable, at now: MediaTime) throws {
            var bytes = try packet.serialized()
            let count = bytes.count
            bytes += [UInt8](repeating: 0, count: 64)
            bytes.withUnsafeMutableBytes { raw in
                sender.handle(datagram: raw, count: count, at: now) { out, _ in self.sent.append((now, Array(out))) }
            }
        }
    }

    static func header(_ bytes: [UInt8]) throws -> RTPParsedPacket {
        try bytes.withUnsafeBytes { try RTPHeader.parse($0) }
    }

    @Test func aNackForH264PacketsInHistoryIsAnsweredByteIdentically() throws {
        let rig = try Rig(rtx: false)
        var now = MediaTime(microseconds: 1_000_000)
        for _ in 0..<10 {
            try rig.sendFrame(at: now)
            now = now + Self.frameInterval
        }
        // The IDR's packets (STAP-A with SPS and PPS, FU-A fragments) and a later frame's.
        let media = rig.sent.filter { !(192...223).contains($0.bytes[1]) }
        #expect(media.count >= 12, "\(media.count) packets")
        let firstTypes = Set(media.prefix(4).map { try! Self.header($0.bytes) }.enumerated().map { i, h in
            media[i].bytes[h.payloadRange.lowerBound] & 0x1F })
        #expect(firstTypes.contains(24) && firstTypes.contains(28), "the IDR goes as STAP-A and FU-A: \(firstTypes)")
        let wanted = [media[0], media[1], media[2], media[media.count - 2]]
        let sequences = try wanted.map { try Self.header($0.bytes).header.sequenceNumber }
        let before = rig.sent.count
        try rig.feedback(RTCPGenericNack(sender: 1, media: rig.sender.video.ssrc,
                                         entries: sequences.map { RTCPNackEntry(pid: $0, blp: 0) }), at: now)
        let resent = Array(rig.sent[before...])
        #expect(resent.map(\.bytes) == wanted.map(\.bytes))
        #expect(rig.sender.stats.packetsRetransmitted == 4)
    }

    @Test func withRTXTheResendCarriesTheOriginalPayloadBehindItsSequenceNumber() throws {
        let rig = try Rig(rtx: true)
        var now = MediaTime(microseconds: 1_000_000)
        for _ in 0..<3 {
            try rig.sendFrame(at: now)
            now = now + Self.frameInterval
        }
        let original = rig.sent[1].bytes
        let parsed = try Self.header(original)
        let before = rig.sent.count
        try rig.feedback(RTCPGenericNack(sender: 1, media: rig.sender.video.ssrc,
                                         entries: [RTCPNackEntry(pid: parsed.header.sequenceNumber, blp: 0)]), at: now)
        let resend = try #require(rig.sent[before...].first?.bytes)
        let r = try Self.header(resend)
        #expect(r.header.payloadType == 103)
        #expect(Array(resend[r.payloadRange]) == [UInt8(parsed.header.sequenceNumber >> 8), UInt8(parsed.header.sequenceNumber & 0xFF)]
                + Array(original[parsed.payloadRange]))
    }

    @Test func aPLIBringsAnIDRWithParameterSetsWithinOneFrameInterval() throws {
        let rig = try Rig(rtx: false)
        var now = MediaTime(microseconds: 1_000_000)
        var depacketizer = H264Depacketizer()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var assembled: [(at: MediaTime, frame: H264AssembledFrame)] = []
        var lastIDR: [UInt8] = []
        var delivered = 0
        func deliver() {
            for (at, bytes) in rig.sent[delivered...] where !(192...223).contains(bytes[1]) {
                let out = bytes.withUnsafeBytes { depacketizer.push(packet: $0, into: buffer) }
                #expect(out.dropped == nil)
                if let f = out.frame {
                    assembled.append((at, f))
                    if f.isIDR { lastIDR = Array(buffer[0..<f.byteCount]) }
                }
            }
            delivered = rig.sent.count
        }
        var pliAt: MediaTime?
        for i in 0..<20 {
            if i == 10 {
                // The PLI arrives half way between two frames.
                let at = now - MediaDuration.milliseconds(25)
                pliAt = at
                try rig.feedback(RTCPPictureLossIndication(sender: 1, media: rig.sender.video.ssrc), at: at)
                if rig.sender.takeRequests().keyframe {
                    rig.encoder.requestKeyframe(nowMicroseconds: at.microseconds)
                    try rig.sendFrame(at: at)  // the pipeline encodes the kept frame at once
                }
            }
            try rig.sendFrame(at: now)
            deliver()
            now = now + Self.frameInterval
        }
        #expect(rig.sender.stats.pliReceived == 1)
        let asked = try #require(pliAt)
        let idrs = assembled.filter { $0.frame.isIDR }
        #expect(idrs.count == 2, "the first frame and the answer to the PLI")
        let answer = try #require(idrs.last)
        #expect(answer.frame.hasParameterSets)
        #expect(answer.at - asked <= Self.frameInterval, "IDR \((answer.at - asked).microseconds / 1000) ms after the PLI")
        // A receiver that saw nothing before can start from it: a fresh decoder decodes it
        // upright with the marker of the frame kept when the PLI came (frame 10).
        let decoder = try H264Decoder()
        let marker = try lastIDR.withUnsafeBytes { bytes in
            try decoder.decode(bytes) { picture in
                let y = picture.plane(0)
                return FrameMarker.read(luma: y.base, stride: y.stride, width: y.width, rows: y.rows)?.counter
            }
        }
        #expect(marker == 10)
    }
}
