import RTCShareCore
import RTCShareIO
import RTCShareMedia

/// `y4m:PATH` or `y4m:-`: YUV4MPEG2 4:2:0 frames from a file or standard input, delivered at the
/// file's frame rate (or `fallbackFramesPerSecond` when the header gives none) as a camera would,
/// and ending at the end of the file. A bad header or an unreadable file fails at start-up with
/// one line naming the file.
public final class Y4MSource: VideoSource {
    public let name: String
    public let format = PixelFormat.i420
    public let header: Y4MHeader
    public var frameWidth: Int { header.width }
    public var frameHeight: Int { header.height }
    public let isLive = false
    public let fixedOrientation: Orientation? = .up

    private let input: FileInput
    private let interval: MediaDuration
    private var nextCapture: MediaTime?
    private var line: [UInt8] = []
    private var framesRead = 0
    /// How far behind its schedule the reader may fall and still keep it.
    static let catchUp: MediaDuration = .milliseconds(250)

    public init(path: String, fallbackFramesPerSecond: Int = 20) throws(SourceError) {
        name = "y4m:\(path)"
        do {
            // A picture's worth of pipe (when fed through one) so a frame crosses in one or two
            // turns; the header is not read yet, so the size of the largest common one, 1080p.
            input = try FileInput(path: path, pipeBytes: 1920 * 1080 * 3 / 2)
        } catch {
            throw SourceError("\(error)")
        }
        let display = path == "-" ? "standard input" : path
        do {
            guard try input.readLine(maxBytes: Y4MHeader.maxHeaderLength, into: &line) else {
                throw SourceError("\(display): empty file, not a YUV4MPEG2 stream")
            }
            header = try Y4MHeader.parse(line)
        } catch let error as FileInputError {
            throw SourceError("\(error)")
        } catch let error as Y4MHeader.ParseError {
            throw SourceError("\(display): \(error)")
        } catch let error as SourceError {
            throw error
        } catch {
            throw SourceError("\(display): \(error)")
        }
        if header.frameRateNumerator > 0 {
            interval = MediaDuration(microseconds: Int64(1_000_000) * Int64(header.frameRateDenominator)
                                     / Int64(header.frameRateNumerator))
        } else {
            interval = .frameInterval(framesPerSecond: max(fallbackFramesPerSecond, 1))
        }
    }

    public func capture(from pool: FramePool, until deadline: MediaTime) throws(SourceError) -> CaptureOutcome {
        var due = nextCapture ?? MonotonicClock.now()
        if due > deadline {
            MonotonicClock.sleep(until: deadline)
            return .nothingYet
        }
        MonotonicClock.sleep(until: due)
        // A reader held up no longer than `Self.catchUp` keeps the stream's schedule; one further
        // behind (a slow pipe, a long stall) takes up the schedule from now, not in a rush.
        let now = MonotonicClock.now()
        if now - due > Self.catchUp { due = now }
        nextCapture = due + interval

        do {
            guard try input.readLine(maxBytes: 256, into: &line) else {
                // A header and no picture is a file that cannot be shared, not a short share.
                if framesRead == 0 { throw SourceError("\(name): the file has a header and no frames") }
                return .ended
            }
        } catch {
            throw SourceError("\(error)")
        }
        guard line.starts(with: "FRAME".utf8) else {
            throw SourceError("\(name): frame \(framesRead + 1) does not start with FRAME")
        }
        var frame: FrameSlot
        do {
            frame = try pool.acquire(format: .i420, width: header.width, height: header.height)
        } catch {
            // Every slot is busy downstream: read the pixels past and drop this frame.
            try skipPixels()
            return .nothingYet
        }
        let ok: Bool
        do {
            ok = try frame.withMutablePixels { (pixels) throws(FileInputError) -> Bool in
                for p in 0..<3 {
                    let plane = pixels.plane(p)
                    // Rows back to back (the usual strides): the plane in one read, straight in.
                    if plane.stride == plane.rowBytes, plane.rows > 0 {
                        let whole = UnsafeMutableRawBufferPointer(start: plane.row(0).baseAddress,
                                                                  count: plane.rowBytes * plane.rows)
                        guard try input.readExactly(into: whole) else { return false }
                        continue
                    }
                    for y in 0..<plane.rows {
                        guard try input.readExactly(into: UnsafeMutableRawBufferPointer(plane.row(y))) else {
                            return false
                        }
                    }
                }
                return true
            }
        } catch {
            throw SourceError("\(error)")
        }
        guard ok else { throw SourceError("\(name): frame \(framesRead + 1) is truncated") }
        framesRead += 1
        // The frame's place in the stream is its capture time: frames read together after the
        // process was held up (a CPU quota) keep their spacing, so the pacer sees them at the
        // stream's rate, not as a burst.
        frame.ptsMicroseconds = due.microseconds
        return .frame(frame)
    }

    private func skipPixels() throws(SourceError) {
        var scratch = [UInt8](repeating: 0, count: 4096)
        var left = header.frameBytes
        do {
            while left > 0 {
                let n = min(left, scratch.count)
                let ok = try scratch.withUnsafeMutableBytes { (raw) throws(FileInputError) -> Bool in
                    try input.readExactly(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<n]))
                }
                guard ok else { throw SourceError("\(name): frame \(framesRead + 1) is truncated") }
                left -= n
            }
        } catch let error as SourceError {
            throw error
        } catch {
            throw SourceError("\(error)")
        }
    }

    public var budgetBytes: Int { 0 }
    public func prepare(budget: MemoryBudget) throws(SourceError) {}
    public func restart() throws(SourceError) {}
}
