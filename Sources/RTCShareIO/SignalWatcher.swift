import Glibc

/// Turns SIGINT and SIGTERM into a clean stop: the signals are blocked in every thread and one
/// thread waits for them with sigwait, so the stop runs as ordinary code, not in a handler.
/// Made before any other thread starts, so every thread inherits the blocked mask.
public final class SignalWatcher: Sendable {
    public init(onSignal: @escaping @Sendable () -> Void) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        _ = WorkerThread.start(name: "rtcshare-signal", stackBytes: 64 << 10) {
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGINT)
            sigaddset(&set, SIGTERM)
            var signal: Int32 = 0
            if sigwait(&set, &signal) == 0 { onSignal() }
        }
    }
}
