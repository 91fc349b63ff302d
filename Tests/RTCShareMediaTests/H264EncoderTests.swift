import RTCShareCore
import Testing

@testable import RTCShareMedia

/// openh264 through `H264Encoder` and back through `H264Decoder`: the test pattern's frame
/// marker survives the round trip, IDRs come when asked and carry SPS and PPS.
@Suite struct H264EncoderTests {
    /// NAL unit types of an Annex B access unit, in order.
    static func nalTypes(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var types: [UInt8] = []
        var i = 0
        while i + 3 < bytes.count {
            if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 1 {
                types.append(bytes[i + 3] & 0x1F)
                i += 3
            } else {
                i += 1
            }
        }
        return types
    }

    final class Rig {
        let pool: FramePool
        let pattern: TestPattern
        init(width: Int, height: Int) throws {
            let budget = try MemoryBudget(capBytes: PixelFormat.i420.bytes(width: width, height: height)! * 2 + (1 << 20))
            pool = try FramePool(budget: budget, format: .i420, maxWidth: width, maxHeight: height, count: 2)
            pattern = TestPattern(width: width, height: height)
        }
        func frame(_ i: Int) throws -> FrameSlot {
            var slot = try pool.acquire(format: .i420, width: pattern.width, height: pattern.height)
            slot.ptsMicroseconds = Int64(i) * 50_000
            slot.withMutablePixels { pattern.render(into: $0, counter: UInt32(i), captureMicros: UInt64(i) * 50_000,
                                                   elapsedMicros: Int64(i) * 50_000) }
            return slot
        }
    }

    @Test(arguments: [(640, 360), (320, 240)])
    func theFrameMarkerSurvivesEncodingAndDecoding(width: Int, height: Int) throws {
        let rig = try Rig(width: width, height: height)
        var encoder = try H264Encoder(.init(width: width, height: height, bitrateKbps: 800))
        let decoder = try H264Decoder()
        var counters: [UInt32] = []
        var types: [[UInt8]] = []
        for i in 0..<40 {
            let slot = try rig.frame(i)
            try encoder.encode(slot) { frame in
                types.append(Self.nalTypes(frame.bytes))
                #expect(frame.isKeyframe == (i == 0))
                #expect(frame.ptsMicroseconds == slot.ptsMicroseconds)
                _ = try? decoder.decode(frame.bytes) { picture in
                    #expect(picture.width == width && picture.height == height)
                    let y = picture.plane(0)
                    if let marker = FrameMarker.read(luma: y.base, stride: y.stride, width: y.width, rows: y.rows) {
                        counters.append(marker.counter)
                    }
                }
            }
        }
        #expect(types.first == [7, 8, 5], "the first access unit is SPS, PPS, IDR slice: \(types.first ?? [])")
        #expect(types.dropFirst().allSatisfy { $0 == [1] }, "then one non-IDR slice each")
        #expect(counters.count >= 38, "markers read back: \(counters.count)")
        #expect(counters == counters.sorted() && Set(counters).count == counters.count)
        #expect(encoder.stats.keyframesOut == 1)
    }

    /// Screen-content mode up to 1280x720; above it openh264's camera mode (its screen mode's
    /// feature tables are ~31 MiB at 1080p), which still carries the picture back intact.
    @Test func picturesAbove720pAreCodedInCameraModeAndRoundTrip() throws {
        typealias Configuration = H264Encoder.Configuration
        #expect(Configuration(width: 1280, height: 720, bitrateKbps: 1500).contentModeIsScreen)
        #expect(Configuration(width: 720, height: 1280, bitrateKbps: 1500).contentModeIsScreen)
        #expect(!Configuration(width: 1282, height: 720, bitrateKbps: 1500).contentModeIsScreen)
        #expect(!Configuration(width: 1920, height: 1080, bitrateKbps: 1500).contentModeIsScreen)
        var camera = Configuration(width: 640, height: 360, bitrateKbps: 800)
        camera.screenContent = false
        #expect(!camera.contentModeIsScreen)

        let (width, height) = (1600, 900)
        let rig = try Rig(width: width, height: height)
        var encoder = try H264Encoder(.init(width: width, height: height, bitrateKbps: 3000))
        let decoder = try H264Decoder()
        var counters: [UInt32] = []
        for i in 0..<12 {
            let slot = try rig.frame(i)
            try encoder.encode(slot) { frame in
                _ = try? decoder.decode(frame.bytes) { picture in
                    #expect(picture.width == width && picture.height == height)
                    let y = picture.plane(0)
                    if let marker = FrameMarker.read(luma: y.base, stride: y.stride, width: y.width, rows: y.rows) {
                        counters.append(marker.counter)
                    }
                }
            }
        }
        #expect(counters.count >= 10, "markers read back: \(counters.count) of \(encoder.stats.framesOut) frames")
        #expect(counters == counters.sorted() && Set(counters).count == counters.count)
    }

