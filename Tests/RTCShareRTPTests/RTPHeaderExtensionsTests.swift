import RTCShareCore
import Testing
@testable import RTCShareRTP

/// RFC 8285 one-byte extensions and the three elements: abs-send-time, transport-wide
/// sequence number, 3GPP CVO.
@Suite struct RTPHeaderExtensionsTests {
    private func elements(_ data: [UInt8]) throws -> [(UInt8, [UInt8])] {
        try data.withUnsafeBytes { (raw) throws in
            var reader = RTPOneByteExtensions.Reader()
            var out: [(UInt8, [UInt8])] = []
            while let e = try reader.next(in: raw) { out.append((e.id, Array(raw[e.range]))) }
            return out
        }
    }

    @Test func blockByteTableWithAllThreeElements() throws {
        let map = try RTPExtensionMap(absSendTime: 3, transportSequenceNumber: 5, videoOrientation: 14)
        let values = RTPExtensionValues(absSendTime: 0x12_3456, transportSequenceNumber: 0xABCD,
                                        videoOrientation: RTPVideoOrientation(orientation: .right))
        let bytes = try written { buf throws in try values.write(into: buf, map: map) }
        #expect(bytes == [
            0xBE, 0xDE, 0x00, 0x03, // profile 0xBEDE, 3 words
            0x32, 0x12, 0x34, 0x56, // id 3, L=2 (3 bytes): abs-send-time
            0x51, 0xAB, 0xCD,       // id 5, L=1 (2 bytes): transport-wide seq
            0xE0, 0x01,             // id 14, L=0 (1 byte): CVO, rotate 90° CW
            0x00, 0x00, 0x00,       // padding to 12 bytes
        ])
        #expect(values.size(map: map) == bytes.count)
        let back = try bytes.withUnsafeBytes { raw throws in
            try RTPExtensionValues.parse(data: UnsafeRawBufferPointer(rebasing: raw[4...]), profile: 0xBEDE, map: map)
        }
        #expect(back == values)
    }

    /// A retransmission gets a fresh transport-wide sequence number and send time in place;
    /// the header, the CVO element and the payload stay as they were.
    @Test func rewriteSendElementsChangesOnlyThePerSendValues() throws {
        let map = try RTPExtensionMap(absSendTime: 3, transportSequenceNumber: 5, videoOrientation: 14)
        let values = RTPExtensionValues(absSendTime: 0x12_3456, transportSequenceNumber: 0xABCD,
                                        videoOrientation: RTPVideoOrientation(orientation: .right))
        let block = try written { buf throws in try values.write(into: buf, map: map) }
        // V=2, X=1, PT 96, seq 0x0102, ts, ssrc; then the block, then a 4-byte payload.
        var packet: [UInt8] = [0x90, 96, 0x01, 0x02, 0, 0, 0, 9, 0xCA, 0xFE, 0xBA, 0xBE] + block + [1, 2, 3, 4]
        var expected = packet
        let wrote = try packet.withUnsafeMutableBytes { raw throws in
            try RTPExtensionValues.rewriteSendElements(packet: raw, length: raw.count, map: map,
                                                       transportSequenceNumber: 0x0102, absSendTime: 0x65_4321)
        }
        #expect(wrote)
        expected[12 + 5...12 + 7] = [0x65, 0x43, 0x21]
        expected[12 + 9...12 + 10] = [0x01, 0x02]
        #expect(packet == expected)
        // No extension block: nothing to write, nothing changed.
        var bare: [UInt8] = [0x80, 96, 0, 1, 0, 0, 0, 9, 0xCA, 0xFE, 0xBA, 0xBE, 7]
        let before = bare
        let wroteBare = try bare.withUnsafeMutableBytes { raw throws in
            try RTPExtensionValues.rewriteSendElements(packet: raw, length: raw.count, map: map,
                                                       transportSequenceNumber: 1, absSendTime: 1)
        }
        #expect(!wroteBare && bare == before)
    }

    @Test func nothingMappedWritesNoBlock() throws {
        let values = RTPExtensionValues(absSendTime: 1)
        #expect(values.size(map: .none) == 0)
        #expect(try written { buf throws in try values.write(into: buf, map: .none) } == [])
        #expect(RTPExtensionValues().size(map: try RTPExtensionMap(absSendTime: 1)) == 0)
    }

    @Test func readerSkipsPaddingStopsAtID15AndIgnoresUnknownOrWrongLength() throws {
        let data: [UInt8] = [
            0x00, 0x00,             // padding between elements
            0x10, 0x07,             // id 1, 1 byte
            0x00,                   // padding
            0x2F] + [UInt8](1...16) + [ // id 2, 16 bytes (largest)
            0x51, 0x00, 0x09,       // id 5, 2 bytes
            0xF3,                   // id 15: stop
            0x40, 0x01,             // never read
        ]
        let list = try elements(data)
        #expect(list.map(\.0) == [1, 2, 5])
        #expect(list[1].1 == [UInt8](1...16))
        // id 1 is mapped to abs-send-time but has 1 byte, not 3: ignored, not an error.
        let map = try RTPExtensionMap(absSendTime: 1, transportSequenceNumber: 5)
        let values = try data.withUnsafeBytes { raw throws in
            try RTPExtensionValues.parse(data: raw, profile: 0xBEDE, map: map)
        }
        #expect(values == RTPExtensionValues(transportSequenceNumber: 9))
        // A two-byte-header block (profile 0x1000) is not read.
        let other = try data.withUnsafeBytes { raw throws in
            try RTPExtensionValues.parse(data: raw, profile: 0x1000, map: map)
        }
        #expect(other == RTPExtensionValues())
    }

    @Test func readerRefusesAnElementPastTheEnd() {
        #expect(throws: RTPError.truncated("one-byte extension id 2 of 4 bytes at 1 past end 4")) {
            try elements([0x23, 0x01, 0x02, 0x03])
        }
    }

    @Test func mapRefusesBadOrDuplicateIDs() {
        #expect(throws: RTPError.self) { try RTPExtensionMap(absSendTime: 0) }
        #expect(throws: RTPError.self) { try RTPExtensionMap(absSendTime: 15) }
        #expect(throws: RTPError.self) { try RTPExtensionMap(absSendTime: 4, videoOrientation: 4) }
    }

    @Test func writeElementAndFinishBlock() throws {
        let bytes = try written { buf throws in
            var o = 4
            o = try ([0xAA, 0xBB] as [UInt8]).withUnsafeBytes { d throws in
                try RTPOneByteExtensions.writeElement(id: 7, data: d, into: buf, at: o)
            }
            return try RTPOneByteExtensions.finishBlock(dataBytes: o - 4, in: buf)
        }
        #expect(bytes == [0xBE, 0xDE, 0x00, 0x01, 0x71, 0xAA, 0xBB, 0x00])
        #expect(throws: RTPError.self) {
            _ = try written { buf throws in
                try [UInt8](repeating: 0, count: 17).withUnsafeBytes { d throws in
                    try RTPOneByteExtensions.writeElement(id: 7, data: d, into: buf, at: 4)
                }
            }
        }
    }

    // MARK: abs-send-time: 6.18 fixed point seconds, 24 bits, wraps every 64 s.

    @Test(arguments: [
        (Int64(0), UInt32(0)),
        (1_000_000, 0x04_0000),         // 1 s = 2^18
        (500_000, 0x02_0000),           // 0.5 s = 2^17
        (100_000, 0x00_6666),           // 0.1 s x 2^18 = 26214.4 → 26214
        (1, 0),                         // 0.26 units → 0
        (2, 1),                         // 0.52 units → 1
        (63_500_000, 0xFE_0000),        // 63.5 s x 2^18 = 16646144
        (64_000_000, 0),                // the wrap
        (65_000_000, 0x04_0000),        // 65 s ≡ 1 s
        (-1_000_000, 0xFC_0000),        // -1 s ≡ 63 s
        (63_999_999, 0),                // 16777215.74 units → 2^24 → wraps to 0
    ])
    func absSendTimeEncodes(microseconds: Int64, value: UInt32) {
        #expect(AbsSendTime.value(microseconds: microseconds) == value)
    }

    @Test func absSendTimeDecodesWithinOneUnit() {
        #expect(AbsSendTime.microseconds(0x04_0000) == 1_000_000)
        #expect(AbsSendTime.microseconds(1) == 4)  // 3.81 µs
        for us in stride(from: Int64(0), to: 64_000_000, by: 999_983) {
            #expect(abs(AbsSendTime.microseconds(AbsSendTime.value(microseconds: us)) - us) <= 2)
        }
    }

    // MARK: CVO

    /// (EXIF orientation, CVO byte) from the table in `RTPVideoOrientation`'s documentation,
    /// derived from TS 26.114 table 7.2 (R = clockwise turn the receiver applies) with the
    /// receiver mirroring before it turns.
    static let cvoTable: [(Orientation, UInt8)] = [
        (.up, 0x00), (.upMirrored, 0x04), (.down, 0x02), (.downMirrored, 0x06),
        (.leftMirrored, 0x07), (.right, 0x01), (.rightMirrored, 0x05), (.left, 0x03),
    ]

    @Test func allEightOrientationsMapToCVOAndBack() {
        for (orientation, byte) in Self.cvoTable {
            let cvo = RTPVideoOrientation(orientation: orientation)
            #expect(cvo.byte == byte, "\(orientation)")
            #expect(RTPVideoOrientation(byte: byte).orientation == orientation)
            #expect(RTPVideoOrientation(orientation: orientation, backFacingCamera: true).byte == byte | 0x08)
        }
        #expect(Set(Self.cvoTable.map(\.1)).count == 8)
    }

    /// The mapping agrees with pixel geometry: applying "mirror, then turn R x 90° clockwise"
    /// to a picture stored with orientation N gives the upright picture. Checked on the
    /// corners of a 2x3 picture, with EXIF's definitions of N as what the stored pixels are.
    @Test func cvoCorrectionUndoesTheExifOrientation() {
        typealias P = (x: Int, y: Int)
        // Where the upright pixel (x, y) of a w x h picture lies in the stored picture.
        func stored(_ o: Orientation, _ p: P, w: Int, h: Int) -> P {
            switch o {
            case .up: p
            case .upMirrored: (w - 1 - p.x, p.y)
            case .down: (w - 1 - p.x, h - 1 - p.y)
            case .downMirrored: (p.x, h - 1 - p.y)
            case .leftMirrored: (p.y, p.x)                       // transposed
            case .right: (p.y, w - 1 - p.x)                       // stored turned 90° CCW
            case .rightMirrored: (h - 1 - p.y, w - 1 - p.x)       // transversed
            case .left: (h - 1 - p.y, p.x)                        // stored turned 90° CW
            }
        }
        // The receiver's correction of a stored sw x sh picture: mirror, then turn clockwise.
        func correct(_ p: P, sw: Int, sh: Int, _ cvo: RTPVideoOrientation) -> P {
            var q = cvo.flip ? (x: sw - 1 - p.x, y: p.y) : p
            var (w, h) = (sw, sh)
            for _ in 0..<Int(cvo.rotation.rawValue) {  // one 90° CW turn: (x, y) → (h-1-y, x)
                q = (h - 1 - q.y, q.x)
                (w, h) = (h, w)
            }
            return q
        }
        let (w, h) = (2, 3)
        for o in Orientation.allCases {
            let (sw, sh) = o.swapsAxes ? (h, w) : (w, h)
            for y in 0..<h {
                for x in 0..<w {
                    let s = stored(o, (x, y), w: w, h: h)
                    let back = correct(s, sw: sw, sh: sh, RTPVideoOrientation(orientation: o))
                    #expect(back.x == x && back.y == y, "orientation \(o.rawValue)")
                }
            }
        }
    }

    @Test func cvoByteRoundTripsItsLowNibble() {
        for b in UInt8(0)...0xFF {
            #expect(RTPVideoOrientation(byte: b).byte == b & 0x0F)
        }
    }
}
