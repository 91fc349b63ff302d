import Glibc

// Numeric forms of a socket address, for protocol code that keeps addresses as numbers (ICE):
// converting per datagram without formatting or parsing text.
extension SocketAddress {
    /// An IPv4 address (host byte order) and port.
    public init(ipv4: UInt32, port: Int) {
        self.init(family: AF_INET)
        withUnsafeMutableBytes(of: &storage) { raw in
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = UInt16(truncatingIfNeeded: port).bigEndian
            sin.sin_addr.s_addr = ipv4.bigEndian
            raw.storeBytes(of: sin, as: sockaddr_in.self)
        }
    }

    /// An IPv6 address (its 16 bytes as two big-endian halves, host byte order) and port.
    public init(ipv6High: UInt64, low: UInt64, port: Int) {
        self.init(family: AF_INET6)
        withUnsafeMutableBytes(of: &storage) { raw in
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = UInt16(truncatingIfNeeded: port).bigEndian
            withUnsafeMutableBytes(of: &sin6.sin6_addr) { address in
                address.storeBytes(of: ipv6High.bigEndian, toByteOffset: 0, as: UInt64.self)
                address.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            raw.storeBytes(of: sin6, as: sockaddr_in6.self)
        }
    }

    /// The IPv4 address in host byte order; nil for another family.
    public var ipv4: UInt32? {
        guard family == AF_INET else { return nil }
        return withUnsafeBytes(of: storage) { UInt32(bigEndian: $0.load(as: sockaddr_in.self).sin_addr.s_addr) }
    }

    /// The IPv6 address as two halves in host byte order; nil for another family.
    public var ipv6: (high: UInt64, low: UInt64)? {
        guard family == AF_INET6 else { return nil }
        return withUnsafeBytes(of: storage) { raw in
            let offset = MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!
            return (UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
                    UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
        }
    }

    /// The IPv4 addresses of this host's interfaces that are up (loopback last), with `port`.
    public static func interfaceAddresses(port: Int) -> [SocketAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var found: [SocketAddress] = [], loopback: [SocketAddress] = []
        var entry = list
        while let e = entry {
            defer { entry = e.pointee.ifa_next }
            guard let address = e.pointee.ifa_addr, Int32(address.pointee.sa_family) == AF_INET,
                  e.pointee.ifa_flags & UInt32(IFF_UP) != 0 else { continue }
            let value = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
            let socketAddress = SocketAddress(ipv4: value, port: port)
            if e.pointee.ifa_flags & UInt32(IFF_LOOPBACK) != 0 { loopback.append(socketAddress) } else { found.append(socketAddress) }
        }
        return found + loopback
    }
}
