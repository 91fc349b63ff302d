import RTCShareCore
import RTCShareMedia
import Synchronization

extension PackedScreenPicture {
    /// The frame a source delivered last and the stored rows drawn since, so that the next
    /// conversion converts only the band of rows that changed and takes the rest of the frame
    /// from the last one. A compositor copies its whole picture every time, but says which part
    /// was drawn (screencopy's damage, PipeWire's SPA_META_VideoDamage): a clock ticking in a
    /// corner of a 1920x1080 screen then costs a few dozen rows, not 1080.
    ///
    /// The last frame is a second reference to the slot the pipeline keeps for repeats (the
    /// plan's "one kept for repeats"), so keeping it adds no slot and no memory.
    ///
    /// Damage is kept in stored rows (the buffer as the compositor lays it out, before the
    /// output's transform is undone), because the fused transform scales in that orientation:
    /// `X11StripPlan.exact` then says which whole strips hold them, and strips convert to the
    /// very bytes of the whole picture. Columns are not narrowed: a band is whole rows.
    ///
    /// Whatever the damage says, a picture is converted whole once a second (`wholeInterval`),
    /// as the X11 source reads its whole screen once a second: a guard against drawing the
    /// compositor did not report, or a picture handed over mid-change, staying on screen.
    final class LastPicture {
        static let wholeInterval = MediaDuration.seconds(1)
        private var nextWhole = MediaTime.zero
        private var frame: FrameSlot?
        /// Stored rows drawn since `frame` was converted; nil: none (or no frame to draw over).
        private var pending: Range<Int>?
        private var pendingWhole = true
        /// Stored rows converted since the share began, whole pictures included. Read from the
        /// pipeline's thread for the share's counters, so atomic.
        let rowsConverted = Atomic<Int>(0)

        init() {}

        /// What the compositor says was drawn into the picture now held (stored rows); nil:
        /// it did not say, so all of it.
        func noteDamage(rows: Range<Int>?) {
            guard let rows else { pendingWhole = true; return }
            guard !rows.isEmpty else { return }
            pending = pending.map { min($0.lowerBound, rows.lowerBound)..<max($0.upperBound, rows.upperBound) } ?? rows
        }

        /// The next conversion is whole and draws over nothing (a new size, a new connection,
        /// a conversion that failed half-way).
        func forget() {
            frame = nil
            pending = nil
            pendingWhole = true
        }

        /// The band to convert over the last frame at `time`, or nil for a whole conversion.
        func band(plan: X11StripPlan?, at time: MediaTime) -> (screenY: Int, screenRows: Int, frameY: Int, frameRows: Int)? {
            guard frame != nil, !pendingWhole, time < nextWhole, let pending, let plan else { return nil }
            let band = plan.band(covering: pending)
            return band.screenRows > 0 ? band : nil
        }

        /// The frame just delivered at `time` is the one to draw over next.
        func delivered(_ slot: borrowing FrameSlot, rows: Int, whole: Bool, at time: MediaTime) {
            if whole { nextWhole = time + Self.wholeInterval }
            frame = slot.share()
            pending = nil
            pendingWhole = false
            _ = rowsConverted.wrappingAdd(rows, ordering: .relaxed)
        }

        /// Copies the last frame's pixels outside `rect` (luma pixels, even origin) into `pixels`.
        func copy(into pixels: FramePixels, except rect: (x: Int, y: Int, width: Int, height: Int)) {
            // Taken out and put back: an optional noncopyable stored property cannot be borrowed
            // through on Swift 6.0.
            guard let kept = frame.take() else { return }
            kept.withPixels { last in
                for index in 0..<3 {
                    let from = last.plane(index), to = pixels.plane(index)
                    let s = index == 0 ? 0 : 1
                    let x0 = rect.x >> s, x1 = (rect.x + rect.width + s) >> s
                    let y0 = rect.y >> s, y1 = (rect.y + rect.height + s) >> s
                    for y in 0..<min(from.rows, to.rows) {
                        let a = from.row(y), b = to.row(y)
                        let n = min(a.count, b.count)
                        if y < y0 || y >= y1 {
                            b.baseAddress!.update(from: a.baseAddress!, count: n)
                        } else {
                            b.baseAddress!.update(from: a.baseAddress!, count: min(x0, n))
                            if x1 < n { (b.baseAddress! + x1).update(from: a.baseAddress! + x1, count: n - x1) }
                        }
                    }
                }
            }
            frame = consume kept
        }
    }

    /// Where stored rows `frameY ..< frameY + frameRows` of the scaled picture (`scaledHeight`
    /// rows in the stored orientation) land in the upright `fitted` picture: rows for tags 1-4,
    /// columns for 5-8, from the far side where the correction reverses the stored row order.
    static func uprightRect(frameY: Int, frameRows: Int, scaledHeight: Int, fitted: PictureSize,
                            orientation: Orientation) -> (x: Int, y: Int, width: Int, height: Int) {
        let reversed = switch orientation {
        case .down, .downMirrored, .right, .rightMirrored: true
        default: false
        }
        let at = reversed ? scaledHeight - frameY - frameRows : frameY
        return orientation.swapsAxes ? (at, 0, frameRows, fitted.height) : (0, at, fitted.width, frameRows)
    }

    /// The strips a band of a `width` x `height` picture stored as `orientation` converts in,
    /// shrunk into `fitted`; nil where bands cannot be exact (`X11StripPlan.exact`).
    static func bandPlan(width: Int, height: Int, orientation: Orientation, fitted: PictureSize) -> X11StripPlan? {
        let scaled = orientation.swapsAxes ? PictureSize(width: fitted.height, height: fitted.width) : fitted
        return X11StripPlan.exact(screenWidth: width, screenHeight: height, frame: scaled)
    }
}
