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

    /// Serves every large allocation (128 KiB and up) from a fresh mapping of its own and
    /// unmaps it when freed, for the rest of the process. A library that zero-fills a fresh
    /// block then leaves its pages unbacked (`StartupZeroFill` skips them), and a freed block's
    /// pages go back to the system at once. glibc otherwise serves a large block from memory
    /// an earlier one freed, already resident. glibc only; does nothing elsewhere.
    public static func mapLargeAllocationsFresh() {
        _ = ccore_heap_map_large_fresh(128 << 10)
    }
}
