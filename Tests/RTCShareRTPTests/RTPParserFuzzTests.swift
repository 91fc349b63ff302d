import TestSupport
import Testing
@testable import RTCShareRTP

/// Random and mutated bytes into every parser of this layer: none traps, and what parses
/// writes back consistently (the oracle). Seeded, so a failure reproduces.
@Suite struct RTPParserFuzzTests {
    /// Valid packets to mutate: plain, CSRCs, extensions, padding, RTX-like.
    static func corpus() throws -> [[UInt8]] {
        let map = try RTPExtensionMap(absSendTime: 2, transportSequenceNumber: 3, videoOrientation: 4)
        var s = RTPStream(ssrc: 7, payloadType: 96, clockRate: 90_000, initialSequenceNumber: 1, timestampOffset: 0)
        var out: [[UInt8]] = []
        for ext in [RTPExtensionValues(), RTPExtensionValues(absSendTime: 0x12_3456),
                    RTPExtensionValues(absSendTime: 1, transportSequenceNumber: 2,
                                       videoOrientation: RTPVideoOrientation(orientation: .rightMirrored))] {
            for payload: [UInt8] in [[0x90, 0x80, 0x80, 0x01, 0x10, 0x02, 0x00], [0x10, 0x11], [0xB3, 0xF0, 0x7F, 0x42, 0xE5, 0]] {
                out.append(try written { buf throws in
                    try payload.withUnsafeBytes { p throws in
                        try s.writePacket(into: buf, timestamp: 3000, marker: true, extensions: ext, map: map, payload: p)
                    }
                })
            }
        }
        out.append([0xA2, 0x08, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0xAA, 0xBB, 0, 0, 3])
        out.append([0x90, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0x10, 0x00, 0x00, 0x01, 0x01, 0x00, 0x02, 0x03, 0x10])
        return out
    }

