import Foundation

extension Tools {
    /// A base port P such that UDP ports P ..< P + count are free on 127.0.0.1 right now (even,
    /// so RTP/RTCP pairs line up as receivers expect).
    public static func freeUDPPorts(count: Int) throws -> Int {
        for _ in 0..<200 {
            let base = Int.random(in: 20_000...60_000) & ~1
            var sockets: [Int32] = []
            defer { sockets.forEach { close($0) } }
            var ok = true
            for port in base..<base + count {
                let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
                sockets.append(fd)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = UInt16(port).bigEndian
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let bound = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                if bound != 0 { ok = false; break }
            }
            if ok { return base }
        }
        throw Failure(message: "no free block of \(count) UDP ports")
    }

    /// Waits up to `timeout` seconds for one of `descriptors` to have a datagram to read: the
    /// moment something sent to a socket has arrived, for code that reads it only when told.
    public static func waitReadable(_ descriptors: [Int32], timeout: TimeInterval) -> Bool {
        var fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        return poll(&fds, nfds_t(fds.count), Int32(timeout * 1000)) > 0
    }
}

extension Tools {
    /// What waits unread in the receive queues of the IPv4 UDP sockets bound to local `port`
    /// (the kernel's count, /proc/net/udp's rx_queue), or nil if none is bound. Zero once a
    /// receiver that runs on its own thread has read everything sent to it — the moment to stop
    /// it without cutting off the tail.
    public static func udpReceiveQueueBytes(port: Int) -> Int? {
        guard let table = try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8) else { return nil }
        var total: Int?
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 4, let local = fields[1].split(separator: ":").last, Int(local, radix: 16) == port,
                  let queued = fields[4].split(separator: ":").last.flatMap({ Int($0, radix: 16) }) else { continue }
            total = (total ?? 0) + queued
        }
        return total
    }
}
