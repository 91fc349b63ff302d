import Glibc
import RTCShareCore

/// Where the ScreenCast portal's restore token is kept between runs, so a share started again
/// (a service restart, a reboot) gets the same screen without the portal's dialog. One line of
/// text in a file of its own, mode 0600 (the token grants the screen without asking).
public struct PortalRestoreToken: Sendable, Equatable {
    public let path: String

    public init(path: String) { self.path = path }

    /// `$XDG_STATE_HOME/rtcshare/portal-restore-token`, else under `~/.local/state`; nil with
    /// neither variable set (the token is then not kept).
    public static var defaultPath: String? {
        if let state = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), state.hasPrefix("/") {
            return state + "/rtcshare/portal-restore-token"
        }
        if let home = getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") {
            return home + "/.local/state/rtcshare/portal-restore-token"
        }
        return nil
    }

    /// The token kept, or "" when there is none (no file, or not a token).
    public func read() -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 512)
        guard fgets(&line, Int32(line.count), file) != nil else { return "" }
        let text = String(decoding: line.prefix { $0 != 0 && $0 != 10 && $0 != 13 }.map { UInt8(bitPattern: $0) },
                          as: UTF8.self)
        // Portals hand out UUIDs; anything else in the file is not one of theirs.
        return text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) && text.utf8.count < 500 ? text : ""
    }

    /// Keeps `token` (written beside, then renamed over, so a crash leaves the old one whole).
    public func write(_ token: String) throws(SourceError) {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !directory.isEmpty { Self.makeDirectories(directory) }
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw SourceError("portal: cannot keep the restore token in \(path): \(String(cString: strerror(errno)))")
        }
        let bytes = Array((token + "\n").utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw SourceError("portal: cannot keep the restore token in \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// mkdir -p with mode 0700 for what it creates.
    private static func makeDirectories(_ directory: String) {
        var built = directory.hasPrefix("/") ? "" : "."
        for part in directory.split(separator: "/") {
            built += "/" + part
            mkdir(built, 0o700)
        }
    }
}
