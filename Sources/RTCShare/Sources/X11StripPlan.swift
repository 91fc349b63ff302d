import RTCShareMedia

/// How an X11 screen is read in horizontal strips and where each strip lands in the frame the
/// source delivers, which may be smaller than the screen: the source scales while it reads, so
/// no full-size copy of the screen (8.3 MB of BGRA at 1920x1080, 3 MB even as I420) is ever
/// held — a 1080p screen sent at 720p needs only 720p frames.
///
/// Invariants that make strip-by-strip scaling give exactly the bytes of scaling the whole
/// screen at once (CCore's scaler maps output row y to source position (y + 0.5) * s / d - 0.5
/// for bilinear, [y * s / d, (y + 1) * s / d) for box):
///  - every strip but the last is `screenRows` screen rows turned into `frameRows` frame rows,
///    with screenRows / frameRows == capturedHeight / frameHeight exactly, so each strip is a
///    translated copy of the whole picture's sampling grid, and a shrink never samples outside
///    its own strip (the last bilinear tap of a strip sits at most on its last row);
///  - both row counts are even, so 4:2:0 chroma rows split at the same places;
///  - the frame never exceeds the screen (the source only shrinks).
/// When the two heights share too small a factor for strips of a sensible size, the frame is
/// made a few rows shorter or the screen's last few rows are left out (never more than 1/16 or
/// 8 rows); failing that, the source delivers the screen's own size and the pipeline scales.
public struct X11StripPlan: Equatable, Sendable {
    public var screenWidth: Int
    /// Screen rows read, from the top: the screen's height, or a few rows fewer (see above).
    public var capturedHeight: Int
    public var frameWidth: Int
    public var frameHeight: Int
    /// Screen rows per strip (the last strip may have fewer).
    public var screenRows: Int
    /// Frame rows each full strip becomes.
    public var frameRows: Int

    /// Strips per frame.
    public var stripCount: Int { (capturedHeight + screenRows - 1) / screenRows }

    /// Bytes of the shared segment one strip is read into (32-bit pixels).
    public var segmentBytes: Int { screenWidth * screenRows * 4 }

    /// Whether the frame is smaller than the part of the screen read.
    public var scales: Bool { frameWidth != screenWidth || frameHeight != capturedHeight }

    /// Strip `index`: its screen rows and the frame rows it becomes.
    public func strip(_ index: Int) -> (screenY: Int, screenRows: Int, frameY: Int, frameRows: Int) {
        let screenY = index * screenRows, frameY = index * frameRows
        return (screenY, min(screenRows, capturedHeight - screenY), frameY, min(frameRows, frameHeight - frameY))
    }

    /// Strips of about this many rows keep one strip of a 1920-wide screen near 512 KiB.
    static let targetSegmentBytes = 512 << 10
    static let minimumRows = 16, preferredRows = 64, maximumRows = 256

    /// The plan for delivering a `screenWidth` x `screenHeight` screen at (at most) `frame`,
    /// which should have the screen's aspect ratio (see `fittedSize`).
    public static func make(screenWidth: Int, screenHeight: Int, frame: PictureSize) -> X11StripPlan {
        let target = max(minimumRows, min(preferredRows, targetSegmentBytes / max(screenWidth * 4, 1)))
        let fw = min(frame.width, screenWidth), fh = min(frame.height, screenHeight)
        if fh < screenHeight {
            // Shrinking vertically: find heights whose ratio allows aligned strips.
            let lowestFrame = max(2, fh - fh / 16)
            for h in stride(from: fh & ~1, through: lowestFrame, by: -2) {
                for crop in 0...min(8, screenHeight / 16) {
                    let captured = screenHeight - crop
                    guard captured > h else { continue }
                    // Source rows per aligned step: u rows become v rows; two steps keep both even.
                    let g = gcd(captured, h)
                    let unit = 2 * (captured / g)
                    guard unit <= maximumRows else { continue }
                    let rows = (target + unit - 1) / unit * unit
                    if rows >= captured {  // one strip: the whole screen
                        return X11StripPlan(screenWidth: screenWidth, capturedHeight: captured, frameWidth: fw,
                                            frameHeight: h, screenRows: captured, frameRows: h)
                    }
                    return X11StripPlan(screenWidth: screenWidth, capturedHeight: captured, frameWidth: fw,
                                        frameHeight: h, screenRows: rows, frameRows: rows / (captured / g) * (h / g))
                }
            }
        }
        // Same height (possibly narrower): any even strip height lines up.
        let rows = min((target + 1) & ~1, screenHeight)
        let keepWidth = fh == screenHeight
        return X11StripPlan(screenWidth: screenWidth, capturedHeight: screenHeight,
                            frameWidth: keepWidth ? fw : screenWidth, frameHeight: screenHeight,
                            screenRows: rows, frameRows: rows)
    }

