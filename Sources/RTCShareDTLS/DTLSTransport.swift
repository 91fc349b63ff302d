import CDTLSShims
import RTCShareRTP

// A DTLS-SRTP endpoint (RFC 5764, RFC 8827) driven sans-IO: datagrams go in with
// `handle(datagram:)`, datagrams to send come out of `pollTransmit`, events out of `pollEvent`,
// and the retransmission timer is exposed as `nextTimeout` / `handleTimeout()`. The owner's one
// rule: after every input (a datagram, a timeout, `close()`), drain `pollTransmit` and
// `pollEvent`, then sleep until `nextTimeout` or the next datagram.
//
// Protocol: DTLS 1.2 only (OpenSSL 3.0 has no DTLS 1.3; pinning min = max = 1.2 keeps every
// peer on one well-trodden version), ECDHE suites, both sides present certificates, and the
// peer is trusted only if its certificate's digest is the SDP fingerprint.
//
// Clock: the core reads no clock, except that OpenSSL keeps the DTLS retransmission timer
// against its own reading of the wall clock (gettimeofday). `nextTimeout` is therefore relative
// to "now" as the caller reads it, and a test of retransmission waits in real time.
//
// Invariants:
// - `state` only moves forward: handshaking → connected → closed, or to failed from anywhere
//   before closed. Once closed or failed the transport is inert: input is dropped and counted,
//   the timer is gone; what was queued to send (a final alert or close_notify) can still be
//   drained.
// - Malformed input is never fatal: datagrams that are not whole DTLS records or exceed
//   `maximumDatagramBytes` are dropped and counted before OpenSSL sees them.
// - OpenSSL's error queue is empty after every call (the shim clears it).
// - Each output datagram is whole DTLS records of at most `configuration.mtu` bytes.

/// One DTLS-SRTP association over datagrams the owner carries.
public struct DTLSTransport: ~Copyable {
    /// Where the association stands.
    public enum State: Sendable, Equatable {
        case handshaking
        case connected
        case closed
        case failed(DTLSError)
    }

    /// The largest datagram accepted by `handle(datagram:)`: above any path MTU WebRTC uses.
    public static let maximumDatagramBytes = Int(RTCS_SSL_MAX_DATAGRAM)

    public let role: DTLSRole
    // No stored defaults: they are assigned after the init's last throw (Swift 6.0's compiler
    // crashes on a throw out of a ~Copyable init once stored defaults are in place).
    public private(set) var state: State
    private let endpoint: OpaquePointer
    private let profiles: [SRTPProfile]
    private var events: [DTLSEvent]
    private var counters: DTLSStatistics

    /// Sets up the association with `certificate` as our identity. A client has its ClientHello
    /// ready to drain at once; a server waits for one.
    public init(certificate: borrowing DTLSCertificate, configuration: DTLSConfiguration) throws(DTLSError) {
        guard (256...Self.maximumDatagramBytes).contains(configuration.mtu) else {
            throw .setup("MTU \(configuration.mtu) outside 256...\(Self.maximumDatagramBytes)")
        }
        guard !configuration.srtpProfiles.isEmpty else { throw .setup("no SRTP profile offered") }
        let timeout = configuration.initialRetransmitTimeout
        guard timeout >= .milliseconds(1), timeout <= .seconds(60) else {
            throw .setup("initial retransmission timeout outside 1 ms ... 60 s")
        }
        let timeoutMs = UInt32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let profileList = configuration.srtpProfiles.map(\.openSSLName).joined(separator: ":")
        let fingerprint = configuration.remoteFingerprint
        let handle = profileList.withCString { profileText in
            fingerprint.digest.withUnsafeBufferPointer { digest in
                var config = rtcs_ssl_endpoint_config(
                    is_client: configuration.role == .client ? 1 : 0,
                    mtu: UInt32(configuration.mtu),
                    srtp_profiles: profileText,
                    expected_hash: fingerprint.hashFunction.shimHash,
                    expected_digest: digest.baseAddress,
                    expected_digest_len: digest.count,
                    initial_timeout_ms: timeoutMs)
                return rtcs_ssl_endpoint_new(certificate.handle, &config)
            }
        }
        guard let handle else { throw .setup("OpenSSL refused the DTLS endpoint") }
        self.endpoint = handle
        self.role = configuration.role
        self.profiles = configuration.srtpProfiles
        self.state = .handshaking
        self.events = []
        self.counters = DTLSStatistics()
    }

    deinit { rtcs_ssl_endpoint_free(endpoint) }

    // MARK: input

    /// Takes one received datagram (the caller has demultiplexed it as DTLS, RFC 7983).
    public mutating func handle(datagram: UnsafeRawBufferPointer) {
        guard state == .handshaking || state == .connected,
              datagram.count <= Self.maximumDatagramBytes,
              DTLSRecordFraming.isWellFramed(datagram)
        else {
            counters.datagramsDropped += 1
            return
        }
        counters.datagramsReceived += 1
        let status = rtcs_ssl_endpoint_receive(endpoint, datagram.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                               datagram.count)
        apply(status)
    }

