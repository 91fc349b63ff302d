import RTCShareCore
import RTCShareIO
import RTCShareMedia
import Synchronization

/// The capture thread: asks the source for pictures and pushes them onto the ring, so the
/// source never waits for the pipeline (a full ring lets go of its oldest frame, counted).
/// The pipeline talks back only through the atomics here: stop, and restart after a stall.
/// Each frame pushed, and the end, wake the pipeline's event loop through `waker`.
public final class CaptureLoop: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    private let restartRequested = Atomic<Bool>(false)
    private let restartsDone = Atomic<Int>(0)
    private let heartbeatCount = Atomic<Int>(0)
    /// 0 running, 1 ended (end of file), 2 failed.
    private let endState = Atomic<Int>(0)
    private let failureMessage = Mutex<String?>(nil)

    public init() {}

    /// Runs the loop on the calling thread until `stop()` or the source ends or fails. Generic,
    /// so each source's `capture` is called directly, not through an existential, per frame.
    public func run<S: VideoSource>(_ source: S, pool: FramePool, ring: FrameRing, waker: EventLoopWaker? = nil) {
        defer { waker?.wake() }
        while !stopRequested.load(ordering: .acquiring) {
            if restartRequested.exchange(false, ordering: .acquiringAndReleasing) {
                do {
                    try source.restart()
                } catch {
                    fail(error.description)
                    return
                }
                restartsDone.add(1, ordering: .releasing)
            }
            do {
                let deadline = MonotonicClock.now() + .milliseconds(50)
                let outcome = try source.capture(from: pool, until: deadline)
                switch consume outcome {
                case .frame(let frame):
                    ring.push(frame)
                    waker?.wake()
                case .unchanged:
                    heartbeatCount.add(1, ordering: .releasing)
                case .nothingYet:
                    continue
                case .ended:
                    endState.store(1, ordering: .releasing)
                    return
                }
            } catch {
                fail(error.description)
                return
            }
        }
    }

    private func fail(_ message: String) {
        failureMessage.withLock { $0 = message }
        endState.store(2, ordering: .releasing)
    }

    public func stop() { stopRequested.store(true, ordering: .releasing) }
    public func requestRestart() { restartRequested.store(true, ordering: .releasing) }
    public var restarts: Int { restartsDone.load(ordering: .acquiring) }
    /// Times the source said "alive, nothing changed".
    public var heartbeats: Int { heartbeatCount.load(ordering: .acquiring) }

    /// Whether the source has no more frames (end of file) or failed.
    public var hasEnded: Bool { endState.load(ordering: .acquiring) != 0 }
    /// The source's failure, if it failed.
    public var failure: String? {
        endState.load(ordering: .acquiring) == 2 ? failureMessage.withLock { $0 } : nil
    }
}
