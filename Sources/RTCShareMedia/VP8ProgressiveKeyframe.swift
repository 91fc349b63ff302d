import Glibc
import RTCShareCore

/// What one VP8 frame may make resident at large sizes, bounded by what it codes: a keyframe is
/// coded from a flat picture (the picture's mean colour), which costs almost no tokens, and no
/// frame codes more than `1/steps` of the picture's macroblocks — the rest wait, kept at the last
/// picture by libvpx's active map, and come in the next frames. So the real picture after a
/// keyframe, and after a full-screen change, arrives in `steps` bands of macroblock rows.
///
/// Why: libvpx writes a frame's tokens (16 bytes each) into its token buffer before packing them,
/// and with one encoder thread it writes them from the buffer's start, row after row (with
/// threads each row starts at a fixed offset: `cpi->tok + mb_row * mb_cols * 16 * 24`), so
/// the pages a frame makes resident follow the tokens it codes. A dense 1920x1080 page of text
/// coded whole is ~11 MiB of them even at the coarsest quantizer (fullhd_case's page; 27 MiB for
/// the unit test's denser one); the buffer's pages go back
/// after a large frame (`VP8Encoder.giveBackTokens`), so the peak is the largest frame's. A
/// viewer joining on such a keyframe sees the whole picture `steps` frames later.
///
/// A viewer does not see the sweep: the flat keyframe and the frames after it are marked not to
/// be shown (`VP8FrameTag`) until every macroblock has been coded from the real picture, and the
/// frame that completes it is shown. Decoders take hidden frames into their references and keep
/// showing the last picture shown, so a viewer who had the picture sees it held for the sweep's
/// frames, then the new one whole: each band codes the picture as it is then, so what changed
/// in the bands still to come is in it, and what changed behind the cursor (active in the
/// change map) follows in the next frames, shown as they come. A flat
/// macroblock the caller's map has let go is coded all the same, or the picture would stay
/// hidden: the sweep ends `steps` coded frames after the keyframe whatever the map says. Frames
/// rate control drops are not sent and count for nothing. No more than `longestHiddenRun` frames
/// in a row are hidden: a keyframe request during a sweep starts another, and requests that keep
/// coming (every 0.5 s at most, less than a sweep at 15 fps) must not hide the picture for good.
///
/// Below `minimumMacroblocks` (1600x900 and smaller) it is off and frames are coded as before;
/// off too where libvpx's start-up zero-fill was done (`VP8Encoder.Configuration
/// .reclaimStartupZeroPages` false, an embedder's default): the buffer is resident whole then.
struct VP8ProgressiveKeyframe: ~Copyable {
    /// Pictures larger than 1600x900 (5700 macroblocks): what fits the budget at 1600x900 does
    /// so without it, and its planned figures stay as measured.
    static let minimumMacroblocks = 5701
    /// Frames the real picture takes to arrive after a keyframe or a full-screen change. Eight:
    /// on a 1080p page of dense text over WHIP the share peaked at 56.8 MiB coding it whole, 46.0
    /// in four bands, 44.0 in eight (`bench/harness/fullhd_case.py`, medians of 3), where what
    /// stays is libvpx's running buffers; the page is complete 8 frames (0.57 s at 15 fps) after
    /// the keyframe.
    static let steps = 8
    /// Frames hidden in a row at most: one sweep restarted by a keyframe request in its middle
    /// still ends unseen; past this (requests that keep coming) the frames are shown as coded.
    static let longestHiddenRun = 2 * steps

    let rows: Int
    let cols: Int
    /// Macroblocks one frame may code; 0 when off.
    let budget: Int
    /// The active map handed to libvpx when a frame's own is over budget or leaves out flat
    /// macroblocks (rows x cols bytes), then which macroblocks are still flat (1 each, rows x
    /// cols), then one row of each plane of the flat picture; nil when off.
    private let memory: UnsafeMutableRawBufferPointer?
    /// Where the next frame's macroblocks are taken from (raster order), and where the frame
    /// being coded leaves it (`bound`), kept once the frame is out (`frameCoded`).
    private var cursor = 0
    private var nextCursor = 0
    /// Macroblocks still at the last keyframe's flat picture (those marked in `memory`).
    private(set) var flatLeft = 0
    /// What the frame being coded is: coded with the map `bound` made in `memory`, or the flat
    /// keyframe (`flatPicture`); `frameCoded` takes it into account once the frame is out.
    private var codesOwnMap = false
    private var codesFlatPicture = false
    /// The sweep in progress is hidden (it began with a flat keyframe while `hidesSweep`, and no
    /// frame of it has been shown), and the frames hidden in a row.
    private var sweepHidden = false
    private var hiddenRun = 0
    /// Whether the sweep after a flat keyframe is hidden from the viewer (from the next keyframe).
    var hidesSweep = true
    /// Keyframes coded from the flat picture.
    private(set) var flatKeyframes = 0
    /// Frames whose active map was cut to the budget.
    private(set) var boundedFrames = 0
    /// Frames marked not to be shown.
    private(set) var hiddenFrames = 0

