import Glibc
import RTCShareCore
import RTCShareICE
import RTCShareIO
import RTCShareTransport

/// A TURN allocation made for one offer: the client (handed to the connection with the ICE
/// agent) and, over TCP or TLS, the stream to its server (kept by the session).
struct WHIPRelay {
    var client: TURNClient<SystemRandomNumberGenerator>
    var stream: TURNStream?
    var configuration: TURNServerConfiguration
}

extension WHIPSink {
    /// Allocates on every TURN server at once from `socket` (UDP) or a connection of its own
    /// (TCP, TLS) and keeps the best that allocated: UDP before TCP before TLS, so a network that
    /// lets UDP out relays over UDP and one that lets only TCP 443 out over TLS. Blocks the
    /// caller (an offer is being written) until the best possible allocated, every server
    /// answered, or `timeout` passed; 300 ms more for a better one once one allocated. The
    /// others are let go (UDP: deallocated; a stream: closed, which ends its allocation).
    static func allocateRelay(_ servers: [TURNServerConfiguration], socket: UDPSocket, configuration: WHIPConfiguration)
        -> (WHIPRelay?, notice: String, failures: [TURNFailure])
    {
        var attempts: [RelayAttempt] = []
        let start = MonotonicClock.now()
        var failures: [TURNFailure] = []
        for server in servers {
            do throws(SocketError) {
                attempts.append(try RelayAttempt(server, configuration: configuration, at: start))
            } catch {
                failures.append(.unreachable(server: "\(server.uri)", why: error.description))
            }
        }
        let deadline = start + .milliseconds(Int64(configuration.relayGatheringTimeoutMilliseconds))
        var firstAllocated: MediaTime?
        let inbox = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
        defer { inbox.deallocate() }
        var now = start
        while true {
            for i in attempts.indices { attempts[i].pump(socket: socket, buffer: inbox, at: now) }
            let allocated = attempts.filter { $0.client.isAllocated }
            if firstAllocated == nil, !allocated.isEmpty { firstAllocated = now }
            let best = allocated.map(\.configuration.uri.transport!).min()
            let undecided = attempts.contains { $0.outcome == nil && !$0.client.isAllocated }
            if !undecided || now >= deadline || best == .udp
                || firstAllocated.map({ now - $0 >= .milliseconds(300) }) ?? false { break }
            now = wait(&attempts, socket: socket, inbox: inbox, until: min(deadline, firstAllocated.map { $0 + .milliseconds(300) } ?? deadline))
        }
        // The best allocation, then what each of the others came to.
        let chosen = attempts.indices.filter { attempts[$0].client.isAllocated }
            .min { attempts[$0].configuration.uri.transport! < attempts[$1].configuration.uri.transport! }
        var parts: [String] = []
        var relay: WHIPRelay?
        for i in attempts.indices {
            let a = attempts[i]
            if i == chosen {
                relay = WHIPRelay(client: a.client, stream: a.stream, configuration: a.configuration)
                parts.append("\(a.configuration.uri) relays at \(a.client.relayedAddress!) ("
                             + (a.client.mappedAddress.map { "it sees \($0); " } ?? "")
                             + "lifetime \(a.client.lifetimeSeconds) s)")
                continue
            }
            if a.client.isAllocated {
                parts.append("\(a.configuration.uri): allocated, not used")
            } else {
                let failure = a.outcome ?? .noAnswer(server: "\(a.configuration.uri)", after: MonotonicClock.now() - start)
                failures.append(failure)
            }
            attempts[i].release(socket: socket, buffer: inbox)
        }
        parts += failures.map(\.description)
        let ms = (MonotonicClock.now() - start).microseconds / 1000
        return (relay, "TURN in \(ms) ms: " + parts.joined(separator: "; "), failures)
    }

    /// Sleeps until one of the attempts' sockets has something, or `until`; reads it.
    private static func wait(_ attempts: inout [RelayAttempt], socket: UDPSocket, inbox: UnsafeMutableRawBufferPointer,
                             until: MediaTime) -> MediaTime {
        var fds = [pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)]
        for a in attempts {
            guard let stream = a.stream, a.outcome == nil else { continue }
            let events = (stream.wantsWrite ? POLLOUT : 0) | (stream.phase == .connecting ? 0 : POLLIN)
            fds.append(pollfd(fd: stream.descriptor, events: Int16(events), revents: 0))
        }
        var wake = until
        for a in attempts { if let d = a.client.nextDeadline, d < wake { wake = d } }
        let now = MonotonicClock.now()
        let ms = Int32(clamping: max(0, ((wake - now).microseconds + 999) / 1000))
        _ = poll(&fds, nfds_t(fds.count), ms)
        let after = MonotonicClock.now()
        if fds[0].revents != 0 {
            for _ in 0..<64 {
                guard case .datagram(let count, let from) = socket.receive(into: inbox) else { break }
                guard let source = iceAddress(from),
                      let a = attempts.firstIndex(where: { $0.stream == nil && $0.client.configuration.server == source })
                else { continue }
                _ = attempts[a].client.receive(UnsafeRawBufferPointer(rebasing: inbox[0..<count]), at: after)
            }
        }
        for a in attempts.indices where attempts[a].stream != nil { attempts[a].serviceStream(at: after) }
        return after
    }
}

