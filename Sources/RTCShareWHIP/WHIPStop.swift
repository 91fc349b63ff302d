import CCurlShims
import Synchronization

/// A stop a blocking WHIP request watches: raised from any thread (a signal watcher, a host's
/// `stop`), a POST or PATCH in flight ends within milliseconds with `WHIPError.stopped`, and one
/// not yet begun is not sent. The DELETE at the end of a share never watches it: a stopping
/// sender still ends its session (within `deleteTimeout`).
///
/// Invariants: raising is one-way; the eventfd (CCurlShims) stays readable once raised, so a
/// transfer that starts polling after the raise sees it as well as one already waiting.
public final class WHIPStop: Sendable {
    private let descriptor: Int32
    private let raised = Atomic<Bool>(false)

    /// An unraised stop. Without a descriptor to spare it still refuses requests not yet begun,
    /// but cannot end one in flight sooner than its timeout.
    public init() {
        descriptor = rtcs_curl_stop_create()
    }

    deinit { rtcs_curl_stop_destroy(descriptor) }

    /// Raises the stop; safe from any thread, any number of times.
    public func raise() {
        raised.store(true, ordering: .releasing)
        if descriptor >= 0 { rtcs_curl_stop_raise(descriptor) }
    }

    public var isRaised: Bool { raised.load(ordering: .acquiring) }

    /// What `rtcs_curl_perform` watches (-1: nothing to watch).
    var watchedDescriptor: Int32 { descriptor }
}
