import Glibc
import RTCShareIO

/// Turns SIGINT and SIGTERM into a clean stop: the signals are blocked in every thread and one
/// thread waits for them with sigwait, so the stop runs as ordinary code, not in a handler.
final class SignalWatcher: Sendable {
    init(onSignal: @escaping @Sendable () -> Void) {
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
