// encoder-alone: what the video encoder alone makes resident, at a share's size and content.
//
//     swift run -c release --package-path bench encoder-alone 1280x720 [seconds] [fps] [--no-reclaim]
//         [--codec h264] [--pictures FILE.yuv]
//
// Renders rtcshare's test source (the `--source testsrc` picture, with its moving element and
// still periods) into one frame slot and encodes it the way a share does (`VideoEncoder`, VP8,
// 1500 kbit/s, the start-up zero-fill left out unless `--no-reclaim`). `--pictures` encodes the
// raw I420 pictures of FILE at the size instead (each held for a second, then the next, round;
// the first frame and every new picture a keyframe: the worst a screen of text gives). Prints
// one JSON line:
// the process's resident memory before the encoder is opened, and what it grew by — at its
// peak (VmHWM), right after the encoder opened, and after the last frame — split into
// anonymous memory (the encoder's buffers) and file-backed pages (libvpx's code). Issue 10's
// "everything but the encoder" is a share's peak minus this peak growth.
import Glibc
import RTCShareCore
import RTCShareMedia

struct Resident {
    var rss = 0, hwm = 0, anon = 0, file = 0

    /// VmRSS, VmHWM, RssAnon and RssFile of this process, in KiB.
    static func now() -> Resident {
        var r = Resident()
        let fd = open("/proc/self/status", O_RDONLY)
        guard fd >= 0 else { return r }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 8192)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return r }
        for line in String(decoding: bytes[..<n], as: UTF8.self).split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let kib = Int(parts[1]) else { continue }
            switch parts[0] {
            case "VmRSS": r.rss = kib
            case "VmHWM": r.hwm = kib
            case "RssAnon": r.anon = kib
            case "RssFile": r.file = kib
            default: break
            }
        }
        return r
    }
}

func fail(_ message: String) -> Never {
    let line = "encoder-alone: \(message)\n"
    _ = line.utf8CString.withUnsafeBytes { write(2, $0.baseAddress, $0.count - 1) }
    exit(1)
}

var arguments = Array(CommandLine.arguments.dropFirst())
let reclaim = !arguments.contains("--no-reclaim")
arguments.removeAll { $0 == "--no-reclaim" }
/// The value after `name`, taken out of the arguments.
@MainActor func option(_ name: String) -> String? {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return nil }
    defer { arguments.removeSubrange(i...(i + 1)) }
    return arguments[i + 1]
}
let codec: VideoCodec = option("--codec") == "h264" ? .h264 : .vp8
let picturesPath = option("--pictures")
let size = arguments.first.map { $0.split(separator: "x").compactMap { Int($0) } } ?? [1280, 720]
guard size.count == 2, size[0] >= 16, size[1] >= 16, size[0] <= 4096, size[1] <= 4096 else {
    fail("give the size as WxH (16...4096 each)")
}
let seconds = arguments.count > 1 ? Int(arguments[1]) ?? 6 : 6
let fps = arguments.count > 2 ? Int(arguments[2]) ?? 20 : 20
let (width, height) = (size[0], size[1])

do {
    let budget = try MemoryBudget(capBytes: (PixelFormat.i420.bytes(width: width, height: height) ?? 0) + (64 << 10))
    let pool = try FramePool(budget: budget, format: .i420, maxWidth: width, maxHeight: height, count: 1)
    let pattern = TestPattern(width: width, height: height)
    // The pictures of `--pictures`, read whole before the encoder opens.
    let pictureBytes = PixelFormat.i420.bytes(width: width, height: height) ?? 0
    var pictures: [[UInt8]] = []
    if let picturesPath {
        guard let file = fopen(picturesPath, "rb") else { fail("cannot open \(picturesPath)") }
        defer { fclose(file) }
        while true {
            var picture = [UInt8](repeating: 0, count: pictureBytes)
            guard fread(&picture, 1, pictureBytes, file) == pictureBytes else { break }
            pictures.append(picture)
        }
        guard !pictures.isEmpty else { fail("\(picturesPath) holds no \(width)x\(height) I420 picture") }
    }
    // The frame is drawn once before the encoder opens, so its pages are not counted as the encoder's.
    do {
        var warm = try pool.acquire(format: .i420, width: width, height: height)
        warm.withMutablePixels { pattern.render(into: $0, counter: 0, captureMicros: 0, elapsedMicros: 0) }
    }
    let before = Resident.now()
    var encoder = try VideoEncoder(codec: codec, width: width, height: height, bitrateKbps: 1500, frameRate: fps,
                                   reclaimStartupZeroPages: reclaim)
    let opened = Resident.now()
    var bytesOut = 0
    let interval = 1_000_000 / Int64(fps)
    for i in 0..<(seconds * fps) {
        var frame = try pool.acquire(format: .i420, width: width, height: height)
        let elapsed = Int64(i) * interval
        if pictures.isEmpty {
            frame.withMutablePixels {
                pattern.render(into: $0, counter: UInt32(i), captureMicros: UInt64(elapsed), elapsedMicros: elapsed)
            }
        } else {
            let picture = pictures[(i / fps) % pictures.count]
            frame.withMutablePixels { pixels in
                var offset = 0
                for plane in 0..<3 {
                    let p = pixels.plane(plane)
                    for row in 0..<p.rows {
                        picture.withUnsafeBytes { UnsafeMutableRawPointer(p.row(row).baseAddress!).copyMemory(from: $0.baseAddress! + offset, byteCount: p.rowBytes) }
                        offset += p.rowBytes
                    }
                }
            }
            if i % fps == 0 { encoder.forceKeyframe(nowMicroseconds: elapsed) }
        }
        frame.ptsMicroseconds = elapsed
        try encoder.encode(frame) { bytesOut += $0.bytes.count }
    }
    let after = Resident.now()
    func mib(_ kib: Int) -> String {
        let hundredths = (kib * 100 + 512) / 1024
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }
    print("{\"codec\":\"\(codec)\",\"size\":\"\(width)x\(height)\",\"frames\":\(seconds * fps),\"reclaim\":\(reclaim),\"bytes_out\":\(bytesOut),"
          + "\"before_rss_mib\":\(mib(before.rss)),\"peak_growth_mib\":\(mib(after.hwm - before.rss)),"
          + "\"opened_growth_mib\":\(mib(opened.rss - before.rss)),\"opened_anon_growth_mib\":\(mib(opened.anon - before.anon)),"
          + "\"end_growth_mib\":\(mib(after.rss - before.rss)),\"end_anon_growth_mib\":\(mib(after.anon - before.anon)),"
          + "\"end_file_growth_mib\":\(mib(after.file - before.file))}")
} catch {
    fail("\(error)")
}
