import TestSupport
import Testing
@testable import RTCShareRTP

/// RFC 7741 packetization: descriptor byte tables, balanced sizes, S/M bits and PictureID,
/// and packetize → depacketize giving the frame back at several MTUs.
@Suite struct VP8PacketizerTests {
    private func descriptor(_ bytes: [UInt8]) throws -> (VP8PayloadDescriptor, size: Int) {
        try bytes.withUnsafeBytes { (raw) throws in try VP8PayloadDescriptor.parse(raw) }
    }

    @Test func descriptorByteTables() throws {
        // What the packetizer writes on a first packet.
        let first = try descriptor([
            0x90,       // X=1, N=0, S=1, PID=0
            0x80,       // I=1, L=0, T=0, K=0
            0x81, 0x23, // M=1, PictureID 0x0123
        ])
        #expect(first.size == 4)
        #expect(first.0 == VP8PayloadDescriptor(startOfPartition: true, pictureID: 0x123))
        // Everything optional present, 7-bit PictureID.
        let full = try descriptor([
            0xB3,       // X=1, N=1, S=1, PID=3
            0xF0,       // I=1, L=1, T=1, K=1
            0x7F,       // M=0, PictureID 127
            0x42,       // TL0PICIDX 0x42
            0xE5,       // TID=3, Y=1, KEYIDX=5
        ])
        #expect(full.size == 5)
        #expect(full.0 == VP8PayloadDescriptor(nonReference: true, startOfPartition: true, partitionIndex: 3,
                                               pictureID: 127, longPictureID: false, tl0PicIndex: 0x42,
                                               temporalLayer: 3, layerSync: true, keyIndex: 5))
        let rewritten = try written { buf throws in try full.0.write(into: buf) }
        #expect(rewritten == [0xB3, 0xF0, 0x7F, 0x42, 0xE5])
        // No extension byte: one byte.
        let minimal = try descriptor([0x10, 0x9D])
        #expect(minimal.size == 1)
        #expect(minimal.0 == VP8PayloadDescriptor(startOfPartition: true))
        // K without T: TID and Y are not read.
        let keyOnly = try descriptor([0x80, 0x10, 0xFF])
        #expect(keyOnly.0.temporalLayer == nil && keyOnly.0.keyIndex == 31 && !keyOnly.0.layerSync)
    }

    @Test func descriptorRefusesCutFields() {
        #expect(throws: RTPError.self) { try descriptor([]) }
        #expect(throws: RTPError.self) { try descriptor([0x80]) }
        #expect(throws: RTPError.self) { try descriptor([0x80, 0x80]) }
        #expect(throws: RTPError.self) { try descriptor([0x80, 0x80, 0x80]) }
        #expect(throws: RTPError.self) { try descriptor([0x80, 0x40]) }
        #expect(throws: RTPError.self) { try descriptor([0x80, 0x20]) }
    }

    @Test func sizesAreBalancedAndFit() throws {
        var p = VP8Packetizer(initialPictureID: 0)
        // 2500 bytes with 1000-byte payloads (996 of data): 3 packets of 834, 833, 833.
        let plan = try p.beginFrame(byteCount: 2500, maxPayloadSize: 1000)
        #expect(plan.packetCount == 3)
        #expect((0..<3).map { plan.frameRange(ofPacket: $0).count } == [834, 833, 833])
        #expect(plan.frameRange(ofPacket: 2) == 1667..<2500)
        for n in [1, 995, 996, 997, 1992, 1993, 100_000] {
            for maxPayload in [5, 6, 100, 1000, 1172] {
                let plan = try p.beginFrame(byteCount: n, maxPayloadSize: maxPayload)
                let sizes = (0..<plan.packetCount).map { plan.payloadSize(ofPacket: $0) }
                #expect(sizes.allSatisfy { $0 <= maxPayload })
                #expect(sizes.max()! - sizes.min()! <= 1)
                #expect(sizes.reduce(0, +) == n + 4 * plan.packetCount)
                // No fewer packets than needed.
                #expect(plan.packetCount == (n + maxPayload - 5) / (maxPayload - 4))
            }
        }
        #expect(throws: RTPError.self) { try p.beginFrame(byteCount: 0, maxPayloadSize: 1000) }
        #expect(throws: RTPError.self) { try p.beginFrame(byteCount: 10, maxPayloadSize: 4) }
    }

    @Test func pictureIDIncrementsPerFrameAndWraps() throws {
        var p = VP8Packetizer(initialPictureID: 0x7FFE)
        #expect(try p.beginFrame(byteCount: 10, maxPayloadSize: 100).pictureID == 0x7FFE)
        #expect(try p.beginFrame(byteCount: 10, maxPayloadSize: 100).pictureID == 0x7FFF)
        #expect(try p.beginFrame(byteCount: 10, maxPayloadSize: 100).pictureID == 0)
        #expect(p.nextPictureID == 1)
        #expect(VP8Packetizer(initialPictureID: 0xFFFF).nextPictureID == 0x7FFF)
    }

    @Test func randomFramesSurvivePacketizeDepacketizeAtSeveralMTUs() throws {
        var rng = SeededRandom(seed: 0x7741)
        var stream = RTPStream(ssrc: 0x1234_5678, payloadType: 96, clockRate: 90_000,
                               initialSequenceNumber: 65_530, timestampOffset: 0xFFFF_FF00)
        var packetizer = VP8Packetizer(initialPictureID: 0x7FF0)
        var depacketizer = VP8Depacketizer()
        let map = try RTPExtensionMap(absSendTime: 2, transportSequenceNumber: 3)
        var frameBuffer = [UInt8](repeating: 0, count: 64 * 1024)
        var packet = [UInt8](repeating: 0, count: 1500)
        var lastPictureID: UInt16?
        var twcc: UInt16 = 0
        for frameIndex in 0..<60 {
            let mtu = [200, 576, 1200, 1500][frameIndex % 4]
            // UDP payload minus RTP header, the extension block and a 16-byte SRTP tag.
            let extensions = RTPExtensionValues(absSendTime: 0, transportSequenceNumber: 0)
            let maxPayload = mtu - stream.headerSize(extensions: extensions, map: map) - 16
            let length = [1, 3, Int.random(in: 1...30_000, using: &rng)][frameIndex % 3]
            var frame = rng.bytes(length)
            let keyframe = frameIndex % 10 == 0
            frame[0] = keyframe ? frame[0] & 0xFE : frame[0] | 0x01  // P bit
            let capture = Int64(frameIndex) * 50_000
            let plan = try packetizer.beginFrame(byteCount: length, maxPayloadSize: maxPayload)
            if let last = lastPictureID { #expect(plan.pictureID == (last + 1) & 0x7FFF) }
            lastPictureID = plan.pictureID
            var got: VP8AssembledFrame?
            for i in 0..<plan.packetCount {
                let size = try packet.withUnsafeMutableBytes { buf throws -> Int in
                    let values = RTPExtensionValues(absSendTime: AbsSendTime.value(microseconds: capture),
                                                    transportSequenceNumber: twcc)
                    let h = try stream.writeHeader(into: buf, timestamp: stream.timestamp(captureMicroseconds: capture),
                                                   marker: plan.isLast(i), extensions: values, map: map,
                                                   payloadSize: plan.payloadSize(ofPacket: i))
                    let n = try frame.withUnsafeBytes { f throws in
                        try plan.writePayload(ofPacket: i, frame: f, into: UnsafeMutableRawBufferPointer(rebasing: buf[h...]))
                    }
                    return h + n
                }
                twcc &+= 1
                #expect(size + 16 <= mtu)
                let bytes = Array(packet[..<size])
                let parsed = try parseRTP(bytes)
                #expect(parsed.header.marker == plan.isLast(i))
                let (d, _) = try descriptor(Array(bytes[parsed.payloadRange]))
                #expect(d.startOfPartition == (i == 0))
                #expect(d.partitionIndex == 0 && d.pictureID == plan.pictureID && d.longPictureID)
                let out = bytes.withUnsafeBytes { raw in
                    frameBuffer.withUnsafeMutableBytes { fb in depacketizer.push(packet: raw, into: fb) }
                }
                #expect(out.dropped == nil)
                if i < plan.packetCount - 1 { #expect(out.frame == nil) } else { got = out.frame }
            }
            let f = try #require(got)
            #expect(f.byteCount == length)
            #expect(Array(frameBuffer[..<f.byteCount]) == frame)
            #expect(f.isKeyframe == keyframe)
            #expect(f.pictureID == plan.pictureID)
            #expect(f.timestamp == stream.timestamp(captureMicroseconds: capture))
        }
        #expect(depacketizer.framesCompleted == 60 && depacketizer.framesDropped == 0)
        #expect(lastPictureID! < 0x7FF0)  // wrapped past 0x7FFF
    }
}
