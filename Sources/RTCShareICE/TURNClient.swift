// A TURN client for one allocation (RFC 8656), sans-IO like the ICE agent beside it: what the
// server sends and the time go in; messages for the server, events and the next deadline come
// out, and the datagrams ICE, DTLS and SRTP send through the relay are wrapped in place.
//
// Life of an allocation:
// - Allocate (REQUESTED-TRANSPORT UDP, LIFETIME asked), first without credentials; the 401's
//   REALM and NONCE key the retry (TURNCredentials). 438 Stale Nonce takes the new nonce and
//   tries again. A 401 to a request that carried the credentials: they are wrong (failure).
// - Allocated: the relayed address is the candidate ICE pairs (its base is itself) and the
//   mapped address its related address. Refresh before the lifetime runs out (half way, or a
//   minute before for long lifetimes); a refresh refused or unanswered fails the allocation.
// - Toward each peer the agent sends to: ChannelBind (it installs the permission too, §12.1),
//   renewed every 4 minutes (permissions last 5, channels 10). Until it is answered, datagrams
//   to that peer are held (a few, bounded); after, they go as ChannelData (4 bytes overhead).
//   More peers than channels: CreatePermission and Send indications.
// - `close` sends Refresh with LIFETIME 0 (deallocation), once, without waiting for the answer.
//
// Over UDP, requests are retransmitted (RTO from `minimumRTO`, doubling, RFC 8489 §6.2.1);
// over a stream (TCP, TLS) they are sent once and time out. Everything from the server is
// untrusted: responses are matched by transaction, checked for MESSAGE-INTEGRITY once the key
// is known, and what does not fit is dropped and counted, never fatal or a trap.

import RTCShareCore

/// What the client tells its owner.
public enum TURNEvent: Equatable, Sendable {
    /// The server allocated `relayed`; it sees the client as `mapped`.
    case allocated(relayed: ICEAddress, mapped: ICEAddress?, lifetimeSeconds: UInt32)
    /// The allocation could not be made or was lost; nothing more is relayed.
    case failed(TURNFailure)
}

/// Why an allocation failed or ended.
public enum TURNFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The server refused the username and password (401 with them).
    case unauthorized(server: String)
    /// No answer within the timeout.
    case noAnswer(server: String, after: MediaDuration)
    /// The server answered with an error (quota, capacity, forbidden, mismatch …).
    case refused(server: String, method: String, code: Int, reason: String)
    /// A refresh was refused or unanswered: the allocation is gone.
    case lost(server: String, why: String)
    /// The stream to the server closed or broke (TCP, TLS).
    case streamClosed(server: String, why: String)
    /// The server cannot be reached (its name does not resolve, the connection is refused).
    case unreachable(server: String, why: String)
    /// The server's TLS certificate does not verify (untrusted, expired, another name).
    case certificate(server: String, why: String)

    /// A failure that another attempt cannot fix (wrong credentials).
    public var isPermanent: Bool {
        if case .unauthorized = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .unauthorized(let s): "TURN server \(s) refused the username and password (401 Unauthorized)"
        case .noAnswer(let s, let d): "TURN server \(s) did not answer within \(d.iceText)"
        case .refused(let s, let m, let c, let r): "TURN server \(s) refused \(m): \(c) \(r)"
        case .lost(let s, let why): "TURN allocation on \(s) lost: \(why)"
        case .streamClosed(let s, let why): "TURN connection to \(s) closed: \(why)"
        case .unreachable(let s, let why): "TURN server \(s) cannot be reached: \(why)"
        case .certificate(let s, let why): "TURN server \(s): its TLS certificate does not verify: \(why)"
        }
    }
}

/// Where the allocation is.
public enum TURNState: Equatable, Sendable {
    case idle
    case allocating
    case allocated
    case failed(TURNFailure)
    /// Deallocated by `close`.
    case closed
}

/// How a datagram from the server was taken.
public enum TURNReceived: Equatable, Sendable {
    /// A datagram a peer sent to the relayed address: `data` of the buffer handed in.
    case relayed(from: ICEAddress, data: Range<Int>)
    /// A response or indication for the client itself (or dropped and counted).
    case consumed
}

/// One allocation on one TURN server (see the file's notes).
public struct TURNClient<Random: RandomNumberGenerator> {
    public struct Configuration: Sendable, Equatable {
        /// The server's address (numeric: the edge resolved any name).
        public var server: ICEAddress
        /// How it is reached; a stream pads ChannelData and never retransmits.
        public var transport: TURNTransport
        public var credentials: TURNCredentials
        /// The lifetime asked for (the server may grant less).
        public var lifetimeSeconds: UInt32 = 600
        /// The first retransmission over UDP (then doubling).
        public var minimumRTO = MediaDuration.milliseconds(500)
        /// A request unanswered this long fails (Allocate: the edge's gathering may give up sooner).
        public var requestTimeout = MediaDuration.seconds(8)
        /// SOFTWARE on requests; nil sends none.
        public var software: String?
        /// How the server is named in messages (its URI).
        public var name: String

