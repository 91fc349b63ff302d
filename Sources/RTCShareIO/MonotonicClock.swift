import Glibc
import RTCShareCore

/// The real media clock: CLOCK_MONOTONIC in microseconds, the same clock the test source stamps
/// into its frame marker, so a receiver on this host can measure glass-to-glass latency.
public enum MonotonicClock {
    public static func now() -> MediaTime {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return MediaTime(microseconds: Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1_000)
    }

    /// Sleeps until `deadline` (returns at once if it has passed); EINTR just resumes.
    public static func sleep(until deadline: MediaTime) {
        var ts = timespec(tv_sec: Int(deadline.microseconds / 1_000_000),
                          tv_nsec: Int(deadline.microseconds % 1_000_000) * 1_000)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}

/// The wall clock (CLOCK_REALTIME) in microseconds since the Unix epoch: only for the NTP
/// timestamps of RTCP sender reports, never for pacing.
public enum WallClock {
    public static func nowMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1_000
    }
}
