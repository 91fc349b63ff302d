import Glibc
import RTCShareCore
import Testing

@testable import RTCShareMedia

/// Progressive keyframes above 1600x900 (`VP8ProgressiveKeyframe`): a keyframe from a flat
/// picture, the real one coded in bands over the next frames, so no frame's tokens make more
/// than about a band's worth of libvpx's token buffer resident; libvpx decodes the whole picture
/// after `steps` frames; at smaller sizes nothing changes.
@Suite(.serialized) struct VP8ProgressiveKeyframeTests {
    static let width = 1920, height = 1080

    /// A 1080p page of dense text: an 6x11 cell per character, each a pseudo-random glyph of
    /// 1 px strokes, black on white (the worst a screen of text gives an encoder).
    static func denseText(_ pool: FramePool) throws -> FrameSlot {
        var slot = try pool.acquire(format: .i420, width: width, height: height)
        slot.withMutablePixels { pixels in
            let y = pixels.plane(0)
            var state: UInt32 = 7
            for row in 0..<height {
                let line = y.row(row)
                for x in 0..<width { line[x] = 235 }
            }
            for cellY in stride(from: 0, to: height - 11, by: 11) {
                for cellX in stride(from: 0, to: width - 6, by: 6) {
                    state = state &* 1_664_525 &+ 1_013_904_223
                    let glyph = state >> 8
                    for stroke in 0..<20 where glyph >> stroke & 1 == 1 {
                        let gx = cellX + 1 + stroke % 4, gy = cellY + 2 + stroke / 4 * 2
                        y.row(gy)[gx] = 16
                        y.row(gy + 1)[gx] = 16
                    }
                }
            }
            for plane in 1...2 {
                let p = pixels.plane(plane)
                for row in 0..<p.rows { let line = p.row(row); for x in 0..<p.rowBytes { line[x] = 128 } }
            }
        }
        return slot
    }

    struct Run {
        var psnr: [Double] = []
        var keyframes: [Bool] = []
        var bytes: [Int] = []
        /// Frames rate control dropped (an overshoot is dropped once and the next coded coarser).
        var dropped = 0
        var tokensResident = 0
        var progressiveKeyframes = 0
        var boundedFrames = 0
    }

