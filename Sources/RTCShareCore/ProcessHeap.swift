import CCore

/// The C heap of the whole process.
public enum ProcessHeap {
    /// Gives the heap's free pages back to the system (malloc keeps them otherwise): after a
    /// large allocation is freed (an encoder let go), so resident memory falls, not just use.
    public static func releaseFree() {
        _ = ccore_release_free_heap()
    }
}
