import CCore
import Glibc
import Synchronization

/// Gives back the all-zero pages a library wrote while starting (libvpx's VP8 encoder zero-fills
/// a token buffer of 6 KiB per macroblock with memset at init — 21 MiB at 1280x720 — though a
/// frame of screen content writes a small part of it): `around` runs the start between two
/// snapshots of the process's anonymous mappings and returns, with madvise(MADV_DONTNEED), the
/// resident pages of memory mapped in between that read as zeros. They read back as zeros, so
/// the library sees the same bytes (its output is bit-identical, which a test checks).
///
/// Safe only while no other thread of the process maps memory and writes it during the start:
/// true of rtcshare's own threads (they allocate at their start, never on their hot paths) and
/// of libvpx configured with one thread (it then starts none); starts are serialised here so
/// two sessions' encoders never overlap. An embedder whose own threads allocate at any time
/// leaves it off (the library's default). Where the snapshot cannot be taken (no /proc, too many
/// mappings) nothing is returned and the start goes on as usual.
public enum StartupZeroPages {
    /// Ranges one snapshot holds; a process with more mappings gets no reclaim.
    static let snapshotCapacity = 8192
    /// Only new stretches this large are looked at: the encoder's big buffers, not a malloc
    /// arena's small growth that other threads' allocations may share.
    static let minimumRangeBytes = 1 << 20
    private static let lock = Mutex<Void>(())

    /// Runs `body`; when `enabled`, returns the all-zero pages it left resident in memory it
    /// mapped. Returns what `body` returned and the bytes given back (0 when disabled or not
    /// possible).
    public static func around<T, E: Error>(enabled: Bool, _ body: () throws(E) -> T) throws(E) -> (T, Int) {
        guard enabled else { return (try body(), 0) }
        return try lock.withLock { _ throws(E) -> (T, Int) in
            // The snapshots' own memory is taken before the first one and given back after the
            // second: it is not "mapped in between".
            // From calloc, checked: Swift's allocate traps when memory runs out, and this is
            // only an optimisation — without room for the snapshots the start goes on as usual
            // (and the library's own allocation says whether it fits).
            let bytes = MemoryLayout<ccore_range>.stride * snapshotCapacity
            guard let beforeBytes = calloc(1, bytes) else { return (try body(), 0) }
            defer { free(beforeBytes) }
            guard let afterBytes = calloc(1, bytes) else { return (try body(), 0) }
            defer { free(afterBytes) }
            let before = beforeBytes.bindMemory(to: ccore_range.self, capacity: snapshotCapacity)
            let after = afterBytes.bindMemory(to: ccore_range.self, capacity: snapshotCapacity)
            var beforeCount = 0
            let snapshotBefore = ccore_anon_snapshot(before, snapshotCapacity, &beforeCount)
            let result = try body()
            guard snapshotBefore == CCORE_OK else { return (result, 0) }
            var afterCount = 0
            guard ccore_anon_snapshot(after, snapshotCapacity, &afterCount) == CCORE_OK else { return (result, 0) }
            var reclaimed = 0
            _ = ccore_reclaim_new_zero_pages(before, beforeCount, after, afterCount, minimumRangeBytes, &reclaimed)
            return (result, reclaimed)
        }
    }
}
