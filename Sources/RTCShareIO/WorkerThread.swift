import Glibc

/// A named OS thread running one long-lived body (capture loop, pipeline loop). Plain pthreads:
/// the product keeps Foundation out of the process to save its resident memory.
public final class WorkerThread: @unchecked Sendable {
    // Sendable: `thread` is written once before start returns and read by join only.
    private var thread = pthread_t()
    private var started = false
    private let body: @Sendable () -> Void

    private init(body: @escaping @Sendable () -> Void) {
        self.body = body
    }

    /// Starts `body` on a new thread with a small stack; nil if the OS refuses a thread.
    /// `name` says what it is for, in debuggers' thread lists once naming is wired up.
    public static func start(name: String, stackBytes: Int = 512 << 10,
                             _ body: @escaping @Sendable () -> Void) -> WorkerThread? {
        let worker = WorkerThread(body: body)
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackBytes)
        let context = Unmanaged.passRetained(worker).toOpaque()
        let status = pthread_create(&worker.thread, &attributes, { raw in
            let worker = Unmanaged<WorkerThread>.fromOpaque(raw!).takeRetainedValue()
            worker.body()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<WorkerThread>.fromOpaque(context).release()
            return nil
        }
        worker.started = true
        return worker
    }

    /// Waits for the body to return.
    public func join() {
        guard started else { return }
        started = false
        pthread_join(thread, nil)
    }
}
