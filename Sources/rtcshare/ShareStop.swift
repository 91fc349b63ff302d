import Glibc
import RTCShare
import Synchronization

/// SIGINT and SIGTERM at any moment of a share, as the README says: exit 0, one line, the WHIP
/// session (if one was made) DELETEd.
///
/// Three moments. While the agent is being made, the stop is raised on `whip`, which the WHIP
/// POST watches: it ends at once and the agent is not made (`FailureClass.stopped`). Once the
/// agent is made, `ShareAgent.stop` ends the run, which DELETEs the session. And whatever the
/// making is doing that does not watch the stop, it gets `grace` to finish; after that the
/// process ends here, exit 0 with the line, without atexit handlers (the main thread may be
/// inside OpenSSL or libcurl, whose cleanup handlers must not run under it).
final class ShareStop: Sendable {
    let whip = WHIPStop()
    private let state = Mutex<State>(.making)
    private let quiet: Bool
    private let grace: MediaDuration

    private enum State {
        case making
        case made(ShareAgent)
        /// The making failed: the main thread says why and exits; a stop changes nothing.
        case failed
    }

    static let stoppedWhileMaking = "rtcshare: finished: stopped before the share started"

    init(quiet: Bool, grace: MediaDuration = .seconds(1)) {
        self.quiet = quiet
        self.grace = grace
    }

    /// The agent is made; a stop that came meanwhile stops it now.
    func made(_ agent: ShareAgent) {
        state.withLock { $0 = .made(agent) }
        if whip.isRaised { agent.stop() }
    }

    /// The making failed: the caller reports it.
    func failed() { state.withLock { $0 = .failed } }

    /// From the signal thread.
    func stop() {
        whip.raise()
        let deadline = MonotonicClock.now() + grace
        while true {
            let outcome = state.withLock { s -> ShareAgent?? in
                switch s {
                case .made(let agent): return .some(agent)
                case .failed: return .some(nil)
                case .making:
                    guard MonotonicClock.now() >= deadline else { return nil }
                    // Still making after the grace: end here, holding the lock so the main
                    // thread cannot report anything else meanwhile.
                    if !quiet { StandardError.write(Self.stoppedWhileMaking, level: .notice) }
                    _exit(ExitStatus.finished.rawValue)
                }
            }
            if let outcome {
                outcome?.stop()
                return
            }
            MonotonicClock.sleep(until: MonotonicClock.now() + .milliseconds(10))
        }
    }
}
