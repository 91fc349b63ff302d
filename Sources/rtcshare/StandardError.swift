import Glibc

/// A line's syslog level (RFC 5424), which journald keeps as the entry's priority.
enum LogLevel: Int32 {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7
}

/// Standard error as the CLI writes it. On a terminal a person reads it (status lines, `Log`).
/// Connected to journald (a service's default), each line starts with `<N>`, its level, which
/// journald strips and stores as the entry's priority (sd-daemon(3)), so `journalctl -p warning`
/// finds the warnings; elsewhere (a pipe, a file) lines stay plain for the programs reading them.
enum StandardError {
    static let isTerminal = isatty(STDERR_FILENO) == 1

    /// systemd sets JOURNAL_STREAM to the device and inode of the stream it connected to the
    /// journal; a process whose standard error is still that stream logs to journald
    /// (systemd.exec(5), "JOURNAL_STREAM"). A redirected stderr (`2>file`) no longer matches.
    static let isJournal: Bool = {
        guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(STDERR_FILENO, &st) == 0 else { return false }
        return UInt64(st.st_dev) == device && UInt64(st.st_ino) == inode
    }()

    /// Writes `text` and a newline as one write (lines from two threads do not interleave).
    static func write(_ text: String, level: LogLevel) {
        var line = isJournal ? "<\(level.rawValue)>" + text : text
        line.append("\n")
        var bytes = Array(line.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(STDERR_FILENO, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            offset += n
        }
    }
}
