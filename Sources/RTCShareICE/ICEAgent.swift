// A full ICE agent for one data stream with one component (RTP and RTCP multiplexed), sans-IO
// (RFC 8445, consent per RFC 7675). Datagrams and times go in; datagrams to send, events and
// the next deadline come out. No socket, clock or random source inside: the generator is
// injected (transaction IDs, tie-breaker, credentials, consent jitter), so a seed replays a run.
//
// Run-loop contract: after every `handle`, `tick`, `start` or candidate change, drain
// `pollTransmit` and `pollEvent` until nil, then sleep until `nextDeadline` (or input).
//
// Invariants:
// - Pairs are only ever appended, so a pair's index is stable; transactions and the triggered
//   queue refer to pairs by index. Pairs use the local candidate's base (RFC 8445 §6.1.2.4
//   prunes reflexive locals to their base), at most one pair per (base, remote address), at
//   most `maxPairs`. Server-reflexive candidates are signalled, never paired on their own.
// - Gathering (ICEAgent+Gathering.swift) may run before `start`, so an offer can carry what it
//   learned; it ends within `gatheringTimeout` of its start whatever the servers do.
// - At most one new transaction starts per Ta (`nextPacing`), triggered checks first, then
//   server-reflexive gathering, then the highest-priority Waiting pair, then Frozen (§6.1.4.2).
//   Retransmissions follow their own RTO and are not paced.
// - A pair's `transaction` is its live check; an older one cancelled by a triggered check
//   (§7.3.1.4) still accepts its response but neither retransmits nor fails the pair.
// - Every request we answer or send is authenticated: requests must carry our ufrag and a
//   MESSAGE-INTEGRITY keyed with our password; responses one keyed with the peer's. Anything
//   else is dropped and counted, never fatal. A present FINGERPRINT must match.
// - Nomination is regular (§8.1.1): the controlling agent repeats the check of the first valid
//   pair with USE-CANDIDATE; the pair is selected when that check succeeds. The controlled
//   agent selects a valid pair once the peer's USE-CANDIDATE arrived on it. Selection happens
//   once; afterwards only consent runs (and peer checks are still answered).
// - The valid pair is the checked pair: a mapped address that differs from the base (NAT on
//   our side) names a peer-reflexive local candidate with that same base, so media goes out the
//   same way; it is kept as the selected pair's `local`.

import RTCShareCore

/// An ICE agent; `Random` supplies every random bit it uses.
public struct ICEAgent<Random: RandomNumberGenerator> {
    /// Counts of what happened, for logs and tests.
    public struct Counters: Equatable, Sendable {
        public var requestsReceived = 0
        public var responsesReceived = 0
        /// New request transactions (checks, consent, gathering).
        public var requestsSent = 0
        public var retransmissions = 0
        public var responsesSent = 0
        public var errorResponsesSent = 0
        /// STUN-looking datagrams that did not parse, had a wrong FINGERPRINT, or were not
        /// a Binding request/response.
        public var malformedDropped = 0
        /// Wrong USERNAME, missing or wrong MESSAGE-INTEGRITY.
        public var unauthenticatedDropped = 0
        /// Responses to no transaction of ours (late, duplicated or forged).
        public var unknownTransactionDropped = 0
        public var roleConflicts = 0
        public var peerReflexiveCandidates = 0
        public var pairsFailed = 0
        /// STUN servers' success answers that named a mapped address.
        public var serverReflexiveAnswers = 0
        /// Gathering requests that got an error answer or none in time.
        public var gatheringFailures = 0
        /// Success answers on the selected pair that renewed consent (consent or check).
        public var consentAnswers = 0
        public init() {}
    }

    /// The largest datagram the agent writes; a `pollTransmit` buffer this big always suffices.
    public static var maximumMessageSize: Int { 1024 }

