import CCore

/// The process's malloc heap.
public enum ProcessHeap {
    /// Gives the memory malloc holds free back to the system (its heap top and whole free pages
    /// in its arenas): after a large object is freed mid-share (an encoder replaced), so the
    /// resident figure the budget is about falls rather than the pages being kept for later.
    /// glibc only; does nothing elsewhere.
    public static func releaseFree() {
        _ = ccore_release_free_heap()
    }
}
