import Glibc

/// Peak resident memory of this process (VmHWM), the figure the 50 MiB budget is about.
public enum PeakMemory {
    /// The kernel's high-water mark, and never below the resident figure read just now (the
    /// two come from different accounting and the mark can lag behind by a few pages).
    public static func residentBytes() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return max(usage.ru_maxrss * 1024, currentResidentBytes())  // ru_maxrss: kilobytes on Linux
    }

    /// Resident memory now (VmRSS, from /proc/self/statm), or 0 if it cannot be read.
    public static func currentResidentBytes() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buffer = (0 as UInt64, 0 as UInt64, 0 as UInt64, 0 as UInt64, 0 as UInt64, 0 as UInt64, 0 as UInt64, 0 as UInt64)
        let n = withUnsafeMutableBytes(of: &buffer) { read(fd, $0.baseAddress, $0.count - 1) }
        guard n > 0 else { return 0 }
        // "size resident shared ...", in pages.
        let pages = withUnsafeBytes(of: buffer) { raw -> Int in
            var field = 0, value = 0
            for i in 0..<n {
                let c = raw[i]
                if c == UInt8(ascii: " ") { field += 1; if field > 1 { break }; continue }
                if field == 1, c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") { value = value * 10 + Int(c - UInt8(ascii: "0")) }
            }
            return value
        }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
