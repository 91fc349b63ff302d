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
        /// Per coded frame: PSNR of what the decoders' references hold (the frame decoded with
        /// its show bit set, by a second decoder), whether it was marked to be shown, and what
        /// the viewer's decoder showed for it (nil: nothing, the last picture stays).
        var psnr: [Double] = []
        var shownBits: [Bool] = []
        var shown: [Double?] = []
        /// Flat macroblocks of each picture the viewer was shown.
        var flatShown: [Int] = []
        var keyframes: [Bool] = []
        var bytes: [Int] = []
        /// Frames rate control dropped (an overshoot is dropped once and the next coded coarser).
        var dropped = 0
        var tokensResident = 0
        var progressiveKeyframes = 0
        var boundedFrames = 0
        var framesHidden = 0

        /// The longest run of coded frames the viewer was shown nothing for.
        var longestHiddenRun: Int {
            var longest = 0, run = 0
            for picture in shown {
                run = picture == nil ? run + 1 : 0
                longest = max(longest, run)
            }
            return longest
        }
    }

    /// Codes the still page at 15 fps until `frames` have come out (a keyframe forced at each
    /// of `keyframesAt`, counted in frames out), decoding each frame as a viewer does and with
    /// its show bit set, and comparing each with the page. Every frame is coded unless
    /// `allowDrops`.
    static func run(progressive: Bool, frames: Int, keyframesAt: Set<Int> = [], bitrateKbps: Int = 2500,
                    allowDrops: Bool = false, hides: Bool = true) throws -> Run {
        let frameBytes = PixelFormat.i420.bytes(width: width, height: height)!
        let budget = try MemoryBudget(capBytes: frameBytes + (1 << 20))
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: width, maxHeight: height, count: 1)
        var page = try denseText(pool)
        var config = VP8Encoder.Configuration(width: width, height: height, bitrateKbps: bitrateKbps)
        config.frameRate = 15
        // Finds the token buffer (`VP8Encoder.largestTokenBytesResident`): a fresh mapping of its own.
        config.reclaimStartupZeroPages = true
        var encoder = try VP8Encoder(config)
        encoder.measuresTokenResidency = true
        // Set either way: the encoder turns them on only where it found its token buffer, which
        // another suite's encoder opening at the same moment can hide (`StartupZeroFill`).
        encoder.setProgressiveKeyframes(enabled: progressive)
        encoder.hidesProgressiveSweep = hides
        // Every frame coded unless asked: at 2500 kbit/s rate control drops the frames after a
        // dense band (or after a whole dense keyframe) until their bits are paid for, which
        // says nothing of the bands themselves.
        try encoder.setFrameDropping(allowed: allowDrops)
        let viewer = try VP8Decoder(), references = try VP8Decoder()
        let output = OutputBuffer(count: encoder.maximumFrameBytes)
        var run = Run()
        var i = 0
        while run.keyframes.count < frames && i < 4 * frames + 4 {
            page.ptsMicroseconds = Int64(i) * 66_666
            i += 1
            if keyframesAt.contains(run.keyframes.count) && !encoder.keyframeWillBeForced {
                encoder.forceKeyframe(nowMicroseconds: page.ptsMicroseconds)
            }
            guard let info = try encoder.encode(page, into: output.bytes) else {
                run.dropped += 1
                continue
            }
            run.keyframes.append(info.isKeyframe)
            run.bytes.append(info.byteCount)
            let frame = output.prefix(info.byteCount)
            #expect(VP8FrameTag.isShown(frame) == info.isShown)
            run.shownBits.append(info.isShown)
            let seen = try viewer.decode(frame) { picture in
                (page.withPixels { PictureCompare.psnr($0, picture) }, PictureCompare.flatMacroblocks(picture))
            }
            run.shown.append(seen?.0)
            if let seen { run.flatShown.append(seen.1) }
            VP8FrameTag.setShown(true, in: UnsafeMutableRawBufferPointer(rebasing: output.bytes[0..<info.byteCount]))
            try references.decode(output.prefix(info.byteCount)) { picture in
                run.psnr.append(page.withPixels { PictureCompare.psnr($0, picture) })
            }
        }
        run.tokensResident = encoder.largestTokenBytesResident
        run.progressiveKeyframes = encoder.progressiveKeyframes
        run.boundedFrames = encoder.boundedFrames
        run.framesHidden = Int(encoder.stats.framesHidden)
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
        // The viewer sees none of it: nothing until the frame that completes the picture, which
        // is as fine as the whole keyframe was; coded whole, every frame is shown.
        #expect(banded.shownBits == Array(repeating: false, count: steps) + [true, true], "\(banded.shownBits)")
        #expect(banded.shown.prefix(steps).allSatisfy { $0 == nil }, "\(banded.shown)")
        #expect((banded.shown[steps] ?? 0) >= whole.psnr[0] - 1, "shown \(banded.shown), whole \(whole.psnr) dB")
        #expect(banded.flatShown.allSatisfy { $0 == 0 }, "flat macroblocks shown: \(banded.flatShown)")
        #expect(banded.framesHidden == steps)
        #expect(whole.shownBits.allSatisfy { $0 } && whole.shown.allSatisfy { $0 != nil } && whole.framesHidden == 0)
    }

    /// A PLI or FIR and the periodic keyframes take the same path. One in the middle of a sweep
    /// starts another, hidden as well: the viewer's first picture is the second sweep's whole one.
    @Test func aRequestedKeyframeIsProgressiveToo() throws {
        let steps = VP8ProgressiveKeyframe.steps
        let banded = try Self.run(progressive: true, frames: 3 + steps + 1, keyframesAt: [3])
        #expect(banded.keyframes.enumerated().filter { $0.element }.map(\.offset) == [0, 3])
        #expect(banded.progressiveKeyframes == 2)
        #expect(banded.psnr[3] < 15, "the second keyframe is flat too: \(banded.psnr)")
        #expect(banded.shown.prefix(3 + steps).allSatisfy { $0 == nil }, "\(banded.shown)")
        let first = try #require(banded.shown[3 + steps], "\(banded.shown)")
        #expect(abs(first - banded.psnr[3 + steps]) < 0.01 && first > 20, "shown \(first) dB, \(banded.psnr)")
        #expect(banded.flatShown == [0])
    }

    /// Rate control dropping band frames (a thin rate, frames dropped when over it) and a
    /// keyframe requested in a sweep: no picture the viewer is shown has a flat macroblock, and
    /// the viewer waits no more than `longestHiddenRun` frames for one.
    @Test func dropsAndARequestInTheSweepShowNoUnfinishedPicture() throws {
        let run = try Self.run(progressive: true, frames: 30, keyframesAt: [5], bitrateKbps: 800, allowDrops: true)
        print("VP8ProgressiveKeyframeTests at 800 kbit/s: dropped \(run.dropped), shown \(run.shownBits), "
              + "PSNR \(run.shown.compactMap { $0 }) dB")
        #expect(run.dropped > 0, "the case is one where rate control drops frames")
        #expect(run.keyframes.enumerated().filter { $0.element }.map(\.offset) == [0, 5])
        #expect(run.longestHiddenRun <= VP8ProgressiveKeyframe.longestHiddenRun)
        #expect(!run.flatShown.isEmpty && run.flatShown.allSatisfy { $0 == 0 }, "flat macroblocks shown: \(run.flatShown)")
        // Shown from the second sweep's last band on (frames 5 ... 5 + steps hidden, coded
        // frames counted: drops do not count).
        let steps = VP8ProgressiveKeyframe.steps
        // (Up to four tries a frame: not every one of the 30 asked for comes out.)
        let out = run.shownBits.count
        #expect(out > 5 + steps + 1, "\(out) frames out")
        #expect(run.shownBits == Array(repeating: false, count: 5 + steps) + Array(repeating: true, count: max(out - 5 - steps, 0)),
                "\(run.shownBits)")
    }

    /// Keyframe requests that keep coming, each before the sweep ends, do not hide the picture
    /// for good: after `longestHiddenRun` frames the viewer is shown what there is.
    @Test func keyframesThatKeepComingDoNotHideThePictureForGood() throws {
        let run = try Self.run(progressive: true, frames: 40, keyframesAt: Set(stride(from: 0, to: 40, by: 6)))
        let limit = VP8ProgressiveKeyframe.longestHiddenRun
        #expect(run.longestHiddenRun == limit, "\(run.shownBits)")
        #expect(run.shown[limit] != nil, "\(run.shownBits)")
        // Hidden without the sweep hidden: the frames as coded, the flat keyframes and all.
        let shownAll = try Self.run(progressive: true, frames: 2, hides: false)
        #expect(shownAll.shownBits == [true, true] && (shownAll.shown[0] ?? 99) < 15, "\(shownAll.shown)")
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
        _ = cut.frameCoded(isKeyframe: false)
        for band in 1..<steps {
            let next = active(cut.bound(nil))
            let upper = min((band + 1) * budget, total)
            #expect(next == Array((band * budget)..<upper) + Array(0..<((band + 1) * budget - upper)), "band \(band)")
            _ = cut.frameCoded(isKeyframe: false)
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

extension VP8ProgressiveKeyframeTests {
    /// After a flat keyframe every macroblock is coded once even where the caller's map lets it
    /// go (all of it still, here): the bands go on from the cursor, the last one (within the
    /// budget) is the flat ones alone in this value's own map, and the frames are hidden until
    /// then; after it the caller's map goes through as it is and nothing is hidden.
    @Test func flatMacroblocksTheMapLetsGoAreCodedAndTheSweepHiddenUntilThen() throws {
        var sweep = VP8ProgressiveKeyframe(width: Self.width, height: Self.height)
        let total = sweep.rows * sweep.cols, budget = sweep.budget, steps = VP8ProgressiveKeyframe.steps
        let frameBytes = PixelFormat.i420.bytes(width: Self.width, height: Self.height)!
        let pool = try FramePool(budget: try MemoryBudget(capBytes: frameBytes + (1 << 20)), format: .i420,
                                 maxWidth: Self.width, maxHeight: Self.height, count: 1)
        let page = try Self.denseText(pool)
        let flatMade = page.withPixels { sweep.flatPicture(like: $0) } != nil
        let keyframeHidden = sweep.frameCoded(isKeyframe: true)
        let flatAfterKeyframe = sweep.flatLeft
        #expect(flatMade && keyframeHidden, "the flat keyframe is made and hidden")
        #expect(flatAfterKeyframe == total)
        let still = [UInt8](repeating: 0, count: total)
        var hidden = [Bool]()
        try still.withUnsafeBufferPointer { activity in
            let map = ActiveMap(activity: activity, rows: sweep.rows, cols: sweep.cols)
            for band in 0..<steps {
                let bounded = sweep.bound(map)
                let coded = try #require(bounded)
                #expect(coded.activity.baseAddress != activity.baseAddress)
                let on = (0..<total).filter { coded.activity[$0] != 0 }
                #expect(on == Array((band * budget)..<min((band + 1) * budget, total)), "band \(band)")
                hidden.append(sweep.frameCoded(isKeyframe: false))
            }
            let flatAfterSweep = sweep.flatLeft
            #expect(flatAfterSweep == 0)
            let after = sweep.bound(map)?.activity.baseAddress
            #expect(after == activity.baseAddress, "the caller's map again")
            hidden.append(sweep.frameCoded(isKeyframe: false))
        }
        #expect(hidden == Array(repeating: true, count: steps - 1) + [false, false])
        let hiddenFrames = sweep.hiddenFrames
        #expect(hiddenFrames == steps)
        // A keyframe of the real picture (libvpx's own, say) leaves nothing flat to hide.
        let realKeyframeHidden = sweep.frameCoded(isKeyframe: true)
        let flatAfterRealKeyframe = sweep.flatLeft
        #expect(!realKeyframeHidden && flatAfterRealKeyframe == 0)
    }
}

/// The show_frame bit of the frame tag (RFC 6386 §9.1), byte by byte.
@Suite struct VP8FrameTagTests {
    @Test func theShowBitIsBit4OfTheFirstByteAndNothingElseChanges() {
        // A keyframe (bit 0 clear), version 0, shown (bit 4), first partition 0x952 bytes; then
        // the start code's first byte.
        var frame: [UInt8] = [0x50, 0x2a, 0x01, 0x9d]
        frame.withUnsafeMutableBytes { bytes in
            #expect(VP8FrameTag.isShown(UnsafeRawBufferPointer(bytes)) == true)
            #expect(VP8FrameTag.setShown(false, in: bytes))
            #expect(VP8FrameTag.isShown(UnsafeRawBufferPointer(bytes)) == false)
        }
        #expect(frame == [0x40, 0x2a, 0x01, 0x9d])
        // Every first byte: only bit 4 follows, key/inter, version and size bits stay.
        for b in 0...255 {
            var tag: [UInt8] = [UInt8(b), 0xff, 0x00]
            tag.withUnsafeMutableBytes { VP8FrameTag.setShown(false, in: $0) }
            #expect(tag == [UInt8(b) & 0xef, 0xff, 0x00])
            tag.withUnsafeMutableBytes { VP8FrameTag.setShown(true, in: $0) }
            #expect(tag == [UInt8(b) | 0x10, 0xff, 0x00])
        }
    }

    @Test func aFrameShorterThanItsTagIsLeftAlone() {
        var short: [UInt8] = [0x31, 0x00]
        short.withUnsafeMutableBytes { bytes in
            #expect(VP8FrameTag.isShown(UnsafeRawBufferPointer(bytes)) == nil)
            #expect(!VP8FrameTag.setShown(false, in: bytes))
        }
        #expect(short == [0x31, 0x00])
        #expect(VP8FrameTag.isShown(UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
    }
}

extension VP8ProgressiveKeyframeTests {
    /// What changes while a sweep is hidden: a change in a band still to come is in the first
    /// picture shown; one in a band already coded follows in the next frames (all of the
    /// picture is active here, so the band cursor comes round to it next).
    @Test func changesDuringTheSweepAreInTheFirstPictureOrFollowIt() throws {
        let steps = VP8ProgressiveKeyframe.steps
        let frameBytes = PixelFormat.i420.bytes(width: Self.width, height: Self.height)!
        let pool = try FramePool(budget: try MemoryBudget(capBytes: frameBytes + (1 << 20)), format: .i420,
                                 maxWidth: Self.width, maxHeight: Self.height, count: 1)
        var page = try Self.denseText(pool)
        var config = VP8Encoder.Configuration(width: Self.width, height: Self.height, bitrateKbps: 2500)
        config.frameRate = 15
        config.reclaimStartupZeroPages = true
        var encoder = try VP8Encoder(config)
        encoder.setProgressiveKeyframes(enabled: true)
        try encoder.setFrameDropping(allowed: false)
        let viewer = try VP8Decoder()
        let output = OutputBuffer(count: encoder.maximumFrameBytes)
        // Two black boxes drawn after three bands are out: one in the first band (rows 2-4 of
        // macroblocks), one in the seventh (rows 53-55).
        let early = (y: 32..<80, x: 400..<600), late = (y: 848..<896, x: 400..<600)
        func mean(_ picture: DecodedPicture, _ box: (y: Range<Int>, x: Range<Int>)) -> Int {
            var sum = 0
            for y in box.y { let row = picture.row(plane: 0, y: y); for x in box.x { sum += Int(row[x]) } }
            return sum / (box.y.count * box.x.count)
        }
        var shown: [(frame: Int, early: Int, late: Int)] = []
        for i in 0..<(2 * steps + 2) {
            if i == 3 {
                page.withMutablePixels { pixels in
                    let y = pixels.plane(0)
                    for box in [early, late] { for row in box.y { let line = y.row(row); for x in box.x { line[x] = 16 } } }
                }
            }
            page.ptsMicroseconds = Int64(i) * 66_666
            let info = try #require(try encoder.encode(page, into: output.bytes))
            let seen = try viewer.decode(output.prefix(info.byteCount)) { (mean($0, early), mean($0, late)) }
            if let seen { shown.append((i, seen.0, seen.1)) }
        }
        print("VP8ProgressiveKeyframeTests changes in the sweep: shown \(shown)")
        let first = try #require(shown.first)
        #expect(first.frame == steps, "\(shown)")
        #expect(first.late < 60, "the change in a band to come is in the first picture: \(shown)")
        #expect(first.early > 150, "the change behind the cursor is not yet: \(shown)")
        let followed = shown.first { $0.early < 60 }
        #expect(followed.map { $0.frame <= 2 * steps } == true, "and follows within a round of bands: \(shown)")
    }
}