    @Test func aRequestedIDRComesNextWithParameterSetsAndASecondRequestTooSoonDoesNot() throws {
        let rig = try Rig(width: 320, height: 240)
        var encoder = try H264Encoder(.init(width: 320, height: 240, bitrateKbps: 500))
        var idrs: [Int] = []
        var withParameterSets: [Int] = []
        for i in 0..<20 {
            if i == 5 { #expect(encoder.requestKeyframe(nowMicroseconds: 1_000_000) == .accepted) }
            if i == 6 { #expect(encoder.requestKeyframe(nowMicroseconds: 1_100_000) == .rateLimited) }
            if i == 12 { #expect(encoder.requestKeyframe(nowMicroseconds: 2_000_000) == .accepted) }
            try encoder.encode(try rig.frame(i)) { frame in
                if frame.isKeyframe { idrs.append(i) }
                if Self.nalTypes(frame.bytes).prefix(2) == [7, 8] { withParameterSets.append(i) }
            }
        }
        #expect(idrs == [0, 5, 12])
        #expect(withParameterSets == idrs)
        #expect(encoder.stats.keyframeRequestsLimited == 1)
    }

    @Test func theBitrateFollowsTheControllerAndBadValuesAreRefused() throws {
        var encoder = try H264Encoder(.init(width: 320, height: 240, bitrateKbps: 500))
        try encoder.setBitrate(kbps: 1200)
        try encoder.setBitrate(kbps: 200)
        #expect(encoder.configuration.bitrateKbps == 200)
        #expect(throws: MediaError.self) { try encoder.setBitrate(kbps: 0) }
        #expect(throws: MediaError.self) { try H264Encoder(.init(width: 321, height: 240, bitrateKbps: 500)) }
    }

    @Test func bothCodecsSitBehindOneVideoEncoder() throws {
        let rig = try Rig(width: 320, height: 240)
        for codec in VideoCodec.allCases {
            var encoder = try VideoEncoder(codec: codec, width: 320, height: 240, bitrateKbps: 600, frameRate: 20)
            #expect(encoder.codec == codec)
            var keyframes = 0
            for i in 0..<6 {
                if i == 3 { encoder.forceKeyframe(nowMicroseconds: 0) }
                try encoder.setBitrate(kbps: 600 + i * 10)
                try encoder.encode(try rig.frame(i)) { if $0.isKeyframe { keyframes += 1 } }
            }
            #expect(keyframes == 2, "\(codec)")
            #expect(encoder.stats.framesIn == 6)
        }
    }

    @Test func aCorruptAccessUnitThrowsAndTheDecoderRecoversAtTheNextIDR() throws {
        let decoder = try H264Decoder()
        let garbage: [UInt8] = [0, 0, 0, 1, 0x65, 0xFF, 0xFF, 0xFF, 0x00, 0x12]
        #expect(throws: MediaError.self) { try garbage.withUnsafeBytes { try decoder.decode($0) { _ in () } } }
        let rig = try Rig(width: 320, height: 240)
        var encoder = try H264Encoder(.init(width: 320, height: 240, bitrateKbps: 500))
        var decoded = 0
        try encoder.encode(try rig.frame(0)) { frame in
            if (try? decoder.decode(frame.bytes) { _ in () }) != nil { decoded += 1 }
        }
        #expect(decoded == 1)
    }

    /// One access unit coded from `slot`, copied out, then decoded: its size, whether it is an
    /// IDR, and the PSNR of the decoded picture against `slot` (nil: rate control skipped it;
    /// -1: the decoder refused it).
    static func codeAndDecode(_ slot: borrowing FrameSlot, _ encoder: inout H264Encoder,
                              _ decoder: borrowing H264Decoder) throws -> (bytes: Int, idr: Bool, psnr: Double)? {
        var unit: [UInt8] = []
        var idr = false
        try encoder.encode(slot) { frame in
            unit = Array(frame.bytes)
            idr = frame.isKeyframe
        }
        guard !unit.isEmpty else { return nil }
        var psnr = -1.0
        slot.withPixels { pixels in
            unit.withUnsafeBytes { bytes in
                do {
                    if let p = try decoder.decode(bytes, { picture in PictureCompare.psnr(pixels, picture) }) { psnr = p }
                } catch {}
            }
        }
        return (unit.count, idr, psnr)
    }

    /// openh264's rate control codes a 1920x1080 page of dense text far larger than the sender's
    /// packet history holds, at any maximum quantizer: such a picture is coded again as a coarser
    /// IDR, so every access unit fits `maxFrameBytes`; the stream decodes whole, a page change
    /// (every macroblock new) goes the same way, and the still page then refines under rate
    /// control.
    @Test func aPictureLargerThanTheBoundIsCodedAgainAsACoarserIDRAndTheStreamDecodes() throws {
        let (width, height) = (VP8ProgressiveKeyframeTests.width, VP8ProgressiveKeyframeTests.height)
        let budget = try MemoryBudget(capBytes: PixelFormat.i420.bytes(width: width, height: height)! * 2 + (1 << 20))
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: width, maxHeight: height, count: 2)
        var page = try VP8ProgressiveKeyframeTests.denseText(pool)
        // The next page: the same one mirrored left to right, glyphs no motion search finds.
        var next = try pool.acquire(format: .i420, width: width, height: height)
        page.withPixels { a in
            next.withMutablePixels { b in
                for plane in 0..<3 {
                    let pa = a.plane(plane), pb = b.plane(plane)
                    for row in 0..<pb.rows {
                        let from = pa.row(row), to = pb.row(row)
                        for x in 0..<pb.rowBytes { to[x] = from[pb.rowBytes - 1 - x] }
                    }
                }
            }
        }
        let bound = H264Encoder.Configuration.defaultMaxFrameBytes

        // What rate control alone makes of the page, at the top of the quantizer range and above.
        for maxQuantizer in [42, 51] {
            var c = H264Encoder.Configuration(width: width, height: height, bitrateKbps: 1000)
            c.maxFrameBytes = nil
            c.maxQuantizer = maxQuantizer
            var unbounded = try H264Encoder(c)
            let decoder = try H264Decoder()
            page.ptsMicroseconds = 0
            let first = try #require(try Self.codeAndDecode(page, &unbounded, decoder))
            print("H264EncoderTests 1080p text: IDR \(first.bytes) bytes unbounded, quantizers up to \(maxQuantizer)")
            #expect(first.idr && first.bytes > bound, "\(first.bytes) bytes")
        }

        var c = H264Encoder.Configuration(width: width, height: height, bitrateKbps: 1000)
        c.frameRate = 15
        var encoder = try H264Encoder(c)
        let decoder = try H264Decoder()
        var coded: [(bytes: Int, idr: Bool, psnr: Double)] = []
        var stillPage: [Double] = []
        // 15 frames a second: the page 4 s, then the next page 2 s; no picture skipped at this
        // size (`frameSkipMaximumPixels`).
        for i in 0..<90 {
            let pts = Int64(i) * 66_667
            let out: (bytes: Int, idr: Bool, psnr: Double)?
            if i < 60 {
                page.ptsMicroseconds = pts
                out = try Self.codeAndDecode(page, &encoder, decoder)
                if let out { stillPage.append(out.psnr) }
            } else {
                next.ptsMicroseconds = pts
                out = try Self.codeAndDecode(next, &encoder, decoder)
            }
            if let out { coded.append(out) }
        }
        print("H264EncoderTests 1080p text bounded, the pictures over 1 KB: \(coded.filter { $0.bytes > 1000 }.map { "\($0.idr ? "I" : "P")\($0.bytes)" }.joined(separator: " ")); "
              + "PSNR of the still page first \(String(format: "%.1f", stillPage.first ?? 0)), best \(String(format: "%.1f", stillPage.max() ?? 0)); "
              + "recoded \(encoder.oversizeFramesRecoded), dropped \(encoder.oversizeFramesDropped)")
        #expect(coded.first?.idr == true)
        #expect(coded.allSatisfy { $0.bytes <= bound }, "\(coded.map(\.bytes))")
        #expect(coded.allSatisfy { $0.psnr > 0 }, "every access unit decodes: \(coded.map(\.psnr))")
        // The first page and the change to the next were both too large as rate control coded them.
        #expect(encoder.oversizeFramesRecoded >= 2)
        #expect(coded.count(where: \.idr) >= 2)
        #expect(encoder.oversizeFramesDropped == 0)
        #expect(!c.frameSkipIsOn && coded.count == 90, "\(coded.count) pictures coded of 90")
        // The coarse IDR is refined by the pictures after it.
        let firstPSNR = try #require(stillPage.first), best = try #require(stillPage.max())
        #expect(best > firstPSNR + 1, "still page PSNR \(stillPage)")
    }

    /// A picture still larger than the bound at the coarsest quantizer is dropped, never handed
    /// out in part (a 16 KiB bound and the page of dense text); the next picture is an IDR, and one
    /// that fits goes. A bound under 4096 bytes is refused.
    @Test func aPictureTooLargeEvenAtTheCoarsestQuantizerIsDroppedAndAnIDRFollows() throws {
        let (width, height) = (VP8ProgressiveKeyframeTests.width, VP8ProgressiveKeyframeTests.height)
        var tiny = H264Encoder.Configuration(width: width, height: height, bitrateKbps: 1000)
        tiny.maxFrameBytes = 4095
        #expect(throws: MediaError.self) { _ = try H264Encoder(tiny) }
        tiny.maxFrameBytes = 16_384
        tiny.frameRate = 15
        var encoder = try H264Encoder(tiny)
        let budget = try MemoryBudget(capBytes: PixelFormat.i420.bytes(width: width, height: height)! * 2 + (1 << 20))
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: width, maxHeight: height, count: 2)
        var page = try VP8ProgressiveKeyframeTests.denseText(pool)
        var flat = try pool.acquire(format: .i420, width: width, height: height)
        flat.withMutablePixels { pixels in
            for plane in 0..<3 {
                let p = pixels.plane(plane)
                for row in 0..<p.rows { let line = p.row(row); for x in 0..<p.rowBytes { line[x] = plane == 0 ? 200 : 128 } }
            }
        }
        let decoder = try H264Decoder()
        page.ptsMicroseconds = 0
        #expect(try Self.codeAndDecode(page, &encoder, decoder) == nil, "the page is not handed out")
        #expect(encoder.oversizeFramesDropped == 1 && encoder.stats.framesDropped == 1)
        let idrNext = encoder.keyframeWillBeForced
        #expect(idrNext)
        flat.ptsMicroseconds = 66_667
        let next = try #require(try Self.codeAndDecode(flat, &encoder, decoder))
        #expect(next.idr && next.bytes <= 16_384 && next.psnr > 30, "\(next)")
        #expect(encoder.oversizeFramesDropped == 1, "dropped \(encoder.oversizeFramesDropped), recoded \(encoder.oversizeFramesRecoded)")
    }
}
