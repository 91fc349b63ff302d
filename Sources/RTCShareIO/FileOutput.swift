import Glibc

/// Small whole-file writes (an SDP, a report), replaced atomically: written to `PATH.tmp`
/// then renamed, so a reader polling for the file never sees half of it.
public enum FileOutput {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static func write(_ text: String, to path: String, mode: mode_t = 0o644) throws(Failure) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(description: "cannot create: \(String(cString: strerror(errno)))") }
        var bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let message = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                throw Failure(description: "cannot write: \(message)")
            }
            written += n
        }
        bytes.removeAll()
        guard close(fd) == 0, rename(temporary, path) == 0 else {
            let message = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(description: "cannot write: \(message)")
        }
    }
}