    /// Takes one received datagram.
    public mutating func handle(datagram: [UInt8]) {
        datagram.withUnsafeBytes { handle(datagram: $0) }
    }

    /// Time until `handleTimeout()` is due (zero if due now), or nil when no timer runs.
    public var nextTimeout: Duration? {
        guard state == .handshaking || state == .connected else { return nil }
        let us = rtcs_ssl_endpoint_timeout_us(endpoint)
        return us < 0 ? nil : .microseconds(us)
    }

    /// Resends the last flight if its timer has expired; a no-op otherwise. Fails the
    /// association with `.timedOut` once OpenSSL gives up.
    public mutating func handleTimeout() {
        guard state == .handshaking || state == .connected else { return }
        apply(rtcs_ssl_endpoint_handle_timeout(endpoint))
    }

    /// Sends close_notify (to drain with `pollTransmit`) and ends the association; a transport
    /// still handshaking just ends. The peer sees `closed`.
    public mutating func close() {
        guard state == .handshaking || state == .connected else { return }
        _ = rtcs_ssl_endpoint_close(endpoint)
        state = .closed
    }

    // MARK: output

    /// Moves the next datagram to send into `buffer`; returns its length, or nil if none is
    /// queued. A buffer of `configuration.mtu` bytes always suffices; a smaller one than the
    /// datagram gets nothing (the datagram stays queued).
    public mutating func pollTransmit(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard let base = buffer.baseAddress else { return nil }
        let n = rtcs_ssl_endpoint_pop_datagram(endpoint, base.assumingMemoryBound(to: UInt8.self), buffer.count)
        guard n > 0 else { return nil }
        counters.datagramsSent += 1
        return n
    }

    /// The next datagram to send, or nil.
    public mutating func pollTransmit() -> [UInt8]? {
        let size = rtcs_ssl_endpoint_next_datagram_size(endpoint)
        guard size > 0 else { return nil }
        var datagram = [UInt8](repeating: 0, count: size)
        let n = datagram.withUnsafeMutableBytes { pollTransmit(into: $0) }
        return n == nil ? nil : datagram
    }

    /// The next event, or nil.
    public mutating func pollEvent() -> DTLSEvent? {
        events.isEmpty ? nil : events.removeFirst()
    }

    /// Counters so far.
    public var statistics: DTLSStatistics {
        var s = counters
        s.transmitOverflows = rtcs_ssl_endpoint_dropped_output(endpoint)
        s.retransmissions = rtcs_ssl_endpoint_retransmissions(endpoint)
        return s
    }

    // MARK: status → state and events (the one mapping point for the shim's statuses)

    private mutating func apply(_ status: rtcs_ssl_status) {
        switch status {
        case RTCS_SSL_HANDSHAKING:
            break
        case RTCS_SSL_ESTABLISHED:
            if state == .handshaking { connect() }
        case RTCS_SSL_CLOSED:
            if state == .handshaking { connect() }  // keys first if the handshake ended in this datagram
            if state == .connected {
                state = .closed
                events.append(.closed)
            }
        case RTCS_SSL_FINGERPRINT_MISMATCH:
            fail(.fingerprintMismatch)
        case RTCS_SSL_PEER_ALERT:
            fail(.peerAlert(UInt8(truncatingIfNeeded: rtcs_ssl_endpoint_alert(endpoint))))
        case RTCS_SSL_TIMED_OUT:
            fail(.timedOut)
        default:
            fail(.handshakeFailed(String(cString: rtcs_ssl_endpoint_error(endpoint))))
        }
    }

    private mutating func connect() {
        let id = rtcs_ssl_endpoint_srtp_profile(endpoint)
        guard let profile = profiles.first(where: { UInt32($0.dtlsProfileID) == id }) else {
            fail(.noSRTPProfile)
            return
        }
        var exported = [UInt8](repeating: 0, count: DTLSSRTPKeys.exportedBytes(for: profile))
        defer { for i in exported.indices { exported[i] = 0 } }
        let ok = exported.withUnsafeMutableBufferPointer { out in
            rtcs_ssl_endpoint_export_srtp(endpoint, out.baseAddress, out.count)
        }
        guard ok == 1 else {
            fail(.keyExport)
            return
        }
        do {
            let keys = try DTLSSRTPKeys(exported: exported, profile: profile, role: role)
            state = .connected
            events.append(.connected(keys))
        } catch {
            fail(error)
        }
    }

    private mutating func fail(_ error: DTLSError) {
        // A failure found after OpenSSL completed (no SRTP profile) still tells the peer, with
        // close_notify; after a handshake failure OpenSSL has queued its own alert and this is a no-op.
        _ = rtcs_ssl_endpoint_close(endpoint)
        state = .failed(error)
        events.append(.failed(error))
    }
}