    /// The plan that turns a `screenWidth` x `screenHeight` picture into exactly `frame` in
    /// strips of the fewest rows that line up, so that any run of whole strips converts to the
    /// bytes the whole picture's conversion puts there: what a source that is told which rows
    /// changed (a compositor's damage) converts. Nil where no band can map exactly: a height
    /// odd (4:2:0 chroma rows would not split where luma rows do), a frame taller than the
    /// picture (an enlarging scaler's taps at a band's first row reach the row above it), or
    /// heights whose aligned step is the whole picture (1080 rows into 718).
    public static func exact(screenWidth: Int, screenHeight: Int, frame: PictureSize) -> X11StripPlan? {
        let sh = screenHeight, fh = frame.height
        guard screenWidth > 0, frame.width > 0, sh > 0, fh > 0, sh % 2 == 0, fh % 2 == 0, fh <= sh else { return nil }
        let g = gcd(sh, fh)
        let (unit, frameUnit) = fh == sh ? (2, 2) : (2 * (sh / g), 2 * (fh / g))
        guard unit < sh else { return nil }
        return X11StripPlan(screenWidth: screenWidth, capturedHeight: sh, frameWidth: frame.width, frameHeight: fh,
                            screenRows: unit, frameRows: frameUnit)
    }

    /// The whole strips holding screen rows `rows` (clipped to the rows read): the band that
    /// converts exactly when only those rows changed. Empty rows give an empty band.
    public func band(covering rows: Range<Int>) -> (screenY: Int, screenRows: Int, frameY: Int, frameRows: Int) {
        let low = max(rows.lowerBound, 0), high = min(rows.upperBound, capturedHeight)
        guard low < high else { return (0, 0, 0, 0) }
        let first = strip(low / screenRows), last = strip((high - 1) / screenRows)
        return (first.screenY, last.screenY + last.screenRows - first.screenY,
                first.frameY, last.frameY + last.frameRows - first.frameY)
    }

    /// The largest picture with the screen's aspect ratio inside `box`, sides even, never larger
    /// than the screen (a screen that fits is delivered at its own size). The same rounding as
    /// the pipeline's letterboxing, so a frame of this size is placed in `box` without scaling.
    /// A shape within 1% of the box's takes the box itself (1366x768 at 1280x720 is stretched
    /// by 0.3% rather than given two rows of bars and a copy per frame).
    public static func fittedSize(screenWidth sw: Int, screenHeight sh: Int, into box: PictureSize) -> PictureSize {
        guard sw > box.width || sh > box.height else { return PictureSize(width: sw, height: sh) }
        var fit = box
        if sw * box.height > sh * box.width {
            fit.height = max(2, (box.width * sh / sw) & ~1)
        } else if sw * box.height < sh * box.width {
            fit.width = max(2, (box.height * sw / sh) & ~1)
        }
        if box.width - fit.width <= box.width / 100 && box.height - fit.height <= box.height / 100 { return box }
        return fit
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}