    public let configuration: ICEConfiguration
    public let localCredentials: ICECredentials
    public internal(set) var remoteCredentials: ICECredentials?
    public internal(set) var role: ICERole
    public internal(set) var state: ICEAgentState = .new
    public internal(set) var counters = Counters()
    public internal(set) var selectedPair: ICESelectedPair?
    /// The least round trip a check or consent request measured (answered at its first
    /// transmission); nil until one was.
    public internal(set) var leastRoundTrip: MediaDuration?
    /// When the peer last answered on the selected pair (consent or check); nil before the
    /// first answer after selection. What a silence of the path is measured from.
    public internal(set) var lastConsentAnswer: MediaTime?

    var random: Random
    let tieBreaker: UInt64
    var locals: [LocalCandidate] = []
    var remotes: [ICECandidate] = []

    /// The peer's candidates known so far (from its description, and peer-reflexive ones).
    public var remoteCandidates: [ICECandidate] { remotes }
    var pairs: [CandidatePair] = []
    var transactions: [Transaction] = []
    var triggered: [Int] = []
    var outgoing: [Outgoing] = []
    var events: [ICEEvent] = []
    var nextPacing = MediaTime(microseconds: .min)
    var connectDeadline = MediaTime.zero
    var pendingGathering: [PendingGathering] = []
    var gatheringStarted = false
    var gatheringReported = false
    /// When unanswered gathering is given up; nil until a round starts sending.
    var gatheringDeadline: MediaTime?
    var nominationPair: Int?
    var lastConsent = MediaTime.zero
    var nextConsent = MediaTime.zero

    /// `localCredentials` nil generates them from `random`.
    public init(configuration: ICEConfiguration = ICEConfiguration(), localCredentials: ICECredentials? = nil,
                random: Random) {
        precondition((configuration.software?.utf8.count ?? 0) <= 128, "SOFTWARE is limited to 128 bytes")
        precondition(configuration.maxTransmissions >= 1 && configuration.maxPairs >= 1, "bad ICE limits")
        var r = random
        self.localCredentials = localCredentials ?? ICECredentials.generate(using: &r)
        tieBreaker = r.next()
        self.random = r
        self.configuration = configuration
        role = configuration.role
    }

    // MARK: - setup

    /// Adds a host candidate at `address` (a socket's local address, numeric) and returns it
    /// for the SDP. Use a distinct `localPreference` per interface when there are several.
    @discardableResult
    public mutating func addHostCandidate(_ address: ICEAddress, localPreference: UInt16 = 65_535) -> ICECandidate {
        if let existing = locals.first(where: { $0.base == address && $0.candidate.type == .host }) {
            return existing.candidate
        }
        let candidate = ICECandidate(foundation: foundation(type: .host, base: address, server: nil),
                                     priority: ICECandidate.priority(type: .host, localPreference: localPreference),
                                     address: address, type: .host)
        locals.append(LocalCandidate(candidate: candidate, base: address, localPreference: localPreference))
        for r in remotes.indices { addPair(local: locals.count - 1, remote: r) }
        if gatheringStarted { queueGathering(from: address) }
        return candidate
    }

    /// Adds the relayed candidate a TURN allocation gave (RFC 8445 §5.1.1.2: its base is itself;
    /// `mapped`, the address the TURN server saw, is its related address) and returns it for the
    /// SDP. Checks and media from it go through the relay: `pollTransmit` names it as the
    /// source, and what arrives through the relay is handed in with it as `local`.
    @discardableResult
    public mutating func addRelayedCandidate(_ relayed: ICEAddress, mapped: ICEAddress?, server: ICEAddress,
                                             localPreference: UInt16 = 65_535) -> ICECandidate {
        if let existing = locals.first(where: { $0.base == relayed && $0.candidate.type == .relayed }) {
            return existing.candidate
        }
        let candidate = ICECandidate(foundation: foundation(type: .relayed, base: relayed, server: server),
                                     priority: ICECandidate.priority(type: .relayed, localPreference: localPreference),
                                     address: relayed, type: .relayed, relatedAddress: mapped)
        locals.append(LocalCandidate(candidate: candidate, base: relayed, localPreference: localPreference, server: server))
        for r in remotes.indices { addPair(local: locals.count - 1, remote: r) }
        return candidate
    }

