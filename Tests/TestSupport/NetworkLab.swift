import Foundation

/// Two network namespaces of a test's own joined by a veth pair, with numeric addresses, where
/// the network can fail on purpose: everything dropped for a while (`cut`, `restore`), an
/// address replaced (`replaceAddress`). Processes run inside a side through `command`.
///
/// The cut drops what arrives on each side's veth (nftables, input hook, in both namespaces):
/// the wire is gone both ways, and no sender gets an error for it (a drop on output would
/// answer sendto with EPERM, which no real outage does).
///
/// Nothing leaves the namespaces. `remove()` deletes both, and with them the veth pair and the
/// rules; `deinit` calls it, and `init` first removes what a killed run of the same test left.
/// Needs root, `ip` and `nft`: `NetworkLab.unavailable` says why not when they are missing.
public final class NetworkLab {
    /// One end: its namespace, its veth and its address (IPv4, numeric, /24).
    public struct Side: Sendable {
        public let namespace: String
        public let interface: String
        public fileprivate(set) var address: String
    }

    public private(set) var a: Side
    public private(set) var b: Side
    private let ip: String
    private let nft: String
    private var removed = false

    /// Why a lab cannot be made here (not root, a tool missing, namespaces or nftables
    /// refused), or nil. Probed once per process.
    public static let unavailable: String? = {
        if geteuid() != 0 { return "network namespaces need root" }
        for tool in ["ip", "nft"] where Tools.which(tool) == nil {
            return "\(tool) is not on PATH (scripts/setup installs iproute2 and nftables)"
        }
        let ip = Tools.which("ip")!, probe = "rtcshare-labprobe-\(getpid())"
        guard let made = try? Tools.run(ip, ["netns", "add", probe], timeout: 10), made.status == 0 else {
            return "cannot create a network namespace here (ip netns add failed)"
        }
        defer { _ = try? Tools.run(ip, ["netns", "del", probe], timeout: 10) }
        let table = try? Tools.run(ip, ["netns", "exec", probe, Tools.which("nft")!, "add table inet probe"], timeout: 10)
        guard table?.status == 0 else { return "nftables does not work in a namespace here" }
        return nil
    }()

    /// Sides `a` (10.`net`.0.1) and `b` (10.`net`.0.2) of `name` (a few letters, unique among
    /// the suites that run at once; the process id is added).
    public init(name: String, net: UInt8) throws {
        ip = Tools.which("ip") ?? "/usr/sbin/ip"
        nft = Tools.which("nft") ?? "/usr/sbin/nft"
        let tag = "\(name)\(getpid() % 100_000)"
        a = Side(namespace: "rtcs-\(tag)-a", interface: "\(name.prefix(6))a", address: "10.\(net).0.1")
        b = Side(namespace: "rtcs-\(tag)-b", interface: "\(name.prefix(6))b", address: "10.\(net).0.2")
        deleteNamespaces()
        var steps: [[String]] = []
        for side in [a, b] {
            // IPv4 only; a replaced address's successor, added beside it, survives its removal.
            steps += [["netns", "add", side.namespace],
                      ["netns", "exec", side.namespace, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                       "net.ipv6.conf.default.disable_ipv6=1", "net.ipv4.conf.all.promote_secondaries=1",
                       "net.ipv4.conf.default.promote_secondaries=1"],
                      ["-n", side.namespace, "link", "set", "lo", "up"]]
        }
        steps.append(["-n", a.namespace, "link", "add", a.interface, "type", "veth", "peer", "name", b.interface,
                      "netns", b.namespace])
        for side in [a, b] {
            steps += [["-n", side.namespace, "addr", "add", "\(side.address)/24", "dev", side.interface],
                      ["-n", side.namespace, "link", "set", side.interface, "up"]]
        }
        do {
            for arguments in steps { try run(ip, arguments) }
            // The chains the cut fills; empty, they let everything through.
            for side in [a, b] {
                try nftables(side, """
                    add table inet rtcshare_lab
                    add chain inet rtcshare_lab input { type filter hook input priority -10 ; policy accept ; }
                    """)
            }
        } catch {
            remove()
            throw error
        }
    }

    deinit { remove() }

    /// `executable` with `arguments`, to be run inside `side`'s namespace (with `Tools.run` or
    /// `BackgroundProcess`; `ip netns exec` execs it, so the process id is the program's).
    public func command(in side: Side, _ executable: String, _ arguments: [String]) -> (String, [String]) {
        (ip, ["netns", "exec", side.namespace, executable] + arguments)
    }

    /// From now on every datagram on the veth pair is lost, both ways.
    public func cut() throws {
        for side in [a, b] {
            try nftables(side, "add rule inet rtcshare_lab input iifname \"\(side.interface)\" drop")
        }
    }

    /// The pair carries everything again.
    public func restore() throws {
        for side in [a, b] { try nftables(side, "flush chain inet rtcshare_lab input") }
    }

    /// `side`'s address becomes `address` (same /24): the old one is gone at once, as when a
    /// host's lease changes.
    public func replaceAddress(of side: Side, with address: String) throws {
        let current = side.namespace == a.namespace ? a : b
        try run(ip, ["-n", current.namespace, "addr", "add", "\(address)/24", "dev", current.interface])
        try run(ip, ["-n", current.namespace, "addr", "del", "\(current.address)/24", "dev", current.interface])
        if current.namespace == a.namespace { a.address = address } else { b.address = address }
    }

    /// Deletes both namespaces (their veth ends, addresses and rules go with them). Safe to
    /// call twice.
    public func remove() {
        guard !removed else { return }
        removed = true
        deleteNamespaces()
    }

    private func deleteNamespaces() {
        for side in [a, b] { _ = try? Tools.run(ip, ["netns", "del", side.namespace], timeout: 10) }
    }

    private func nftables(_ side: Side, _ script: String) throws {
        let (exe, args) = command(in: side, nft, ["-f", "-"])
        let result = try Tools.run(exe, args, input: Data((script + "\n").utf8), timeout: 10)
        guard result.status == 0 else {
            throw Tools.Failure(message: "nft in \(side.namespace): \(script): \(result.stderr)")
        }
    }

    private func run(_ executable: String, _ arguments: [String]) throws {
        let result = try Tools.run(executable, arguments, timeout: 10)
        guard result.status == 0 else {
            throw Tools.Failure(message: "\(executable) \(arguments.joined(separator: " ")): \(result.stderr)")
        }
    }
}
