import CShims
import RTCShareCore

/// An encoder's start with its zero-fill of fresh memory left out: for the length of `body`,
/// the codec library's memset skips the whole pages that already read as zeros without being
/// resident (`rtcs_zerofill_begin`), so buffers the library zeroes at init (libvpx's VP8 token
/// buffer, 48 MiB at 1920x1080) stay unbacked until frames write them, instead of all being
/// made resident at once. The library sees the same bytes (a test checks its output is
/// bit-identical).
///
/// Large allocations come from fresh mappings from then on (`ProcessHeap.mapLargeAllocationsFresh`),
/// and the free memory malloc holds is given back first (`ProcessHeap.releaseFree`): a buffer
/// made from memory freed earlier would otherwise be resident already.
///
/// Run inside `StartupZeroPages.around` (one start at a time; what little is zeroed by other
/// means is given back there). Where the library's memset cannot be redirected, `body` runs
/// as usual and nothing is left out.
enum StartupZeroFill {
    enum Library {
        case libvpx, openh264

        var c: rtcs_zerofill_library {
            switch self {
            case .libvpx: RTCS_ZEROFILL_LIBVPX
            case .openh264: RTCS_ZEROFILL_OPENH264
            }
        }
    }

    /// Runs `body`, with `library`'s zero-fills sparse when `enabled`. Returns what `body`
    /// returned and the bytes of zero-fill left out.
    static func around<T, E: Error>(_ library: Library, enabled: Bool, _ body: () throws(E) -> T) throws(E) -> (T, Int) {
        guard enabled else { return (try body(), 0) }
        // The library's big buffers from fresh mappings from now on, and the free memory malloc
        // already holds (which it may still serve them from) given back, so it reads as zeros
        // unbacked too.
        ProcessHeap.mapLargeAllocationsFresh()
        ProcessHeap.releaseFree()
        guard begin(library) else { return (try body(), 0) }
        let result: T
        do {
            result = try body()
        } catch {
            _ = end()
            throw error
        }
        return (result, end())
    }

    /// Opens the window for `library`; false when it cannot be (one is open, the library is not
    /// loaded or its memset not found).
    static func begin(_ library: Library) -> Bool { rtcs_zerofill_begin(library.c) == 0 }

    /// Closes the window; the bytes left out in it (0 when none was open).
    static func end() -> Int { Int(rtcs_zerofill_end()) }

    /// The largest fill the last window left sparse, as the library zeroed it; nil when none.
    static func largestFill() -> UnsafeMutableRawBufferPointer? {
        var start: UnsafeMutableRawPointer?
        var bytes = 0
        rtcs_zerofill_largest(&start, &bytes)
        guard let start, bytes > 0 else { return nil }
        return UnsafeMutableRawBufferPointer(start: start, count: bytes)
    }
}
