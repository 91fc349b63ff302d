import Glibc

/// Peak resident memory of this process (VmHWM), the figure the 50 MiB budget is about.
public enum PeakMemory {
    /// The kernel's high-water mark of this process image (VmHWM), and never below the resident
    /// figure read just now (the two come from different accounting and the mark can lag behind
    /// by a few pages). Not getrusage's ru_maxrss: that keeps the peak of the image before exec,
    /// so a share started by a large parent that forked (a test runner) reported the parent's.
    public static func residentBytes() -> Int {
        max(highWaterBytes() ?? rusagePeakBytes(), currentResidentBytes())
    }

    /// VmHWM from /proc/self/status, or nil if it cannot be read.
    static func highWaterBytes() -> Int? {
        let fd = open("/proc/self/status", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { buffer -> Int? in
            var filled = 0
            while filled < buffer.count {
                let n = read(fd, buffer.baseAddress! + filled, buffer.count - filled)
                if n <= 0 { break }
                filled += n
            }
            return highWaterKilobytes(in: UnsafeBufferPointer(rebasing: buffer[0..<filled])).map { $0 * 1024 }
        }
    }

    /// The number on the "VmHWM:" line of a /proc/PID/status text ("VmHWM:\t  1234 kB").
    static func highWaterKilobytes(in text: UnsafeBufferPointer<UInt8>) -> Int? {
        let key = Array("\nVmHWM:".utf8)
        guard text.count > key.count else { return nil }
        var i = 0
        while i + key.count <= text.count {
            if text[i] == key[0], (1..<key.count).allSatisfy({ text[i + $0] == key[$0] }) {
                var j = i + key.count, value = 0, digits = 0
                while j < text.count, text[j] == UInt8(ascii: " ") || text[j] == UInt8(ascii: "\t") { j += 1 }
                while j < text.count, text[j] >= UInt8(ascii: "0"), text[j] <= UInt8(ascii: "9"), digits < 15 {
                    value = value * 10 + Int(text[j] - UInt8(ascii: "0")); j += 1; digits += 1
                }
                return digits > 0 ? value : nil
            }
            i += 1
        }
        return nil
    }

    private static func rusagePeakBytes() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss * 1024  // kilobytes on Linux
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
