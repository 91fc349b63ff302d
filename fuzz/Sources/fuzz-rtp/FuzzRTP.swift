// One RTP datagram as it comes off the socket (after SRTP unprotect): RTPHeader.parse, then what
// the receive path reads from the result — the one-byte header extensions (RFC 8285) under two
// extension maps, the VP8 payload descriptor (RFC 7741), the Opus TOC (RFC 7587) — and the
// same datagram taken as an RTX packet (RFC 4588) and unwrapped to its original.
//
// Oracles (all documented in the sources):
// - RTPParsedPacket's invariant: header ≤ extensionRange ≤ payloadRange, and
//   payloadRange.upperBound + paddingLength == packet length.
// - The fixed header and CSRCs that parse write back byte for byte (`RTPHeader.write`).
// - Extension values and VP8 descriptors round-trip by value (write, parse again, same value).
// - An unwrapped RTX packet parses, with the given SSRC and PT, the OSN as sequence number, the
//   same extension block and the payload after the OSN.

import FuzzSupport
import RTCShareRTP

@main
enum FuzzRTP {
    static func main() { runLibFuzzer(fuzzRTP) }
}

/// The IDs rtcshare negotiates by default, and a second map so every element kind is also
/// read at other IDs (one ID left unmapped in each).
private let maps: [RTPExtensionMap] = [
    try! RTPExtensionMap(absSendTime: 2, transportSequenceNumber: 3, videoOrientation: 4, mid: 1),
    try! RTPExtensionMap(absSendTime: 14, transportSequenceNumber: 1, videoOrientation: 7, mid: 9),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let packet = fuzzBytes(data, size)
    let parsed: RTPParsedPacket
    do {
        parsed = try RTPHeader.parse(packet)
    } catch {
        consumeDescription(error)
        return 0
    }
    checkLayout(parsed, packet: packet)
    checkHeaderRoundTrip(parsed.header, packet: packet)
    if parsed.extensionProfile != nil { readExtensions(parsed, packet: packet) }
    let payload = UnsafeRawBufferPointer(rebasing: packet[parsed.payloadRange])
    readVP8Descriptor(payload)
    consume(OpusPayload.samples(inPacket: payload) ?? -1)
    unwrapRTX(packet, parsed)
    return 0
}

private func unwrapRTX(_ rtx: UnsafeRawBufferPointer, _ parsed: RTPParsedPacket) {
    let ssrc: UInt32 = 0xCAFE_F00D, pt: UInt8 = 96
    let n = max(0, parsed.headerLength + parsed.payloadRange.count - 2)
    let out = UnsafeMutableRawBufferPointer.allocate(byteCount: max(n, 1), alignment: 8)
    defer { out.deallocate() }
    let m: Int
    do {
        m = try RTXPacketizer.unwrap(rtx: rtx, originalSSRC: ssrc, originalPayloadType: pt,
                                     into: UnsafeMutableRawBufferPointer(rebasing: out[..<n]))
    } catch {
        fuzzCheck(parsed.payloadRange.count < 2, "RTX with a \(parsed.payloadRange.count)-byte payload refused: \(error)")
        return
    }
    fuzzCheck(m == n, "RTX unwrapped to \(m) bytes, expected \(n)")
    let original = UnsafeRawBufferPointer(rebasing: out[..<m])
    do {
        let p = try RTPHeader.parse(original)
        let osn = UInt16(rtx[parsed.payloadRange.lowerBound]) << 8 | UInt16(rtx[parsed.payloadRange.lowerBound + 1])
        fuzzCheck(p.header.ssrc == ssrc && p.header.payloadType == pt && p.header.sequenceNumber == osn
                      && p.header.timestamp == parsed.header.timestamp && p.header.marker == parsed.header.marker
                      && p.header.csrcs == parsed.header.csrcs && !p.header.hasPadding,
                  "RTX unwrapped header \(p.header)")
        fuzzCheck(p.extensionProfile == parsed.extensionProfile && p.extensionRange == parsed.extensionRange,
                  "RTX unwrapped extension block moved")
        let rtxPayload = rtx[(parsed.payloadRange.lowerBound + 2)..<parsed.payloadRange.upperBound]
        fuzzCheck(original[p.payloadRange].elementsEqual(rtxPayload), "RTX unwrapped payload differs")
    } catch {
        fuzzCheck(false, "unwrapped RTX does not parse: \(error)")
    }
}

