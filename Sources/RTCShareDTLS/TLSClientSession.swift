import CDTLSShims

/// A TLS client session over bytes the caller carries (the stream to a `turns:` TURN server):
/// ciphertext in with `feed`, out with `takeCiphertext`; plaintext through `write` and `read`.
/// OpenSSL checks the server's certificate against the system's store (or `caFile`) and the host
/// named. Not thread-safe; owned by the thread that runs the share.
public final class TLSClientSession {
    private let client: OpaquePointer

    public enum HandshakeState: Equatable, Sendable {
        case inProgress
        case established
        /// The certificate does not verify: why (untrusted, expired, another name …).
        case certificateRefused(String)
        case failed(String)
    }

    public init(host: String, caFile: String?) throws(DTLSError) {
        var error = [CChar](repeating: 0, count: 256)
        guard let c = rtcs_tls_client_new(host, caFile, &error, error.count) else {
            throw .setup(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        client = c
    }

    deinit { rtcs_tls_client_free(client) }

    public func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.isEmpty || rtcs_tls_client_feed(client, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count) == 1
    }

    public func handshake() -> HandshakeState {
        switch rtcs_tls_client_handshake(client) {
        case 1: return .established
        case 0: return .inProgress
        case Int32(RTCS_TLS_CERTIFICATE): return .certificateRefused(errorText)
        default: return .failed(errorText)
        }
    }

    public var pendingCiphertext: Int { rtcs_tls_client_pending(client) }

    /// Moves ciphertext to send into `buffer`; the bytes moved.
    public func takeCiphertext(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard buffer.count > 0 else { return 0 }
        return rtcs_tls_client_take(client, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), buffer.count)
    }

    /// Encrypts `bytes` (all of them, or nothing: false).
    public func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty else { return true }
        return rtcs_tls_client_write(client, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count) == bytes.count
    }

    /// Plaintext into `buffer`: the bytes read, 0 when none is complete yet, nil when the session
    /// closed or failed (`errorText` says why).
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard buffer.count > 0 else { return 0 }
        let n = rtcs_tls_client_read(client, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), buffer.count)
        return n < 0 ? nil : n
    }

    public var errorText: String { String(cString: rtcs_tls_client_error(client)) }
}