/// One TURN server being allocated on.
struct RelayAttempt {
    let configuration: TURNServerConfiguration
    var client: TURNClient<SystemRandomNumberGenerator>
    var stream: TURNStream?
    /// Why it failed; nil while undecided or allocated.
    var outcome: TURNFailure?
    private var started = false

    init(_ configuration: TURNServerConfiguration, configuration whip: WHIPConfiguration, at now: MediaTime) throws(SocketError) {
        self.configuration = configuration
        let uri = configuration.uri
        let address: SocketAddress
        if let numeric = uri.numericAddress {
            address = WHIPSink.socketAddress(numeric)
        } else {
            address = try SocketAddress(host: uri.host, port: Int(uri.port))
        }
        guard let server = WHIPSink.iceAddress(address), server.family == .ipv4 else {
            throw SocketError("\(uri.host) has no IPv4 address")
        }
        var c = TURNClient<SystemRandomNumberGenerator>.Configuration(server: server, transport: uri.transport ?? .udp,
                                         credentials: configuration.credentials, name: "\(uri)")
        c.software = "rtcshare \(RTCShareVersion.current)"
        c.lifetimeSeconds = UInt32(clamping: whip.turnLifetimeSeconds)
        c.requestTimeout = .milliseconds(Int64(max(whip.relayGatheringTimeoutMilliseconds, 8_000)))
        client = TURNClient(configuration: c, random: SystemRandomNumberGenerator())
        if c.transport != .udp {
            stream = try TURNStream(server: server, address: address, tlsHost: c.transport == .tls ? uri.host : nil,
                                    caFile: whip.iceCAFile)
        }
    }

    /// Sends what the client has, starts it once its way to the server is up, and notes its end.
    /// `buffer`: at least `TURNClient.maximumMessageSize` bytes of scratch.
    mutating func pump(socket: UDPSocket, buffer: UnsafeMutableRawBufferPointer, at now: MediaTime) {
        guard outcome == nil else { return }
        if !started && (stream == nil || stream!.connected) {
            started = true
            client.start(at: now)
        }
        client.tick(at: now)
        while let n = client.pollTransmit(into: buffer) {
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            if let stream { stream.send(bytes) } else { _ = socket.send(bytes, to: WHIPSink.socketAddress(client.configuration.server)) }
        }
        while let event = client.pollEvent() {
            if case .failed(let failure) = event { outcome = failure }
        }
    }

    /// The stream's connect (and TLS handshake), its reads and writes.
    mutating func serviceStream(at now: MediaTime) {
        guard let stream, outcome == nil else { return }
        if stream.phase == .connecting {
            let (_, writable) = stream.connection.wait(readable: false, writable: true, timeoutMicroseconds: 0)
            guard writable else { return }
            if let why = stream.finishConnect() { broke(why) }
            return
        }
        if let why = stream.flush() { return broke(why) }
        var client = self.client
        let why = stream.receiveFrames { frame, count in
            _ = client.receive(UnsafeRawBufferPointer(rebasing: frame[0..<count]), at: now)
        }
        self.client = client
        if let why { broke(why) }
    }

    /// The stream failed: before the allocation started, the server could not be reached (or
    /// its certificate was refused); after, the allocation is gone with it.
    private mutating func broke(_ why: String) {
        let name = "\(configuration.uri)"
        if stream?.certificateRefused == true {
            outcome = .certificate(server: name, why: why)
        } else if !started {
            outcome = .unreachable(server: name, why: why)
        } else {
            client.streamClosed(why)
        }
    }

    /// Lets an allocation not chosen go.
    mutating func release(socket: UDPSocket, buffer: UnsafeMutableRawBufferPointer) {
        client.close(at: MonotonicClock.now())
        if stream == nil {
            while let n = client.pollTransmit(into: buffer) {
                _ = socket.send(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), to: WHIPSink.socketAddress(client.configuration.server))
            }
        }
        stream = nil
    }
}
