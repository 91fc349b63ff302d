import Glibc

/// Peak resident memory of this process (VmHWM), the figure the 50 MiB budget is about.
public enum PeakMemory {
    public static func residentBytes() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss * 1024  // kilobytes on Linux
    }
}
