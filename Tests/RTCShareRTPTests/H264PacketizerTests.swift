@testable import RTCShareRTP
import Testing

/// RFC 6184 packetization-mode 1, byte by byte, and the round trip through the depacketizer.
@Suite struct H264PacketizerTests {
    /// Annex B from NAL units (4-byte start codes, as openh264 writes them).
    static func annexB(_ units: [[UInt8]]) -> [UInt8] { units.flatMap { [0, 0, 0, 1] + $0 } }

    /// Every packet's payload for `frame` at `maxPayload`.
    static func payloads(_ frame: [UInt8], maxPayload: Int) throws -> [(payload: [UInt8], isLast: Bool)] {
        var plan = try H264Packetizer().beginFrame(byteCount: frame.count, maxPayloadSize: maxPayload)
        var out: [([UInt8], Bool)] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        try frame.withUnsafeBytes { bytes in
            while let packet = try plan.nextPacket(in: bytes) {
                #expect(packet.payloadSize <= maxPayload)
                let n = try plan.writePayload(of: packet, frame: bytes, into: buffer)
                #expect(n == packet.payloadSize)
                out.append((Array(buffer[0..<n]), packet.isLast))
            }
        }
        return out
    }

    static let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1F, 0xDA, 0x01]  // F=0 NRI=3 type 7
    static let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]              // F=0 NRI=3 type 8
    static func idr(_ n: Int) -> [UInt8] { [0x65, 0x88] + (0..<n - 2).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) } }

    @Test func parameterSetsAndASmallIDRGoInOneSTAPA() throws {
        let slice = Self.idr(10)
        let packets = try Self.payloads(Self.annexB([Self.sps, Self.pps, slice]), maxPayload: 1100)
        #expect(packets.count == 1)
        #expect(packets[0].isLast)
        // |F=0 NRI=3 type 24| size 6 | SPS | size 4 | PPS | size 10 | IDR slice |
        // Typed, outside #expect and in parts: Swift 6.0's type checker gives up on the whole.
        var stapA: [UInt8] = [0x78, 0x00, 0x06] + Self.sps
        stapA += [0x00, 0x04] + Self.pps
        stapA += [0x00, 0x0A] + slice
        #expect(packets[0].payload == stapA)
    }

    @Test func aLargeIDRIsCutIntoBalancedFUAFragmentsAfterTheParameterSets() throws {
        let slice = Self.idr(2500)
        let packets = try Self.payloads(Self.annexB([Self.sps, Self.pps, slice]), maxPayload: 1000)
        // STAP-A(SPS, PPS), then 2499 body bytes in ceil(2499 / 998) = 3 fragments of 833.
        #expect(packets.count == 4)
        let stapA: [UInt8] = [0x78, 0x00, 0x06] + Self.sps + [0x00, 0x04] + Self.pps  // outside #expect: Swift 6.0
        #expect(packets[0].payload == stapA)
        #expect(packets.map(\.isLast) == [false, false, false, true])
        // FU indicator: F=0 NRI=3 type 28 (0x7C); FU header: S/E and type 5.
        #expect(packets[1].payload.prefix(2) == [0x7C, 0x85])
        #expect(packets[2].payload.prefix(2) == [0x7C, 0x05])
        #expect(packets[3].payload.prefix(2) == [0x7C, 0x45])
        #expect(packets[1...].map { $0.payload.count } == [835, 835, 835])
        #expect(Array(packets[1...].map { $0.payload.dropFirst(2) }.joined()) == Array(slice.dropFirst()))
    }

    @Test func aUnitThatFitsAloneGoesAsASingleNALUnitPacket() throws {
        let slice: [UInt8] = [0x41, 0x9A] + [UInt8](repeating: 0x55, count: 300)  // non-IDR, NRI 2
        let packets = try Self.payloads(Self.annexB([slice]), maxPayload: 1000)
        #expect(packets.count == 1 && packets[0].payload == slice && packets[0].isLast)
    }

    @Test func threeByteStartCodesAndTrailingZerosAreNotPartOfTheUnit() throws {
        let slice: [UInt8] = [0x41, 0x9A, 0x10]
        let frame: [UInt8] = [0, 0, 1] + Self.sps + [0, 0, 0, 0, 1] + slice + [0, 0]
        let packets = try Self.payloads(frame, maxPayload: 1000)
        #expect(packets.count == 1)
        let stapA: [UInt8] = [0x78, 0x00, 0x06] + Self.sps + [0x00, 0x03] + slice  // outside #expect: Swift 6.0
        #expect(packets[0].payload == stapA)
    }

    @Test func bytesWithoutAStartCodeAreRefused() throws {
        #expect(throws: RTPError.self) { try Self.payloads([0x41, 0x9A, 0x10], maxPayload: 1000) }
        #expect(throws: RTPError.self) { try H264Packetizer().beginFrame(byteCount: 0, maxPayloadSize: 1000) }
    }

    /// Round trip at many sizes: the depacketizer gives back the access unit, IDR and
    /// parameter sets recognised, every payload within its limit.
    @Test(arguments: [60, 200, 1100])
    func whatIsPacketizedIsReassembledExactly(maxPayload: Int) throws {
        var depacketizer = H264Depacketizer()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        var seq: UInt16 = 65_530
        for (index, units) in [[Self.sps, Self.pps, Self.idr(3000)], [[0x41, 0x9A] + [UInt8](repeating: 3, count: 90)],
                               [[0x41, 0x9A, 1], [0x41, 0x12, 2], [0x01, 0x80] + [UInt8](repeating: 7, count: 700)]]
            .enumerated() {
            let frame = Self.annexB(units)
            let packets = try Self.payloads(frame, maxPayload: maxPayload)
            var assembled: H264AssembledFrame?
            for p in packets {
                let out = p.payload.withUnsafeBytes {
                    depacketizer.push(sequenceNumber: seq, timestamp: UInt32(index * 4500), marker: p.isLast,
                                      payload: $0, into: buffer)
                }
                seq &+= 1
                #expect(out.dropped == nil)
                if let f = out.frame { assembled = f }
            }
            let frameOut = try #require(assembled)
            #expect(Array(buffer[0..<frameOut.byteCount]) == frame)
            #expect(frameOut.isIDR == (index == 0) && frameOut.hasParameterSets == (index == 0))
        }
        #expect(depacketizer.framesCompleted == 3 && depacketizer.framesDropped == 0)
    }
}

