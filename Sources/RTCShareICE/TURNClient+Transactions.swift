// The TURN client's requests and what their answers do (RFC 8656 §7–§12, RFC 8489 §9.2 for
// the long-term credential dance). See TURNClient.swift for the allocation's life.

import RTCShareCore

/// One request of the client in flight.
struct TURNTransaction {
    enum Kind: Equatable {
        case allocate
        case refresh
        case channelBind(ICEAddress)
        case createPermission(ICEAddress)

        var name: String {
            switch self {
            case .allocate: "Allocate"
            case .refresh: "Refresh"
            case .channelBind: "ChannelBind"
            case .createPermission: "CreatePermission"
            }
        }

        var method: UInt16 {
            switch self {
            case .allocate: STUNMessageType.allocateMethod
            case .refresh: STUNMessageType.refreshMethod
            case .channelBind: STUNMessageType.channelBindMethod
            case .createPermission: STUNMessageType.createPermissionMethod
            }
        }
    }

    var id: STUNTransactionID
    var kind: Kind
    /// The request's own attributes (credentials are added when it is written).
    var attributes: [STUNAttribute]
    /// Sent with the credentials (a 401 to it means they are wrong).
    var authenticated: Bool
    /// 438 Stale Nonce answers taken for this request.
    var staleNonces = 0
    var retransmits: Bool
    var rto: MediaDuration
    var nextRetransmit: MediaTime
    var expires: MediaTime
    var started: MediaTime
}

extension TURNClient {
    /// Starts a request (or its retry with new credentials, under a new transaction ID).
    mutating func request(_ kind: TURNTransaction.Kind, attributes: [STUNAttribute], at now: MediaTime,
                          retransmits: Bool = true, staleNonces: Int = 0) {
        let tx = TURNTransaction(id: STUNTransactionID(using: &random), kind: kind, attributes: attributes,
                                 authenticated: key != nil, staleNonces: staleNonces,
                                 retransmits: retransmits && !isStream, rto: configuration.minimumRTO,
                                 nextRetransmit: now + configuration.minimumRTO, expires: now + configuration.requestTimeout,
                                 started: now)
        counters.requestsSent += 1
        outgoing.append(TURNOutgoing(message: message(of: tx), authenticated: tx.authenticated))
        // A deallocation is fire-and-forget: nothing waits for its answer.
        if retransmits { transactions.append(tx) }
    }

    func message(of tx: TURNTransaction) -> STUNMessage {
        var attributes = tx.attributes
        if tx.authenticated, let realm, let nonce {
            attributes.append(.username(configuration.credentials.username))
            attributes.append(.realm(realm))
            attributes.append(.nonce(nonce))
            // The server's PASSWORD-ALGORITHMS, echoed in every authenticated request (RFC 8489 §9.2.4).
            if let offered = passwordAlgorithms {
                attributes.append(.passwordAlgorithms(offered))
                attributes.append(.passwordAlgorithm(algorithm.rawValue))
            }
        }
        if let s = configuration.software { attributes.append(.software(s)) }
        return STUNMessage(type: STUNMessageType(method: tx.kind.method, class: .request), transactionID: tx.id,
                           attributes: attributes)
    }

    func write(_ o: TURNOutgoing, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        try? o.message.write(into: buffer, integrityKey: o.authenticated ? key : nil, fingerprint: true)
    }

    mutating func runTransactions(at now: MediaTime) {
        var i = 0
        while i < transactions.count {
            if now >= transactions[i].expires {
                let tx = transactions.remove(at: i)
                timedOut(tx, at: now)
                continue
            }
            if transactions[i].retransmits && now >= transactions[i].nextRetransmit {
                counters.retransmissions += 1
                outgoing.append(TURNOutgoing(message: message(of: transactions[i]), authenticated: transactions[i].authenticated))
                transactions[i].rto = transactions[i].rto * 2
                transactions[i].nextRetransmit = now + transactions[i].rto
            }
            i += 1
        }
    }

    mutating func timedOut(_ tx: TURNTransaction, at now: MediaTime) {
        switch tx.kind {
        case .allocate:
            fail(.noAnswer(server: configuration.name, after: now - tx.started))
        case .refresh:
            fail(.lost(server: configuration.name, why: "no answer to a Refresh within \((now - tx.started).iceText)"))
        case .channelBind(let peer), .createPermission(let peer):
            // Asked again later: the peer keeps any permission it had until it expires.
            if let p = peers.firstIndex(where: { $0.address == peer }) { peers[p].renewAt = now + .seconds(5) }
        }
    }

    /// A STUN message from the server: the answer to one of the client's requests.
    mutating func handleResponse(_ bytes: UnsafeRawBufferPointer, at now: MediaTime) {
        guard let parsed = try? STUNMessage.parse(bytes),
              parsed.fingerprint == nil || parsed.verifyFingerprint(bytes) else {
            counters.malformedDropped += 1
            return
        }
        let m = parsed.message
        guard m.type.messageClass == .successResponse || m.type.messageClass == .errorResponse,
              let t = transactions.firstIndex(where: { $0.id == m.transactionID }),
              transactions[t].kind.method == m.type.method else {
            counters.malformedDropped += 1
            return
        }
        let tx = transactions[t]
        // A success to an authenticated request must carry the server's MESSAGE-INTEGRITY with
        // the same key (RFC 8489 §9.2.5); an error answer may not (it may be changing the nonce).
        if m.type.messageClass == .successResponse, tx.authenticated {
            guard let key, parsed.verifyIntegrity(bytes, key: key) else {
                counters.malformedDropped += 1
                return
            }
        }
        guard parsed.unknownComprehensionRequired.isEmpty else {
            counters.malformedDropped += 1
            return
        }
        transactions.remove(at: t)
        counters.responses += 1
        if m.type.messageClass == .errorResponse {
            handleError(m, tx, at: now)
        } else {
            handleSuccess(m, tx, at: now)
        }
    }

