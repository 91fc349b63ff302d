import Glibc
import RTCShare

/// A file the receiver streams into (`--y4m`, `--audio-output`): whole writes, EINTR retried,
/// and a positioned write for headers patched at the end. Errors are one line.
final class ReceiveOutputFile {
    let path: String
    private var descriptor: Int32

    init(path: String) throws(ShareError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw .output("cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { if descriptor >= 0 { Glibc.close(descriptor) } }

    /// Writes all of `bytes` at the end (or at `offset`).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int? = nil) throws(ShareError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        var done = 0
        while done < bytes.count {
            let n = offset.map { pwrite(descriptor, base + done, bytes.count - done, off_t($0 + done)) }
                ?? Glibc.write(descriptor, base + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw .output("cannot write \(path): \(String(cString: strerror(errno)))") }
            done += n
        }
    }

    func write(_ text: String) throws(ShareError) {
        var copy = text
        let result: Result<Void, ShareError> = copy.withUTF8 { utf8 in
            do throws(ShareError) {
                try write(UnsafeRawBufferPointer(utf8))
                return .success(())
            } catch { return .failure(error) }
        }
        try result.get()
    }

    func close() throws(ShareError) {
        guard descriptor >= 0 else { return }
        let fd = descriptor
        descriptor = -1
        guard Glibc.close(fd) == 0 else { throw .output("cannot close \(path): \(String(cString: strerror(errno)))") }
    }
}