    /// Every oracle on one input; returns whether the RTP header parsed.
    @discardableResult
    static func check(_ bytes: [UInt8]) -> Bool {
        let map = try! RTPExtensionMap(absSendTime: 2, transportSequenceNumber: 3, videoOrientation: 4)
        // VP8 descriptor and Opus TOC on the raw bytes.
        if let (d, size) = try? bytes.withUnsafeBytes({ raw throws in try VP8PayloadDescriptor.parse(raw) }) {
            #expect(d.size <= size)
            let again = try? written { buf throws in try d.write(into: buf) }
            #expect(again?.count == d.size)
            let reparsed = again.flatMap { a in
                try? a.withUnsafeBytes { raw throws in try VP8PayloadDescriptor.parse(raw) }
            }
            #expect(reparsed?.0 == d, "VP8 descriptor round trip for \(bytes)")
        }
        if let n = bytes.withUnsafeBytes({ OpusPayload.samples(inPacket: $0) }) { #expect(n > 0 && n <= 5760) }

        guard let p = try? parseRTP(bytes) else { return false }
        // Ranges are ordered and inside the bytes.
        #expect(p.header.size <= p.extensionRange.lowerBound)
        #expect(p.extensionRange.upperBound <= p.payloadRange.lowerBound)
        #expect(p.payloadRange.upperBound + p.paddingLength == bytes.count)
        // The header writes back to the same bytes.
        let header = try? written { buf throws in try p.header.write(into: buf) }
        #expect(header == Array(bytes[..<p.header.size]), "RTP header round trip for \(bytes)")
        // Extension elements: rewritten elements read back the same.
        if p.extensionProfile == RTPOneByteExtensions.profile {
            let data = Array(bytes[p.extensionRange])
            if let list = try? elements(data) {
                let block = try? written { buf throws in
                    var o = 4
                    for (id, value) in list {
                        o = try value.withUnsafeBytes { v throws in
                            try RTPOneByteExtensions.writeElement(id: id, data: v, into: buf, at: o)
                        }
                    }
                    return try RTPOneByteExtensions.finishBlock(dataBytes: o - 4, in: buf)
                }
                if let block {
                    let again = try? elements(Array(block[4...]))
                    #expect(again.map { $0.map(\.0) } == list.map(\.0))
                    #expect(again.map { $0.map(\.1) } == list.map(\.1))
                }
                let values = try? bytes.withUnsafeBytes { raw throws in
                    try RTPExtensionValues.parse(packet: raw, p, map: map)
                }
                #expect(values != nil)
            }
        }
        // RTX: whatever unwraps is an RTP packet with the payload minus the OSN; and wrapping
        // it again gives the same size.
        if let orig = try? written(capacity: 4096, { buf throws in
            try bytes.withUnsafeBytes { r throws in
                try RTXPacketizer.unwrap(rtx: r, originalSSRC: 1, originalPayloadType: 96, into: buf)
            }
        }) {
            let o = try? parseRTP(orig)
            #expect(o?.payloadRange.count == p.payloadRange.count - 2)
            var rtx = RTXPacketizer(ssrc: p.header.ssrc, payloadType: p.header.payloadType,
                                    initialSequenceNumber: p.header.sequenceNumber)
            let again = try? written(capacity: 4096) { buf throws in
                try orig.withUnsafeBytes { r throws in try rtx.write(original: r, into: buf) }
            }
            #expect(again?.count == bytes.count - p.paddingLength)
        }
        return true
    }

    static func elements(_ data: [UInt8]) throws -> [(UInt8, [UInt8])] {
        try data.withUnsafeBytes { (raw) throws in
            var reader = RTPOneByteExtensions.Reader()
            var out: [(UInt8, [UInt8])] = []
            while let e = try reader.next(in: raw) { out.append((e.id, Array(raw[e.range]))) }
            return out
        }
    }

    @Test func randomBytesNeverTrap() {
        var rng = SeededRandom(seed: 0x3550)
        var parsed = 0
        for _ in 0..<4000 {
            var bytes = rng.bytes(Int.random(in: 0..<80, using: &rng))
            if !bytes.isEmpty, Bool.random(using: &rng) { bytes[0] = 0x80 | bytes[0] & 0x3F }  // version 2
            if Self.check(bytes) { parsed += 1 }
        }
        #expect(parsed > 200)
    }

    @Test func mutatedValidPacketsNeverTrap() throws {
        var rng = SeededRandom(seed: 0x8285)
        let corpus = try Self.corpus()
        for c in corpus { #expect(Self.check(c)) }
        var parsed = 0
        for _ in 0..<4000 {
            if Self.check(rng.mutate(corpus.randomElement(using: &rng)!)) { parsed += 1 }
        }
        #expect(parsed > 1000)
    }

    @Test func theDepacketizerSurvivesGarbageAndStillAssembles() throws {
        var rng = SeededRandom(seed: 0x7741)
        let corpus = try Self.corpus()
        var d = VP8Depacketizer()
        var frame = [UInt8](repeating: 0, count: 256)
        for _ in 0..<3000 {
            let bytes = Bool.random(using: &rng) ? rng.mutate(corpus.randomElement(using: &rng)!)
                                                  : rng.bytes(Int.random(in: 0..<64, using: &rng))
            let out = bytes.withUnsafeBytes { raw in frame.withUnsafeMutableBytes { d.push(packet: raw, into: $0) } }
            if let f = out.frame { #expect(f.byteCount <= frame.count) }
        }
        // After all that, a clean frame still comes through.
        var p = VP8Packetizer(initialPictureID: 1)
        let plan = try p.beginFrame(byteCount: 3, maxPayloadSize: 100)
        let payload = try written { buf throws in
            try ([0x10, 0x02, 0x03] as [UInt8]).withUnsafeBytes { f throws in try plan.writePayload(ofPacket: 0, frame: f, into: buf) }
        }
        let out = payload.withUnsafeBytes { raw in
            frame.withUnsafeMutableBytes { d.push(sequenceNumber: 9, timestamp: 0xABCD, marker: true, payload: raw, into: $0) }
        }
        #expect(out.frame?.byteCount == 3 && out.frame?.isKeyframe == true)
    }
}
