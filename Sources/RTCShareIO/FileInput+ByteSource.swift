import RTCShareCore

/// A file as the byte stream the media parsers (WAV) read, through FileInput's one buffer.
extension FileInput: ByteSource {
    public func readBytes(into buffer: UnsafeMutableRawBufferPointer) throws(CoreError) -> Int {
        do {
            return try readAvailable(into: buffer)
        } catch {
            throw .readFailed(source: path, errno: error.errno)
        }
    }
}