        public init(server: ICEAddress, transport: TURNTransport, credentials: TURNCredentials, name: String? = nil) {
            self.server = server
            self.transport = transport
            self.credentials = credentials
            self.name = name ?? "\(server)"
        }
    }

    /// Counts, for logs and tests.
    public struct Counters: Equatable, Sendable {
        public var requestsSent = 0
        public var retransmissions = 0
        public var responses = 0
        public var refreshes = 0
        public var channelsBound = 0
        public var staleNonces = 0
        /// Datagrams wrapped as ChannelData, and as Send indications.
        public var channelDataSent = 0
        public var indicationsSent = 0
        /// Datagrams held for a permission, and those dropped (held too many, or no way to send).
        public var held = 0
        public var dropped = 0
        /// Relayed datagrams received.
        public var relayedReceived = 0
        /// Malformed, unauthenticated, unknown-transaction or unknown-channel input.
        public var malformedDropped = 0
        public init() {}
    }

    /// Channels bound at most; more peers get permissions and Send indications.
    public static var maximumChannels: Int { 16 }
    /// Datagrams held while a peer's permission is being installed.
    public static var maximumHeld: Int { 8 }
    /// Peers (permissions) kept at most: ICE's candidates of one session, and those an ICE
    /// restart adds. Datagrams to more are dropped.
    public static var maximumPeers: Int { 32 }
    /// Permissions (and channels) are renewed this often (they last 5 and 10 minutes).
    static var renewal: MediaDuration { .seconds(240) }

    public let configuration: Configuration
    public internal(set) var state: TURNState = .idle
    public internal(set) var relayedAddress: ICEAddress?
    public internal(set) var mappedAddress: ICEAddress?
    public internal(set) var lifetimeSeconds: UInt32 = 0
    public internal(set) var counters = Counters()

    var random: Random
    var realm: String?
    var nonce: String?
    var key: [UInt8]?
    var algorithm: TURNCredentials.Algorithm = .md5
    var passwordAlgorithms: [UInt8]?
    var transactions: [TURNTransaction] = []
    var outgoing: [TURNOutgoing] = []
    var events: [TURNEvent] = []
    var peers: [TURNPeer] = []
    var held: [(peer: ICEAddress, bytes: [UInt8])] = []
    var refreshAt: MediaTime?
    var nextChannel: UInt16 = TURNWire.channelNumbers.lowerBound

    public init(configuration: Configuration, random: Random) {
        self.configuration = configuration
        self.random = random
    }

    var isStream: Bool { configuration.transport != .udp }

    // MARK: - driving

    /// Sends the Allocate request.
    public mutating func start(at now: MediaTime) {
        guard state == .idle else { return }
        state = .allocating
        request(.allocate, attributes: [.requestedTransport(17), .lifetime(configuration.lifetimeSeconds)], at: now)
    }

    /// Retransmissions, timeouts, the allocation's refresh and the peers' renewals.
    public mutating func tick(at now: MediaTime) {
        runTransactions(at: now)
        guard state == .allocated else { return }
        if let at = refreshAt, now >= at {
            refreshAt = nil
            counters.refreshes += 1
            request(.refresh, attributes: [.lifetime(configuration.lifetimeSeconds)], at: now)
        }
        for i in peers.indices where peers[i].renewAt.map({ now >= $0 }) ?? false {
            peers[i].renewAt = nil
            requestPermission(i, at: now)
        }
    }

    /// The stream to the server broke: the allocation is gone with it (RFC 8656 §3.1).
    public mutating func streamClosed(_ why: String) {
        guard state == .allocating || state == .allocated else { return }
        fail(.streamClosed(server: configuration.name, why: why))
    }

    /// Deallocates (Refresh, LIFETIME 0), without waiting for the answer.
    public mutating func close(at now: MediaTime) {
        guard state == .allocated else {
            if state == .allocating { state = .closed }
            return
        }
        transactions.removeAll()
        request(.refresh, attributes: [.lifetime(0)], at: now, retransmits: false)
        state = .closed
        held.removeAll()
    }

    // MARK: - output

    /// The next control message for the server (at most `maximumMessageSize` bytes), or a held
    /// datagram whose peer now has a channel or permission; nil when there is none.
    public mutating func pollTransmit(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        while !outgoing.isEmpty {
            let o = outgoing.removeFirst()
            if let n = write(o, into: buffer) { return n }
        }
        for i in held.indices {
            guard let p = peers.first(where: { $0.address == held[i].peer && $0.installed }) else { continue }
            let h = held.remove(at: i)
            return h.bytes.withUnsafeBytes { wrapReady($0, to: p, into: buffer) }
        }
        return nil
    }

    public static var maximumMessageSize: Int { 1024 }

    public mutating func pollEvent() -> TURNEvent? { events.isEmpty ? nil : events.removeFirst() }

    /// When `tick` next has something to do.
    public var nextDeadline: MediaTime? {
        var t: MediaTime? = nil
        func consider(_ c: MediaTime?) { if let c, t == nil || c < t! { t = c } }
        for tx in transactions { consider(tx.retransmits ? min(tx.nextRetransmit, tx.expires) : tx.expires) }
        guard state == .allocated else { return t }
        consider(refreshAt)
        for p in peers { consider(p.renewAt) }
        return t
    }

