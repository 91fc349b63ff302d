import RTCShare

/// `--y4m FILE`: decoded frames as YUV4MPEG2 (4:2:0, the first frame's size; frames of another
/// size are skipped and counted). Rows are written one at a time from the decoder's planes, so
/// no frame-sized copy is held.
final class Y4MFileWriter {
    private let file: ReceiveOutputFile
    private(set) var width = 0
    private(set) var height = 0
    private(set) var skipped: UInt64 = 0
    private(set) var written: UInt64 = 0
    private let frameRate: Int

    init(path: String, frameRate: Int = 30) throws(ShareError) {
        file = try ReceiveOutputFile(path: path)
        self.frameRate = frameRate
    }

    /// Appends one picture: `plane(i)` gives plane i's base, stride, width and rows.
    func append(width w: Int, height h: Int,
                plane: (Int) -> (base: UnsafePointer<UInt8>, stride: Int, width: Int, rows: Int)) throws(ShareError) {
        if width == 0 {
            width = w
            height = h
            try file.write("YUV4MPEG2 W\(w) H\(h) F\(frameRate):1 Ip A1:1 C420jpeg\n")
        }
        guard w == width, h == height else {
            skipped += 1
            return
        }
        try file.write("FRAME\n")
        for i in 0..<3 {
            let p = plane(i)
            for y in 0..<p.rows {
                try file.write(UnsafeRawBufferPointer(start: p.base + y * p.stride, count: p.width))
            }
        }
        written += 1
    }

    func close() throws(ShareError) { try file.close() }
}