    /// Adds the relayed candidate of an allocated TURN client (nothing when it is not
    /// allocated), its local preference by how the client reaches its server: UDP above TCP above
    /// TLS.
    @discardableResult
    public mutating func addRelayedCandidate<R>(allocatedBy relay: TURNClient<R>) -> ICECandidate? {
        guard relay.isAllocated, let relayed = relay.relayedAddress else { return nil }
        return addRelayedCandidate(relayed, mapped: relay.mappedAddress, server: relay.configuration.server,
                                   localPreference: UInt16(20_000 + 10_000 * relay.configuration.transport.preference))
    }

    /// The local candidates so far (host, then server-reflexive as they are learned).
    public var localCandidates: [ICECandidate] { locals.map(\.candidate) }

    /// The peer's `a=ice-ufrag` / `a=ice-pwd`.
    public mutating func setRemoteCredentials(_ credentials: ICECredentials) {
        remoteCredentials = credentials
    }

    /// Adds a remote candidate (from the answer or trickled). Component ≠ 1 and candidates of a
    /// family no local candidate has are kept out of the checklist.
    public mutating func addRemoteCandidate(_ candidate: ICECandidate) {
        guard candidate.component == 1 else { return }
        if let i = remotes.firstIndex(where: { $0.address == candidate.address }) {
            // Signalled after being learned as peer-reflexive: the signalled one wins (§7.3.1.3).
            if remotes[i].type == .peerReflexive { remotes[i] = candidate }
            return
        }
        remotes.append(candidate)
        for l in locals.indices { addPair(local: l, remote: remotes.count - 1) }
    }

    /// Parses an `a=candidate` line and adds it; returns false for a candidate the agent
    /// ignores (TCP, names).
    @discardableResult
    public mutating func addRemoteCandidate(sdpAttribute line: some StringProtocol) throws(ICEError) -> Bool {
        guard let c = try ICECandidate.parse(sdpAttribute: line) else { return false }
        addRemoteCandidate(c)
        return true
    }

    /// Starts checking, and gathering unless `gather` did already; the connect timeout runs
    /// from `now`.
    public mutating func start(at now: MediaTime) {
        guard state == .new else { return }
        state = .checking
        connectDeadline = now + configuration.connectTimeout
        if !gatheringStarted { beginGathering(at: now) }
    }

    // MARK: - input

    /// Takes one received datagram. Returns false when it is not STUN (hand it to DTLS/SRTP);
    /// true when the agent consumed it, whatever it made of it. `local` is the address it
    /// arrived on, when the edge knows it; otherwise the first local base of its family.
    @discardableResult
    public mutating func handle(_ bytes: UnsafeRawBufferPointer, from source: ICEAddress, to local: ICEAddress? = nil,
                                at now: MediaTime) -> Bool {
        guard looksLikeSTUN(bytes) else { return false }
        let parsed: STUNParsedMessage
        do {
            parsed = try STUNMessage.parse(bytes)
        } catch {
            counters.malformedDropped += 1
            return true
        }
        if parsed.fingerprint != nil && !parsed.verifyFingerprint(bytes) {
            counters.malformedDropped += 1
            return true
        }
        guard parsed.message.type.method == STUNMessageType.bindingMethod else {
            counters.malformedDropped += 1
            return true
        }
        switch parsed.message.type.messageClass {
        case .request:
            handleRequest(parsed, bytes, from: source, local: local, at: now)
        case .successResponse, .errorResponse:
            handleResponse(parsed, bytes, from: source, at: now)
        case .indication:
            break  // keepalives from the peer (RFC 8445 §11); nothing to do
        }
        return true
    }

