import Testing
@testable import RTCShareRTP

/// Frame reassembly: complete frames only, every loss reported once, recovery at the next
/// frame.
@Suite struct VP8DepacketizerTests {
    /// The packets of one frame (payloads of `chunk` data bytes) as (seq, ts, marker, payload).
    private func packets(frame: [UInt8], firstSeq: UInt16, timestamp: UInt32, pictureID: UInt16,
                         maxPayload: Int = 14) throws -> [(UInt16, UInt32, Bool, [UInt8])] {
        var p = VP8Packetizer(initialPictureID: pictureID)
        let plan = try p.beginFrame(byteCount: frame.count, maxPayloadSize: maxPayload)
        return try (0..<plan.packetCount).map { i in
            let payload = try written { buf throws in
                try frame.withUnsafeBytes { f throws in try plan.writePayload(ofPacket: i, frame: f, into: buf) }
            }
            return (firstSeq &+ UInt16(i), timestamp, plan.isLast(i), payload)
        }
    }

    private struct Harness {
        var d = VP8Depacketizer()
        var buffer = [UInt8](repeating: 0, count: 100)
        mutating func push(_ p: (UInt16, UInt32, Bool, [UInt8])) -> VP8DepacketizerOutput {
            p.3.withUnsafeBytes { raw in
                buffer.withUnsafeMutableBytes { fb in
                    d.push(sequenceNumber: p.0, timestamp: p.1, marker: p.2, payload: raw, into: fb)
                }
            }
        }
    }

    private let keyframe: [UInt8] = [0x10] + Array(1...39)      // P bit 0
    private let delta: [UInt8] = [0x11] + Array(101...139)      // P bit 1

    @Test func framesAcrossSequenceWrapAreReassembled() throws {
        var h = Harness()
        let a = try packets(frame: keyframe, firstSeq: 65_533, timestamp: 1000, pictureID: 5)
        #expect(a.count == 4)  // 40 bytes in 10-byte chunks
        var outs = a.map { h.push($0) }
        let f = try #require(outs.last?.frame)
        #expect(f == VP8AssembledFrame(byteCount: 40, timestamp: 1000, isKeyframe: true, pictureID: 5,
                                       firstSequenceNumber: 65_533, lastSequenceNumber: 0))
        #expect(Array(h.buffer[..<40]) == keyframe)
        outs = try packets(frame: delta, firstSeq: 1, timestamp: 4000, pictureID: 6).map { h.push($0) }
        #expect(outs.last?.frame?.isKeyframe == false)
        #expect(Array(h.buffer[..<40]) == delta)
        #expect(outs.allSatisfy { $0.dropped == nil })
    }

    @Test func aFrameWithAMissingPacketIsRefusedAndTheNextOneComes() throws {
        var h = Harness()
        var a = try packets(frame: keyframe, firstSeq: 10, timestamp: 1000, pictureID: 1)
        a.remove(at: 2)
        let outs = a.map { h.push($0) }
        #expect(outs.allSatisfy { $0.frame == nil })
        #expect(outs.compactMap(\.dropped) == [.missingPacket])  // reported once
        let b = try packets(frame: delta, firstSeq: 14, timestamp: 4000, pictureID: 2).map { h.push($0) }
        #expect(b.last?.frame?.byteCount == 40)
        #expect(h.d.framesDropped == 1 && h.d.framesCompleted == 1)
    }

    @Test func aLostFirstPacketIsReportedAsMissingStart() throws {
        var h = Harness()
        let a = try packets(frame: keyframe, firstSeq: 10, timestamp: 1000, pictureID: 1)
        let outs = a.dropFirst().map { h.push($0) }
        #expect(outs.allSatisfy { $0.frame == nil })
        #expect(outs.compactMap(\.dropped) == [.missingStart])
    }

    @Test func aLostMarkerPacketIsNoticedWhenTheNextFrameStarts() throws {
        var h = Harness()
        let a = try packets(frame: keyframe, firstSeq: 10, timestamp: 1000, pictureID: 1)
        for p in a.dropLast() { #expect(h.push(p) == VP8DepacketizerOutput()) }
        let b = try packets(frame: delta, firstSeq: 14, timestamp: 4000, pictureID: 2)
        let first = h.push(b[0])
        #expect(first.dropped == .missingPacket)  // seq 13 (the marker packet) never came
        let outs = b.dropFirst().map { h.push($0) }
        #expect(outs.last?.frame?.firstSequenceNumber == 14)
    }

    @Test func aTimestampChangeWithoutGapEndsAFrameWithoutItsMarker() throws {
        var h = Harness()
        // A sender that forgot the marker: 2 packets, then a new frame right after.
        var a = try packets(frame: Array(keyframe[..<20]), firstSeq: 10, timestamp: 1000, pictureID: 1)
        a[a.count - 1].2 = false
        for p in a { _ = h.push(p) }
        let b = try packets(frame: Array(delta[..<10]), firstSeq: 12, timestamp: 4000, pictureID: 2)
        let out = h.push(b[0])
        #expect(out.dropped == .missingEnd)
        #expect(out.frame?.byteCount == 10)  // the new one-packet frame still comes out
    }

    @Test func aFrameLargerThanTheBufferIsRefused() throws {
        var h = Harness()
        h.buffer = [UInt8](repeating: 0, count: 25)
        let outs = try packets(frame: keyframe, firstSeq: 0, timestamp: 0, pictureID: 0).map { h.push($0) }
        #expect(outs.compactMap(\.dropped) == [.tooLarge])
        #expect(outs.allSatisfy { $0.frame == nil })
    }

    @Test func malformedPayloadsAbandonTheFrame() throws {
        var h = Harness()
        let a = try packets(frame: keyframe, firstSeq: 0, timestamp: 0, pictureID: 0)
        _ = h.push(a[0])
        let bad = h.push((1, 0, false, [0x80]))  // X=1 and nothing after
        #expect(bad.dropped == .malformed(.truncated("VP8 descriptor X byte missing")))
        let rest = a.dropFirst(2).map { h.push($0) }
        #expect(rest.allSatisfy { $0.frame == nil && $0.dropped == nil })
        // A frame start with a descriptor and no VP8 data.
        #expect(h.push((9, 5, true, [0x10])).dropped != nil)
    }
}
