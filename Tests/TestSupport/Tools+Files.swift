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
}
