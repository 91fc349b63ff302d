import Glibc
import RTCShare

/// Tells systemd how a share is doing (`Type=notify`, `WatchdogSec=`): the notify protocol of
/// sd_notify(3), one datagram of `KEY=value` lines to the socket `$NOTIFY_SOCKET` names, written
/// here rather than linking libsystemd for three messages.
///
/// `READY=1` when the share's loop starts; `WATCHDOG=1` with each progress event, which the
/// loop sends once a second only while it turns, so a loop stuck in a write or a library call
/// stops the pings and systemd restarts the service; `STATUS=` for `systemctl status`;
/// `STOPPING=1` at the end. Without `$NOTIFY_SOCKET` (not under systemd) it does nothing.
final class ServiceNotifier: @unchecked Sendable {
    // Sendable: events come from the pipeline thread only.
    private let socket: Int32
    private var address = sockaddr_un()
    private var addressLength: socklen_t = 0
    /// systemd's watchdog interval (`$WATCHDOG_USEC`) when it watches this process.
    let watchdogMicroseconds: Int64?

    /// The pings come once a second, so a watchdog shorter than two seconds cannot be served.
    static let shortestWatchdogMicroseconds: Int64 = 2_000_000

    /// nil when `$NOTIFY_SOCKET` is unset or unusable (then nothing is sent).
    init?(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) {
        guard let path = environment("NOTIFY_SOCKET"), !path.isEmpty else { return nil }
        // "@name" is an abstract socket: a leading NUL in sun_path.
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.first == UInt8(ascii: "/") || abstract, bytes.count < capacity else { return nil }
        socket = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        addressLength = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        // The watchdog is this process's only when WATCHDOG_PID (if set) names it.
        let pidMatches = environment("WATCHDOG_PID").map { Int32($0) == getpid() } ?? true
        if pidMatches, let usec = environment("WATCHDOG_USEC").flatMap({ Int64($0) }), usec > 0 {
            watchdogMicroseconds = usec
        } else {
            watchdogMicroseconds = nil
        }
    }

    deinit { close(socket) }

    /// A warning line for a watchdog the once-a-second pings cannot serve, else nil.
    var watchdogWarning: String? {
        guard let usec = watchdogMicroseconds, usec < Self.shortestWatchdogMicroseconds else { return nil }
        return "WatchdogSec=\(String(format1: Double(usec) / 1_000_000)) s is under 2 s: the share pings "
            + "once a second; systemd may stop it while it is well"
    }

    func event(_ event: ShareEvent) {
        switch event {
        case .starting(let source, let output, let fps, let codec):
            send("STATUS=starting: \(source) -> \(codec) \(output) at \(fps) fps")
        case .started:
            send("READY=1\nSTATUS=sharing")
        case .progress(let p):
            var status = "STATUS=" + (p.stats.reconnecting ? "reconnecting; " : "sharing; ")
                + "\(Int(Double(p.stats.elapsed.microseconds) / 1_000_000)) s, \(p.stats.encodedFrames) frames, "
                + "\(p.stats.targetBitrateKbps) kbit/s target, \(p.residentBytes >> 20) MiB"
            if watchdogMicroseconds != nil { status = "WATCHDOG=1\n" + status }
            send(status)
        case .reconnecting(let output, let attempt, let reason, _):
            send("STATUS=reconnecting (\(output)): \(reason); attempt \(attempt)")
        case .finished(let reason):
            send("STOPPING=1\nSTATUS=finished: \(reason)")
        default:
            break
        }
    }

    /// One datagram; never waits (a busy or gone systemd must not stall the share's loop).
    func send(_ message: String) {
        var bytes = Array(message.utf8)
        var address = self.address
        _ = withUnsafePointer(to: &address) { a in
            a.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeMutableBytes { b in
                    sendto(socket, b.baseAddress, b.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL), sa, addressLength)
                }
            }
        }
    }
}