    /// Runs what is due at `now`: retransmissions, timeouts, the next paced check, consent.
    public mutating func tick(at now: MediaTime) {
        expireGathering(at: now)
        runTransactions(at: now)
        switch state {
        case .new:
            if gatheringStarted { startPacedTransaction(at: now) }
        case .checking:
            if now >= connectDeadline {
                fail(.timedOut(after: configuration.connectTimeout, pairs: pairs.count,
                               succeeded: pairs.filter { $0.state == .succeeded }.count))
                return
            }
            startPacedTransaction(at: now)
            checkAllFailed()
        case .connected:
            startPacedTransaction(at: now)
            runConsent(at: now)
        default:
            break
        }
    }

    // MARK: - output

    /// Writes the next datagram into `buffer` (at least `maximumMessageSize` bytes always
    /// suffices) and says where it goes; nil when there is nothing to send.
    public mutating func pollTransmit(into buffer: UnsafeMutableRawBufferPointer) -> ICETransmit? {
        while !outgoing.isEmpty {
            let o = outgoing.removeFirst()
            let key: [UInt8]?
            switch o.key {
            case .none: key = nil
            case .local: key = localCredentials.key
            case .remote:
                guard let remote = remoteCredentials else { continue }
                key = remote.key
            }
            guard let n = try? o.message.write(into: buffer, integrityKey: key, fingerprint: true) else { continue }
            return ICETransmit(count: n, destination: o.destination, source: o.source)
        }
        return nil
    }

    public mutating func pollEvent() -> ICEEvent? {
        events.isEmpty ? nil : events.removeFirst()
    }

    /// When `tick` next has something to do; nil when nothing is scheduled (neither started
    /// nor gathering, failed, or consent lost).
    public var nextDeadline: MediaTime? {
        var t: MediaTime? = nil
        func consider(_ c: MediaTime) { if t == nil || c < t! { t = c } }
        for tx in transactions { consider(tx.retransmits ? tx.nextRetransmit : tx.expires) }
        if !gatheringReported, let d = gatheringDeadline { consider(d) }
        switch state {
        case .new:
            guard gatheringStarted, !gatheringReported else { return nil }
            if hasTransactionToStart { consider(nextPacing) }
        case .checking:
            consider(connectDeadline)
            if hasTransactionToStart { consider(nextPacing) }
        case .connected:
            if hasTransactionToStart { consider(nextPacing) }
            consider(nextConsent)
            consider(lastConsent + configuration.consentTimeout)
        default:
            return nil
        }
        return t
    }

    // MARK: - shared helpers

    mutating func emit(_ event: ICEEvent) { events.append(event) }

    mutating func fail(_ failure: ICEFailure) {
        state = .failed(failure)
        transactions.removeAll()
        triggered.removeAll()
        outgoing.removeAll()
        emit(.failed(failure))
    }

    /// The foundation of a local candidate: one per (type, base IP, STUN or TURN server IP)
    /// (§5.1.1.3; the transport toward the peer is always UDP here).
    func foundation(type: ICECandidateType, base: ICEAddress, server: ICEAddress?) -> String {
        func ip(_ a: ICEAddress?) -> ICEAddress? { a.map { var x = $0; x.port = 0; return x } }
        for l in locals where l.candidate.type == type && ip(l.base) == ip(base) && ip(l.server) == ip(server) {
            return l.candidate.foundation
        }
        return String(locals.count + 1)
    }
}

/// A local candidate and the address its datagrams leave from.
struct LocalCandidate {
    var candidate: ICECandidate
    var base: ICEAddress
    var localPreference: UInt16
    /// The STUN server that told us of a server-reflexive candidate, or the TURN server of a
    /// relayed one.
    var server: ICEAddress? = nil

    /// Host and relayed candidates are paired; reflexive ones are sent from their host base.
    var isPaired: Bool { candidate.type == .host || candidate.type == .relayed }
}

/// A datagram waiting for `pollTransmit`; written (and authenticated) only then.
struct Outgoing {
    enum Key { case none, local, remote }
    var message: STUNMessage
    var key: Key
    var destination: ICEAddress
    var source: ICEAddress
}
