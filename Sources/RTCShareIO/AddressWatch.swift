import CEventShims
import Glibc

/// The host's address changes as the kernel announces them (netlink, RTM_NEWADDR and
/// RTM_DELADDR): how a share learns that Wi-Fi came back with a new lease or an interface lost
/// the address its connection used, without polling.
public final class AddressWatch {
    /// Readable when a change is waiting (an event loop watches it).
    public let descriptor: Int32

    /// nil where netlink is not available (a sandbox without it): the share then learns of a
    /// change only through its connection failing.
    public init?() {
        let fd = rtcs_netlink_open_address_watch()
        guard fd >= 0 else { return nil }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Whether any address was added or removed since the last call (reads what is waiting).
    public func takeChanges() -> Bool { rtcs_netlink_drain_address_changes(descriptor) != 0 }
}
