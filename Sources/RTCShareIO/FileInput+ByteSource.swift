import RTCShareMedia

/// A file as the byte stream the media parsers (WAV) read, through FileInput's one buffer.
extension FileInput: ByteSource {
    public func readBytes(into buffer: UnsafeMutableRawBufferPointer) throws(MediaError) -> Int {
        do {
            return try readAvailable(into: buffer)
        } catch {
            throw .file(path: path, operation: .read, errno: error.errno)
        }
    }
}
