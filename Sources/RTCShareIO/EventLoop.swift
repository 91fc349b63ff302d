import CEventShims
import Glibc
import RTCShareCore

/// The one place a session's thread waits: until a watched socket is readable, another thread
/// wakes it (a captured frame, a pushed frame, stop, a bitrate change), or the earliest
/// deadline of its state machines comes. Nothing sleeps on a fixed period, so a static screen
/// costs only the wake-ups its frame rate and reports need.
///
/// Built on epoll with an eventfd for wake-ups and a timerfd holding the deadline (microsecond
/// precision, CLOCK_MONOTONIC: the clock `MonotonicClock` reads).
///
/// Threading: `wait` and `watch` belong to the loop's thread; `waker` may be copied to any
/// thread (and used from a signal handler: it is one write(2)).
public final class EventLoop {
    private let epoll: Int32
    private let wakeDescriptor: Int32
    private let timer: Int32
    private var armedAt: Int64 = -1
    /// How many times `wait` returned: the session's wake-ups.
    public private(set) var wakeups = 0

    /// Tokens the loop keeps for itself.
    private static let wakeToken: UInt64 = .max
    private static let timerToken: UInt64 = .max - 1

    public init() throws(SocketError) {
        epoll = rtcs_loop_epoll_create()
        guard epoll >= 0 else { throw .system("epoll_create1") }
        wakeDescriptor = rtcs_loop_eventfd_create()
        timer = rtcs_loop_timerfd_create()
        guard wakeDescriptor >= 0, timer >= 0,
              rtcs_loop_epoll_add(epoll, wakeDescriptor, Self.wakeToken) == 0,
              rtcs_loop_epoll_add(epoll, timer, Self.timerToken) == 0
        else {
            let error = SocketError.system("eventfd/timerfd")
            for fd in [wakeDescriptor, timer, epoll] where fd >= 0 { close(fd) }
            throw error
        }
    }

    deinit {
        close(timer)
        close(wakeDescriptor)
        close(epoll)
    }

    /// Wakes the loop from any thread.
    public var waker: EventLoopWaker { EventLoopWaker(descriptor: wakeDescriptor) }

    /// Watches `descriptor` for readability; `token` is handed to `wait`'s closure when it is.
    public func watch(_ descriptor: Int32, token: Int) throws(SocketError) {
        guard token >= 0, rtcs_loop_epoll_add(epoll, descriptor, UInt64(token)) == 0 else {
            throw .system("epoll_ctl")
        }
    }

    /// Stops watching `descriptor` (before it is closed).
    public func unwatch(_ descriptor: Int32) {
        _ = rtcs_loop_epoll_remove(epoll, descriptor)
    }

    /// What ended a wait.
    public struct Readiness: Sendable, Equatable {
        /// Another thread called `wake`.
        public var woken = false
        /// The deadline passed.
        public var deadlineReached = false
    }

    /// Waits until something is ready or `deadline` passes (nil: no deadline), then calls
    /// `ready` with the token of each readable watched descriptor. Returns at once when the
    /// deadline has already passed. An interrupted wait (a signal) just returns.
    @discardableResult
    public func wait(until deadline: MediaTime?, ready: (Int) -> Void = { _ in }) -> Readiness {
        let due = deadline?.microseconds ?? -1
        if due != armedAt {
            _ = rtcs_loop_timerfd_arm(timer, due)
            armedAt = due
        }
        var tokens = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let count = withUnsafeMutableBytes(of: &tokens) { raw in
            rtcs_loop_epoll_wait(epoll, raw.baseAddress!.assumingMemoryBound(to: UInt64.self), 8, -1)
        }
        wakeups += 1
        var readiness = Readiness()
        guard count > 0 else { return readiness }
        withUnsafeBytes(of: &tokens) { raw in
            for i in 0..<Int(count) {
                let token = raw.load(fromByteOffset: i * 8, as: UInt64.self)
                switch token {
                case Self.wakeToken:
                    _ = rtcs_loop_eventfd_drain(wakeDescriptor)
                    readiness.woken = true
                case Self.timerToken:
                    _ = rtcs_loop_timerfd_drain(timer)
                    readiness.deadlineReached = true
                    armedAt = -1
                default:
                    ready(Int(token))
                }
            }
        }
        return readiness
    }
}

/// Wakes an `EventLoop` from any thread. Valid as long as its loop lives.
public struct EventLoopWaker: Sendable {
    let descriptor: Int32

    public func wake() { _ = rtcs_loop_eventfd_signal(descriptor) }
}
