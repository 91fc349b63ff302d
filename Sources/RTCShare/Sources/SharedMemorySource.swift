/// A source that also maps memory the CCore budget cannot hold: shared memory another process
/// writes into (the X server's MIT-SHM segment, a producer's frames). It is resident in this
/// process all the same (it counts in RSS once touched), so the memory plan lists it beside the
/// budget instead of reserving budget pages for it that would never be used.
public protocol SharedMemorySource: VideoSource {
    /// Bytes of shared memory the source maps while it runs.
    var sharedMemoryBytes: Int { get }
}