private func checkLayout(_ p: RTPParsedPacket, packet: UnsafeRawBufferPointer) {
    let h = p.header
    let fixed = RTPHeader.fixedSize + 4 * h.csrcs.count
    let dataStart = fixed + (h.hasExtension ? RTPHeader.extensionHeaderSize : 0)
    fuzzCheck(p.extensionRange.lowerBound == dataStart && (h.hasExtension || p.extensionRange.isEmpty),
              "extension range \(p.extensionRange) after a \(fixed)-byte header (X=\(h.hasExtension))")
    fuzzCheck(p.extensionRange.upperBound <= p.payloadRange.lowerBound,
              "extension \(p.extensionRange) overlaps payload \(p.payloadRange)")
    fuzzCheck(p.payloadRange.upperBound + p.paddingLength == packet.count,
              "payload \(p.payloadRange) + padding \(p.paddingLength) != \(packet.count)")
    fuzzCheck(p.headerLength == p.payloadRange.lowerBound, "headerLength")
    fuzzCheck((p.extensionProfile != nil) == h.hasExtension, "profile present iff X")
    fuzzCheck((p.paddingLength > 0) == h.hasPadding, "padding iff P")
    fuzzCheck(h.payloadType < 128, "payload type \(h.payloadType)")
    consume(h.sequenceNumber)
    consume(h.timestamp)
    consume(h.ssrc)
    consume(h.marker)
    for i in 0..<h.csrcs.count { consume(h.csrcs[i]) }
}

private func checkHeaderRoundTrip(_ header: RTPHeader, packet: UnsafeRawBufferPointer) {
    var out = [UInt8](repeating: 0, count: header.size)
    out.withUnsafeMutableBytes { buffer in
        do {
            let n = try header.write(into: buffer)
            fuzzCheck(n == header.size, "write returned \(n), size \(header.size)")
            fuzzCheck(buffer.elementsEqual(packet.prefix(n)), "header does not write back byte for byte")
        } catch {
            fuzzCheck(false, "a parsed header does not write: \(error)")
        }
    }
}

private func readExtensions(_ parsed: RTPParsedPacket, packet: UnsafeRawBufferPointer) {
    // The raw element walk: every element's range lies inside the block's data.
    let data = UnsafeRawBufferPointer(rebasing: packet[parsed.extensionRange])
    var reader = RTPOneByteExtensions.Reader()
    var elements = 0
    do {
        while let e = try reader.next(in: data) {
            fuzzCheck(e.range.lowerBound >= 1 && e.range.upperBound <= data.count,
                      "element \(e.id) range \(e.range) outside \(data.count) bytes")
            fuzzCheck(RTPOneByteExtensions.validIDs.contains(e.id), "element id \(e.id)")
            fuzzCheck(RTPOneByteExtensions.validDataLengths.contains(e.range.count), "element length \(e.range.count)")
            consume(UnsafeRawBufferPointer(rebasing: data[e.range]))
            elements += 1
            fuzzCheck(elements <= data.count, "reader does not advance")
        }
    } catch {
        consumeDescription(error)
    }

    for map in maps {
        let values: RTPExtensionValues
        do {
            values = try RTPExtensionValues.parse(packet: packet, parsed, map: map)
        } catch {
            consumeDescription(error)
            continue
        }
        consume(values.absSendTime ?? 0)
        consume(values.transportSequenceNumber ?? 0)
        if let mid = values.mid { consume(mid.count); consume(mid.description.utf8.count) }
        if let o = values.videoOrientation {
            consume(o.byte)
            consume(o.rotation.degrees)
            consumeDescription(o.orientation)
        }
        // Round trip: what was read writes to a block that reads back the same values.
        let n = values.size(map: map)
        guard n > 0 else { continue }
        var block = [UInt8](repeating: 0xEE, count: n)
        let again: RTPExtensionValues? = block.withUnsafeMutableBytes { b in
            do {
                let written = try values.write(into: b, map: map)
                fuzzCheck(written == n, "extension block wrote \(written), size \(n)")
                let profile = UInt16(b[0]) << 8 | UInt16(b[1])
                return try RTPExtensionValues.parse(data: UnsafeRawBufferPointer(rebasing: b[4...]),
                                                    profile: profile, map: map)
            } catch {
                fuzzCheck(false, "extension values \(values) do not round-trip: \(error)")
                return nil
            }
        }
        fuzzCheck(again == values, "extension values \(values) read back as \(String(describing: again))")
    }
}

private func readVP8Descriptor(_ payload: UnsafeRawBufferPointer) {
    let d: VP8PayloadDescriptor
    let size: Int
    do {
        (d, size) = try VP8PayloadDescriptor.parse(payload)
    } catch {
        consumeDescription(error)
        return
    }
    fuzzCheck(size >= 1 && size <= payload.count && size <= 6, "VP8 descriptor size \(size) of \(payload.count)")
    consume(UnsafeRawBufferPointer(rebasing: payload[size...]))
    consume(d.partitionIndex)
    consume(d.pictureID ?? 0xFFFF)
    // Round trip by value (the file's stated contract).
    var out = [UInt8](repeating: 0, count: d.size)
    out.withUnsafeMutableBytes { b in
        do {
            let n = try d.write(into: b)
            fuzzCheck(n == d.size && n <= size, "VP8 descriptor wrote \(n) bytes, parsed from \(size)")
            let (again, m) = try VP8PayloadDescriptor.parse(UnsafeRawBufferPointer(b))
            fuzzCheck(again == d && m == n, "VP8 descriptor \(d) read back as \(again) (\(m) bytes)")
        } catch {
            fuzzCheck(false, "VP8 descriptor \(d) does not round-trip: \(error)")
        }
    }
}