    init(width: Int, height: Int, enabled: Bool = true) {
        rows = (height + 15) / 16
        cols = (width + 15) / 16
        guard enabled, rows * cols >= Self.minimumMacroblocks else {
            budget = 0
            memory = nil
            return
        }
        budget = (rows * cols + Self.steps - 1) / Self.steps
        memory = .allocate(byteCount: 2 * rows * cols + width + 2 * ((width + 1) / 2), alignment: 16)
        memory!.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: 2 * rows * cols)
    }

    deinit { memory?.deallocate() }

    var isOn: Bool { memory != nil }

    /// The map libvpx should code the next (inter) frame with: `map` itself (nil: every
    /// macroblock) while it activates at most `budget` macroblocks and leaves none of the flat
    /// ones out, else the next `budget` of its active ones and the flat ones from the cursor on,
    /// in raster order, wrapping. The ones left out stay active in the caller's change map (it
    /// renews what a coarse or dropped picture did not finish), and flat here, so they are taken
    /// in the next frames. The returned map's memory is this value's.
    mutating func bound(_ map: ActiveMap?) -> ActiveMap? {
        codesOwnMap = false
        codesFlatPicture = false
        // A map of another size is the caller's error, which `VP8Encoder` reports: passed on.
        guard let memory, map.map({ $0.rows == rows && $0.cols == cols && $0.activity.count >= rows * cols }) ?? true
        else { return map }
        let total = rows * cols
        let activity = map?.activity.baseAddress
        let out = memory.baseAddress!.assumingMemoryBound(to: UInt8.self), flat = out + total
        var active = total
        if let activity {
            active = 0
            for i in 0..<total where activity[i] != 0 || flat[i] != 0 { active += 1 }
        }
        guard active > budget else {
            nextCursor = cursor
            guard flatLeft > 0, let activity else { return map }
            for i in 0..<total { out[i] = activity[i] != 0 || flat[i] != 0 ? 1 : 0 }
            codesOwnMap = true
            return ActiveMap(activity: UnsafeBufferPointer(start: out, count: total), rows: rows, cols: cols)
        }
        out.initialize(repeating: 0, count: total)
        var taken = 0, index = cursor % total, seen = 0
        while taken < budget && seen < total {
            if activity == nil || activity![index] != 0 || flat[index] != 0 {
                out[index] = 1
                taken += 1
            }
            index = index + 1 == total ? 0 : index + 1
            seen += 1
        }
        nextCursor = index
        codesOwnMap = true
        boundedFrames += 1
        return ActiveMap(activity: UnsafeBufferPointer(start: out, count: total), rows: rows, cols: cols)
    }

    /// The frame `bound` or `flatPicture` prepared came out (`isKeyframe`: as libvpx says): the
    /// next one goes on from where it stopped, and what it coded is flat no more (all of it
    /// after a keyframe of the real picture). A frame rate control dropped is taken again from
    /// the same place. Returns whether this frame is to be hidden: its sweep is, and the
    /// picture is not whole yet.
    mutating func frameCoded(isKeyframe: Bool) -> Bool {
        cursor = nextCursor
        if let memory {
            let total = rows * cols
            let out = memory.baseAddress!.assumingMemoryBound(to: UInt8.self), flat = out + total
            if isKeyframe {
                let flatNow = codesFlatPicture
                if flatNow || flatLeft > 0 { flat.update(repeating: flatNow ? 1 : 0, count: total) }
                flatLeft = flatNow ? total : 0
                sweepHidden = flatNow && hidesSweep
            } else if codesOwnMap && flatLeft > 0 {
                for i in 0..<total where out[i] != 0 && flat[i] != 0 {
                    flat[i] = 0
                    flatLeft -= 1
                }
            }
        }
        codesOwnMap = false
        codesFlatPicture = false
        guard sweepHidden, flatLeft > 0, hiddenRun < Self.longestHiddenRun else {
            // Shown: the rest of this sweep is shown too (hiding again would flicker).
            sweepHidden = false
            hiddenRun = 0
            return false
        }
        hiddenRun += 1
        hiddenFrames += 1
        return true
    }

    /// The planes (Y, U, V) and strides of a flat picture in the mean colour of `pixels` for a
    /// keyframe: one row each, read again for every row (stride 0), so the picture costs a few
    /// KiB however large. The next frames code the real picture against it, `budget` macroblocks
    /// at a time (a keyframe's change map activates them all). nil when off.
    mutating func flatPicture(like pixels: FramePixels)
        -> (planes: (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>), strides: (Int32, Int32, Int32))? {
        guard let memory else { return nil }
        let width = pixels.width, chromaWidth = (width + 1) / 2
        let y = memory.baseAddress!.assumingMemoryBound(to: UInt8.self) + 2 * rows * cols
        let u = y + width, v = u + chromaWidth
        y.initialize(repeating: Self.mean(of: pixels.plane(0)), count: width)
        u.initialize(repeating: Self.mean(of: pixels.plane(1)), count: chromaWidth)
        v.initialize(repeating: Self.mean(of: pixels.plane(2)), count: chromaWidth)
        cursor = 0
        nextCursor = 0
        codesOwnMap = false
        codesFlatPicture = true
        flatKeyframes += 1
        return ((y, u, v), (0, 0, 0))
    }

    /// The mean of a plane, from every 8th row and 4th sample: a flat picture near the real one
    /// leaves the next frames less to code.
    private static func mean(of plane: PixelPlane) -> UInt8 {
        var sum = 0, count = 0
        for y in stride(from: 0, to: plane.rows, by: 8) {
            let row = plane.row(y)
            for x in stride(from: 0, to: plane.rowBytes, by: 4) {
                sum += Int(row[x])
                count += 1
            }
        }
        return count == 0 ? 128 : UInt8(sum / count)
    }

    /// Bytes of [start, start + count) resident now (mincore), for the token buffer's high-water
    /// mark; nil when the kernel cannot say.
    static func residentBytes(_ region: UnsafeMutableRawBufferPointer) -> Int? {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard page > 0, let base = region.baseAddress else { return nil }
        let start = UInt(bitPattern: base) & ~UInt(page - 1)
        let end = UInt(bitPattern: base) + UInt(region.count)
        let pages = Int((end - start + UInt(page) - 1) / UInt(page))
        let chunk = 4096
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: chunk) { vector -> Int? in
            var resident = 0, done = 0
            while done < pages {
                let n = min(chunk, pages - done)
                let address = UnsafeMutableRawPointer(bitPattern: start + UInt(done * page))
                guard mincore(address, n * page, vector.baseAddress) == 0 else { return nil }
                for i in 0..<n where vector[i] & 1 != 0 { resident += page }
                done += n
            }
            return resident
        }
    }
}

