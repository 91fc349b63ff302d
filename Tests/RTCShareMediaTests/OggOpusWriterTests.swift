import CSpeexDSP
import Foundation
import Testing
@testable import RTCShareMedia

/// The Ogg Opus file layout checked byte by byte (RFC 3533 pages, RFC 7845 headers and granule
/// positions), with the page CRC recomputed here independently of libogg. ffmpeg decoding the
/// files rtcshare writes is checked in InteropTests/AudioTests.
@Suite struct OggOpusWriterTests {
    struct Page {
        var headerType: UInt8
        var granule: Int64
        var serial: UInt32
        var sequence: UInt32
        var body: [UInt8]
        var segments: [UInt8]
    }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, not reflected, initial value 0, over the page with
    /// its CRC field zeroed (RFC 3533 §6).
    static func crc(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }

    static func pages(_ file: [UInt8]) throws -> [Page] {
        var pages: [Page] = []
        var at = 0
        func u32(_ o: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(file[o + $1]) << (8 * $1) } }
        while at < file.count {
            try #require(file.count - at >= 27 && Array(file[at..<at + 4]) == Array("OggS".utf8))
            #expect(file[at + 4] == 0)  // stream structure version
            let granule = Int64(bitPattern: UInt64(u32(at + 6)) | UInt64(u32(at + 10)) << 32)
            let count = Int(file[at + 26])
            let segments = Array(file[at + 27..<at + 27 + count])
            let bodyBytes = segments.reduce(0) { $0 + Int($1) }
            let end = at + 27 + count + bodyBytes
            try #require(end <= file.count)
            var zeroed = Array(file[at..<end])
            zeroed.replaceSubrange(22..<26, with: [0, 0, 0, 0])
            #expect(crc(zeroed) == u32(at + 22), "page \(pages.count) CRC")
            pages.append(Page(headerType: file[at + 5], granule: granule, serial: u32(at + 14), sequence: u32(at + 18),
                              body: Array(file[at + 27 + count..<end]), segments: segments))
            at = end
        }
        return pages
    }

    @Test func headersPagesGranulesAndEndOfStreamAreRight() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ogg-\(UUID().uuidString).opus").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var writer = try OggOpusWriter(path: path, channels: 2, preSkip: 312, inputSampleRate: 44_100, serial: 0x1234_5678)
        let packetCount = 100
        for i in 0..<packetCount {
            let packet = [UInt8](repeating: UInt8(i), count: 100 + i)  // framing does not look inside
            try packet.withUnsafeBytes { try writer.write(packet: $0) }
        }
        try writer.close()
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let pages = try Self.pages(file)
        try #require(pages.count >= 4)

        // Page 1: OpusHead alone, beginning of stream, granule 0.
        #expect(pages[0].headerType == 0x02 && pages[0].granule == 0 && pages[0].sequence == 0)
        // version, channels, pre-skip 312, 44100 Hz, gain 0, family 0 (typed, and outside #expect,
        // for Swift 6.0's type checker)
        let fields: [UInt8] = [1, 2, 0x38, 0x01, 0x44, 0xAC, 0, 0, 0, 0, 0]
        let opusHead: [UInt8] = Array("OpusHead".utf8) + fields
        #expect(pages[0].body == opusHead)
        // Page 2: OpusTags alone.
        #expect(pages[1].headerType == 0 && pages[1].granule == 0 && pages[1].sequence == 1)
        #expect(Array(pages[1].body[0..<8]) == Array("OpusTags".utf8))
        #expect(pages[1].body.count == 8 + 4 + "rtcshare".utf8.count + 4)
        #expect(pages.allSatisfy { $0.serial == 0x1234_5678 })
        #expect(pages.indices.allSatisfy { pages[$0].sequence == UInt32($0) })

        // Audio pages: each granule is pre-skip + 960 x the packets completed so far.
        var packets = 0
        var body: [UInt8] = []
        for page in pages.dropFirst(2) {
            packets += page.segments.filter { $0 < 255 }.count
            #expect(page.granule == 312 + Int64(packets) * 960)
            body += page.body
        }
        #expect(packets == packetCount)
        #expect(body.count == (0..<packetCount).reduce(0) { $0 + 100 + $1 })
        #expect(pages.last!.headerType == 0x04)  // end of stream
        #expect(pages.dropLast().allSatisfy { $0.headerType & 0x04 == 0 })
    }

    /// libogg mallocs its stream state; the plan reserves `plannedHeapBytes`. Measured by what
    /// libogg records it allocated (`heapBytes`) over a writer framing 10 s of the largest Opus
    /// packets: glibc's allocator statistics are process-wide, and tests running beside this
    /// one allocate too (alone, those statistics said 33 KiB: this 30 KiB and the allocator's own
    /// overhead; the plan's 48 KiB covers both).
    @Test func theWritersHeapFitsWhatThePlanReserves() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ogg-\(UUID().uuidString).ogg").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let packet = [UInt8](repeating: 0x55, count: 1_275)  // the largest Opus packet
        var writer = try OggOpusWriter(path: path, channels: 2, preSkip: 312, inputSampleRate: 48_000, serial: 7)
        let opened = writer.heapBytes
        var peak = opened
        for _ in 0..<500 {
            try packet.withUnsafeBytes { try writer.write(packet: $0) }
            peak = max(peak, writer.heapBytes)
        }
        try writer.close()
        print("Ogg Opus writer heap: \(opened) bytes open, at most \(peak)")
        #expect(opened >= 16 << 10, "libogg's body and lacing storage counted: \(opened) bytes")
        #expect(peak <= OggOpusWriter.plannedHeapBytes, "\(peak) bytes")
    }

    @Test func anUnwritablePathIsAnError() {
        #expect(throws: MediaError.self) {
            _ = try OggOpusWriter(path: "/nonexistent-dir/x.ogg", channels: 1, preSkip: 312, inputSampleRate: 48_000, serial: 1)
        }
    }
}