    /// Whether datagrams can be relayed now.
    public var isAllocated: Bool { state == .allocated }

    // MARK: - data

    /// Wraps `payload` for `peer` into `buffer` (payload + `TURNWire.maximumOverhead` bytes
    /// suffice): ChannelData once a channel is bound, a Send indication with a permission.
    /// Without either yet, a permission is asked for and the datagram held (nil returned).
    public mutating func wrap(_ payload: UnsafeRawBufferPointer, to peer: ICEAddress,
                              into buffer: UnsafeMutableRawBufferPointer, at now: MediaTime) -> Int? {
        guard state == .allocated, peer.family == relayedAddress?.family else {
            counters.dropped += 1
            return nil
        }
        if let p = peers.firstIndex(where: { $0.address == peer }) {
            if peers[p].installed { return wrapReady(payload, to: peers[p], into: buffer) }
        } else {
            guard peers.count < Self.maximumPeers else {
                counters.dropped += 1
                return nil
            }
            addPeer(peer, at: now)
        }
        hold(payload, for: peer)
        return nil
    }

    /// Asks for permissions (and channels) toward `peers` ahead of the first datagram (the
    /// answer's candidates): the first checks then need not wait for them.
    public mutating func permit(_ addresses: [ICEAddress], at now: MediaTime) {
        guard state == .allocated else { return }
        for a in addresses where a.family == relayedAddress?.family && !peers.contains(where: { $0.address == a })
            && peers.count < Self.maximumPeers {
            addPeer(a, at: now)
        }
    }

    /// Takes one message from the server: a response or indication for the client, or a
    /// relayed datagram (ChannelData or a Data indication) whose bytes are left in place.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, at now: MediaTime) -> TURNReceived {
        if let (channel, data) = TURNWire.readChannelData(bytes) {
            guard let p = peers.first(where: { $0.channel == channel && $0.installed }) else {
                counters.malformedDropped += 1
                return .consumed
            }
            counters.relayedReceived += 1
            return .relayed(from: p.address, data: data)
        }
        if let (peer, data) = TURNWire.readDataIndication(bytes) {
            counters.relayedReceived += 1
            return .relayed(from: peer, data: data)
        }
        handleResponse(bytes, at: now)
        return .consumed
    }

    /// A datagram to a peer with a permission: ChannelData on its channel, else a Send indication.
    mutating func wrapReady(_ payload: UnsafeRawBufferPointer, to peer: TURNPeer,
                            into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        if let channel = peer.channel {
            guard let n = TURNWire.writeChannelData(payload, channel: channel, padded: isStream, into: buffer) else {
                counters.dropped += 1
                return nil
            }
            counters.channelDataSent += 1
            return n
        }
        guard let n = TURNWire.writeSendIndication(payload, to: peer.address, transactionID: STUNTransactionID(using: &random),
                                                   into: buffer) else {
            counters.dropped += 1
            return nil
        }
        counters.indicationsSent += 1
        return n
    }

    mutating func hold(_ payload: UnsafeRawBufferPointer, for peer: ICEAddress) {
        if held.count == Self.maximumHeld {
            held.removeFirst()
            counters.dropped += 1
        }
        held.append((peer, Array(payload)))
        counters.held += 1
    }

    mutating func addPeer(_ address: ICEAddress, at now: MediaTime) {
        var peer = TURNPeer(address: address)
        let bound = peers.filter { $0.channel != nil }.count
        if bound < Self.maximumChannels && nextChannel <= TURNWire.channelNumbers.upperBound {
            peer.channel = nextChannel
            nextChannel += 1
        }
        peers.append(peer)
        requestPermission(peers.count - 1, at: now)
    }

    /// ChannelBind for a peer with a channel number, CreatePermission for one without.
    mutating func requestPermission(_ p: Int, at now: MediaTime) {
        let peer = peers[p]
        if let channel = peer.channel {
            request(.channelBind(peer.address), attributes: [.channelNumber(channel), .xorPeerAddress(peer.address)], at: now)
        } else {
            var ip = peer.address
            ip.port = 0
            request(.createPermission(peer.address), attributes: [.xorPeerAddress(ip)], at: now)
        }
    }

    mutating func fail(_ failure: TURNFailure) {
        if case .failed = state { return }
        state = .failed(failure)
        transactions.removeAll()
        outgoing.removeAll()
        held.removeAll()
        events.append(.failed(failure))
    }
}

/// A peer the client relays to: its permission and maybe its channel.
struct TURNPeer {
    var address: ICEAddress
    var channel: UInt16?
    /// The server confirmed the permission (and the channel, if any).
    var installed = false
    /// When to renew; nil while a request is in flight.
    var renewAt: MediaTime?
}

/// A control message waiting for `pollTransmit`; authenticated when written.
struct TURNOutgoing {
    var message: STUNMessage
    var authenticated: Bool
}