    mutating func handleError(_ m: STUNMessage, _ tx: TURNTransaction, at now: MediaTime) {
        let code = m.errorCode ?? 0
        switch code {
        case 401 where !tx.authenticated:
            guard let realm = m.realm, let nonce = m.nonce else {
                return refused(tx, code: code, reason: "a 401 without REALM and NONCE", at: now)
            }
            takeNonce(realm: realm, nonce: nonce, algorithms: m.passwordAlgorithms)
            request(tx.kind, attributes: tx.attributes, at: now)
        case 401:
            fail(.unauthorized(server: configuration.name))
        case 438 where tx.staleNonces < 3:
            counters.staleNonces += 1
            guard let nonce = m.nonce else { return refused(tx, code: code, reason: "a 438 without NONCE", at: now) }
            takeNonce(realm: m.realm ?? realm ?? "", nonce: nonce, algorithms: m.passwordAlgorithms ?? passwordAlgorithms)
            request(tx.kind, attributes: tx.attributes, at: now, staleNonces: tx.staleNonces + 1)
        default:
            refused(tx, code: code, reason: m.errorReason ?? "", at: now)
        }
    }

    mutating func refused(_ tx: TURNTransaction, code: Int, reason: String, at now: MediaTime) {
        switch tx.kind {
        case .allocate:
            fail(.refused(server: configuration.name, method: "Allocate", code: code, reason: reason))
        case .refresh:
            fail(.lost(server: configuration.name, why: "Refresh answered \(code) \(reason)"))
        case .channelBind(let peer), .createPermission(let peer):
            // The server will not relay to this peer: held datagrams for it go, and ICE's check
            // of that pair fails on its own.
            held.removeAll { $0.peer == peer }
            if let p = peers.firstIndex(where: { $0.address == peer }) { peers[p].renewAt = now + .seconds(30) }
        }
    }

    /// Realm and nonce from the server key the requests from now on.
    mutating func takeNonce(realm: String, nonce: String, algorithms: [UInt8]?) {
        self.realm = realm
        self.nonce = nonce
        passwordAlgorithms = algorithms
        algorithm = Self.chooseAlgorithm(algorithms)
        key = configuration.credentials.key(realm: realm, algorithm: algorithm)
    }

    /// MD5 unless the server offers only SHA-256 (RFC 8489 §9.2.4: the first this client
    /// supports, in the server's order).
    static func chooseAlgorithm(_ offered: [UInt8]?) -> TURNCredentials.Algorithm {
        guard let offered else { return .md5 }
        var i = 0
        while i + 4 <= offered.count {
            let number = UInt16(offered[i]) << 8 | UInt16(offered[i + 1])
            let length = Int(UInt16(offered[i + 2]) << 8 | UInt16(offered[i + 3]))
            if let a = TURNCredentials.Algorithm(rawValue: number) { return a }
            i += 4 + (length + 3) & ~3
        }
        return .md5
    }

    mutating func handleSuccess(_ m: STUNMessage, _ tx: TURNTransaction, at now: MediaTime) {
        switch tx.kind {
        case .allocate:
            guard let relayed = m.xorRelayedAddress, relayed.port != 0 else {
                return fail(.refused(server: configuration.name, method: "Allocate", code: 0,
                                     reason: "a success without XOR-RELAYED-ADDRESS"))
            }
            relayedAddress = relayed
            mappedAddress = m.xorMappedAddress
            allocatedLifetime(m.lifetime ?? configuration.lifetimeSeconds, at: now)
            state = .allocated
            events.append(.allocated(relayed: relayed, mapped: mappedAddress, lifetimeSeconds: lifetimeSeconds))
        case .refresh:
            allocatedLifetime(m.lifetime ?? lifetimeSeconds, at: now)
        case .channelBind(let peer), .createPermission(let peer):
            guard let p = peers.firstIndex(where: { $0.address == peer }) else { return }
            if !peers[p].installed, peers[p].channel != nil { counters.channelsBound += 1 }
            peers[p].installed = true
            peers[p].renewAt = now + Self.renewal
        }
    }

    /// Schedules the refresh: half way through a short lifetime, a minute before a long one's end.
    /// The lifetime counted is the shorter of what was asked and what was granted (a server
    /// raises a short request to its default, RFC 8656 §7.2: the client still refreshes on its
    /// own schedule).
    mutating func allocatedLifetime(_ seconds: UInt32, at now: MediaTime) {
        lifetimeSeconds = seconds
        let lifetime = MediaDuration.seconds(Int64(min(seconds, max(configuration.lifetimeSeconds, 1))))
        refreshAt = now + max(lifetime - .seconds(60), MediaDuration(microseconds: lifetime.microseconds / 2))
    }
}
