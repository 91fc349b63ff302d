import Foundation

/// The `--stats-json` lines a share writes, one a second, read back as the capture tests read
/// them: a counter as it stood at a second of the share.
struct StatsLines {
    private let lines: [[String: Any]]

    /// The lines in `path` (none if it cannot be read; a line that does not parse is skipped).
    init(_ path: String) {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        lines = text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// `key` in the last line written at or before `second` of the share (-1: no such line or
    /// key).
    func counter(_ key: String, at second: Double) -> Double {
        lines.last(where: { Self.number($0, "t") <= second }).map { Self.number($0, key) } ?? -1
    }

    private static func number(_ line: [String: Any], _ key: String) -> Double {
        (line[key] as? NSNumber)?.doubleValue ?? -1
    }
}