    /// Codes the still page at 15 fps until `frames` have come out (a keyframe forced at the
    /// `keyframeAt`th), decoding each frame and comparing it with the page.
    static func run(progressive: Bool, frames: Int, keyframeAt: Int? = nil) throws -> Run {
        let frameBytes = PixelFormat.i420.bytes(width: width, height: height)!
        let budget = try MemoryBudget(capBytes: frameBytes + (1 << 20))
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: width, maxHeight: height, count: 1)
        var page = try denseText(pool)
        var config = VP8Encoder.Configuration(width: width, height: height, bitrateKbps: 2500)
        config.frameRate = 15
        // Finds the token buffer (`VP8Encoder.largestTokenBytesResident`): a fresh mapping of its own.
        config.reclaimStartupZeroPages = true
        var encoder = try VP8Encoder(config)
        encoder.measuresTokenResidency = true
        // Set either way: the encoder turns them on only where it found its token buffer, which
        // another suite's encoder opening at the same moment can hide (`StartupZeroFill`).
        encoder.setProgressiveKeyframes(enabled: progressive)
        // Every frame coded: at 2500 kbit/s rate control drops the frames after a dense band (or
        // after a whole dense keyframe) until their bits are paid for, which says nothing of
        // the bands themselves.
        try encoder.setFrameDropping(allowed: false)
        let decoder = try VP8Decoder()
        let output = OutputBuffer(count: encoder.maximumFrameBytes)
        var run = Run()
        var i = 0
        while run.keyframes.count < frames && i < frames + 4 {
            page.ptsMicroseconds = Int64(i) * 66_666
            i += 1
            if run.keyframes.count == keyframeAt && !encoder.keyframeWillBeForced {
                encoder.forceKeyframe(nowMicroseconds: page.ptsMicroseconds)
            }
            guard let info = try encoder.encode(page, into: output.bytes) else {
                run.dropped += 1
                continue
            }
            run.keyframes.append(info.isKeyframe)
            run.bytes.append(info.byteCount)
            try decoder.decode(output.prefix(info.byteCount)) { picture in
                run.psnr.append(page.withPixels { PictureCompare.psnr($0, picture) })
            }
        }
        run.tokensResident = encoder.largestTokenBytesResident
        run.progressiveKeyframes = encoder.progressiveKeyframes
        run.boundedFrames = encoder.boundedFrames
        return run
    }

    @Test func aDenseKeyframeAt1080pArrivesInBandsWithAFractionOfTheTokens() throws {
        let steps = VP8ProgressiveKeyframe.steps
        // Each run again (up to ten times) until its encoder found its token buffer, as above.
        func measured(_ progressive: Bool, frames: Int) throws -> Run {
            var run = try Self.run(progressive: progressive, frames: frames)
            for _ in 0..<9 where run.tokensResident == 0 {
                usleep(200_000)
                run = try Self.run(progressive: progressive, frames: frames)
            }
            return run
        }
        let whole = try measured(false, frames: 2)
        let banded = try measured(true, frames: steps + 2)
        #expect(whole.tokensResident > 4 << 20, "a dense keyframe's tokens: \(whole.tokensResident) bytes")
        print("VP8ProgressiveKeyframeTests: tokens resident \(banded.tokensResident) against \(whole.tokensResident) bytes; "
              + "PSNR \(banded.psnr) against \(whole.psnr) dB; bytes \(banded.bytes) against \(whole.bytes)")
        // Eight bands: about an eighth of the tokens, a quarter allowed.
        #expect(banded.tokensResident * 4 <= whole.tokensResident,
                "tokens resident \(banded.tokensResident) against \(whole.tokensResident) bytes coded whole")
        #expect(banded.keyframes == [true] + Array(repeating: false, count: steps + 1))
        #expect(banded.progressiveKeyframes == 1 && whole.progressiveKeyframes == 0)
        #expect(banded.boundedFrames == steps + 1 && banded.dropped == 0)
        // The keyframe is the flat picture; `steps` frames later every band has been coded once,
        // as fine as the whole keyframe was.
        #expect(banded.bytes[0] * 20 < whole.bytes[0], "flat keyframe \(banded.bytes[0]) bytes")
        #expect(banded.psnr[0] < 15, "the flat keyframe: \(banded.psnr[0]) dB")
        #expect(banded.psnr[steps - 1] < banded.psnr[steps] - 3, "\(banded.psnr)")
        #expect(banded.psnr[steps] >= whole.psnr[0] - 1, "after \(steps) frames \(banded.psnr) dB, whole \(whole.psnr) dB")
    }

    /// A PLI or FIR and the periodic keyframes take the same path.
    @Test func aRequestedKeyframeIsProgressiveToo() throws {
        let steps = VP8ProgressiveKeyframe.steps
        let banded = try Self.run(progressive: true, frames: 3 + steps + 1, keyframeAt: 3)
        #expect(banded.keyframes.enumerated().filter { $0.element }.map(\.offset) == [0, 3])
        #expect(banded.progressiveKeyframes == 2)
        #expect(banded.psnr[3] < 15, "the second keyframe is flat too: \(banded.psnr)")
        #expect(banded.psnr[3 + steps] >= banded.psnr[steps] - 1, "\(banded.psnr)")
    }

    /// At 1600x900 and below a keyframe codes the whole picture and no map is cut: the output is
    /// the same as with the progressive keyframes turned off.
    @Test func smallerPicturesAreCodedAsBefore() throws {
        // Nor at 1080p where libvpx zero-filled its token buffer (resident whole).
        let zeroFilled = try VP8Encoder(.init(width: Self.width, height: Self.height, bitrateKbps: 2500))
        let zeroFilledOn = zeroFilled.progressive.isOn
        #expect(!zeroFilledOn)
        let at900 = VP8ProgressiveKeyframe(width: 1600, height: 900).isOn
        let at1080 = VP8ProgressiveKeyframe(width: 1920, height: 1080).isOn
        #expect(!at900 && at1080)
        let rig = try EncodeRig(width: 1280, height: 720)
        func hash(progressive: Bool) throws -> (UInt64, Int, Int) {
            var config = VP8Encoder.Configuration(width: 1280, height: 720, bitrateKbps: 2000)
            config.reclaimStartupZeroPages = true
            var encoder = try VP8Encoder(config)
            if !progressive { encoder.setProgressiveKeyframes(enabled: false) }
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for i in 0..<8 {
                if i == 4 { encoder.forceKeyframe(nowMicroseconds: Int64(i) * EncodeRig.frameInterval) }
                try encoder.encode(try rig.frame(i)) { frame in
                    for b in frame.bytes { hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3 }
                }
            }
            return (hash, encoder.progressiveKeyframes, encoder.boundedFrames)
        }
        let on = try hash(progressive: true), off = try hash(progressive: false)
        #expect(on.0 == off.0)
        #expect(on.1 == 0 && on.2 == 0)
    }

    /// The cut: a map within the budget goes through as it is; one over it keeps the next
    /// `budget` active macroblocks from where the last coded frame stopped, wrapping; a frame
    /// that was not coded is taken again from the same place.
    @Test func aMapOverTheBudgetIsCutToTheNextBand() throws {
        var cut = VP8ProgressiveKeyframe(width: Self.width, height: Self.height)
        let total = cut.rows * cut.cols, budget = cut.budget
        let steps = VP8ProgressiveKeyframe.steps
        #expect(budget == (total + steps - 1) / steps)
        var few = [UInt8](repeating: 0, count: total)
        for i in stride(from: 0, to: total, by: steps + 3) { few[i] = 30 }  // under the budget
        few.withUnsafeBufferPointer { activity in
            let map = ActiveMap(activity: activity, rows: cut.rows, cols: cut.cols)
            let out = cut.bound(map)?.activity.baseAddress
            #expect(out == activity.baseAddress, "within the budget: the map itself")
        }
        func active(_ map: ActiveMap?) -> [Int] {
            guard let map else { return [] }
            return (0..<total).filter { map.activity[$0] != 0 }
        }
        // Every macroblock active (no map): the bands of rows in turn, then round again.
        let first = active(cut.bound(nil))
        #expect(first == Array(0..<budget))
        let again = active(cut.bound(nil))
        #expect(again == first, "not coded: the same band again")
        cut.frameCoded()
        for band in 1..<steps {
            let next = active(cut.bound(nil))
            let upper = min((band + 1) * budget, total)
            #expect(next == Array((band * budget)..<upper) + Array(0..<((band + 1) * budget - upper)), "band \(band)")
            cut.frameCoded()
        }
        // Over the budget with holes: only active macroblocks are taken, from the cursor on.
        var most = [UInt8](repeating: 1, count: total)
        for i in stride(from: 0, to: total, by: 2) { most[i] = 0 }
        for i in 0..<100 { most[i] = 1 }
        most.withUnsafeBufferPointer { activity in
            let taken = active(cut.bound(ActiveMap(activity: activity, rows: cut.rows, cols: cut.cols)))
            #expect(taken.count == budget)
            #expect(taken.allSatisfy { most[$0] != 0 })
            // The bands covered the picture: the cursor is back at its start.
            #expect(taken == Array((0..<total).filter { most[$0] != 0 }.prefix(budget)))
        }
    }
}