@Suite final class H264DepacketizerTests {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
    deinit { buffer.deallocate() }

    func push(_ d: inout H264Depacketizer, _ seq: UInt16, _ ts: UInt32, _ marker: Bool, _ payload: [UInt8])
        -> H264DepacketizerOutput {
        payload.withUnsafeBytes { d.push(sequenceNumber: seq, timestamp: ts, marker: marker, payload: $0, into: buffer) }
    }

    @Test func aMissingFragmentDropsTheAccessUnitOnceAndTheNextOneStillComes() {
        var d = H264Depacketizer()
        #expect(push(&d, 10, 100, false, [0x7C, 0x85, 0x80, 1, 2]).dropped == nil)
        // seq 11 lost
        #expect(push(&d, 12, 100, true, [0x7C, 0x45, 3]).dropped == .missingPacket)
        let next = push(&d, 13, 200, true, [0x41, 0x80, 9])
        #expect(next.frame?.isIDR == false && next.frame?.byteCount == 7)
        #expect(d.framesDropped == 1 && d.framesCompleted == 1)
    }

    @Test func aLostFirstPacketIsNoticedFromTheSliceHeader() {
        var d = H264Depacketizer()
        // A slice whose first_mb_in_slice is not 0 (first bit 0): the picture's start is missing.
        #expect(push(&d, 5, 300, true, [0x41, 0x20, 9]).dropped == .missingStart)
        // An FU-A middle fragment cannot start an access unit either.
        #expect(push(&d, 6, 400, false, [0x7C, 0x05, 1]).dropped == .missingStart)
        #expect(push(&d, 7, 400, true, [0x7C, 0x45, 2]).dropped == nil)
        #expect(d.framesDropped == 2 && d.framesCompleted == 0)
    }

    @Test func aMissingMarkerIsNoticedWhenTheNextAccessUnitBegins() {
        var d = H264Depacketizer()
        #expect(push(&d, 1, 100, false, [0x65, 0x88, 1]).frame == nil)
        let out = push(&d, 2, 200, true, [0x41, 0x80, 2])
        #expect(out.dropped == .missingEnd)
        #expect(out.frame?.byteCount == 7)
    }

    @Test(arguments: [
        [UInt8](),                        // empty
        [0x80, 1, 2],                     // forbidden bit
        [0x78, 0x00],                     // STAP-A cut in its first size field
        [0x78, 0x00, 0x09, 0x67, 0x42],   // STAP-A unit past the payload
        [0x78, 0x00, 0x01, 0x67, 0x00],   // STAP-A second size field cut short
        [0x78, 0x00, 0x01, 0x78],         // STAP-A inside a STAP-A
        [0x7C, 0xC5, 0x80],               // FU-A with S and E
        [0x7C, 0x9C, 1],                  // FU-A of an FU-A
        [0x79, 0, 0],                     // STAP-B (mode 2)
        [0x7D, 0x85, 1],                  // FU-B
    ])
    func malformedPayloadsAreReportedNeverTrusted(payload: [UInt8]) {
        var d = H264Depacketizer()
        let out = push(&d, 1, 100, true, payload)
        #expect(out.frame == nil)
        if case .malformed = out.dropped {} else { Issue.record("\(payload): \(String(describing: out.dropped))") }
    }

    @Test func anAccessUnitLargerThanTheBufferIsDroppedAsTooLarge() {
        var d = H264Depacketizer()
        let big = [0x65, 0x88] + [UInt8](repeating: 1, count: 5000)
        #expect(push(&d, 1, 100, true, big).dropped == .tooLarge)
    }
}
