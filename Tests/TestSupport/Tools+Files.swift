import Foundation

extension Tools {
    /// Size of the file at `path`, or nil while it does not exist.
    public static func fileSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
    }

    /// Waits for a receiver that writes as it decodes to have written what it was sent: until
    /// `path` holds `bytes`, or has not grown for `quiet` seconds (what was lost on the way never
    /// comes), or `timeout` seconds pass. Returns the size reached. Used once the sender has
    /// finished, before the receiver is stopped, so its tail is not cut off.
    @discardableResult
    public static func waitForFileToSettle(_ path: String, holding bytes: Int, quiet: TimeInterval = 0.5,
                                           timeout: TimeInterval = 10) -> Int {
        var last = fileSize(path) ?? 0
        var lastGrowth = ContinuousClock.now
        waitUntil(timeout: timeout) {
            let size = fileSize(path) ?? 0
            if size != last { (last, lastGrowth) = (size, .now) }
            return size >= bytes || ContinuousClock.now - lastGrowth >= .milliseconds(Int64(quiet * 1000))
        }
        return last
    }

    /// The times of an IVF file's frames in seconds, from each frame's header and the file's
    /// timebase (rtcshare writes each frame's encode time, CLOCK_MONOTONIC µs): how far apart
    /// the frames went out, whatever their number.
    public static func ivfFrameTimes(_ path: String) throws -> [Double] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        func u32(_ at: Int) -> UInt64 { (0..<4).reduce(0) { $0 | UInt64(data[data.startIndex + at + $1]) << (8 * $1) } }
        func u64(_ at: Int) -> UInt64 { u32(at) | u32(at + 4) << 32 }
        guard data.count >= 32, data.prefix(4) == Data("DKIF".utf8) else { throw Failure(message: "\(path) is not IVF") }
        let (denominator, numerator) = (Double(u32(16)), Double(u32(20)))
        var times: [Double] = []
        var at = Int(u32(6) & 0xFFFF)  // the header's length
        while at + 12 <= data.count {
            times.append(Double(u64(at + 4)) * numerator / denominator)
            at += 12 + Int(u32(at))
        }
        return times
    }

    /// The longest time between two consecutive frames (0 for fewer than two).
    public static func longestGap(_ times: [Double]) -> Double {
        zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? 0
    }
}