extension VP8Encoder {
    /// Whether an encoder of this size codes progressive keyframes (above 1600x900), for the
    /// memory plan.
    public static func codesProgressiveKeyframes(width: Int, height: Int) -> Bool {
        ((height + 15) / 16) * ((width + 15) / 16) >= VP8ProgressiveKeyframe.minimumMacroblocks
    }

    /// Turns the progressive keyframes on (the default above 1600x900 where the token buffer's
    /// pages go back) or off, for the next frames: off, a keyframe codes the whole picture and no
    /// frame's map is cut.
    public mutating func setProgressiveKeyframes(enabled: Bool) {
        progressive = VP8ProgressiveKeyframe(width: width, height: height, enabled: enabled)
    }

    /// Keyframes coded from a flat picture, the real one following in bands (`VP8ProgressiveKeyframe`).
    public var progressiveKeyframes: Int { progressive.flatKeyframes }
    /// Frames whose active map was cut to a band of the picture (`VP8ProgressiveKeyframe`).
    public var boundedFrames: Int { progressive.boundedFrames }

    /// Whether the flat keyframe and the bands after it are hidden from the viewer until the
    /// picture is whole (`VP8ProgressiveKeyframe`; on by default), from the next keyframe on.
    public var hidesProgressiveSweep: Bool {
        get { progressive.hidesSweep }
        set { progressive.hidesSweep = newValue }
    }
}
