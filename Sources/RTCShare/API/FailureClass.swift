import RTCShareDTLS
import RTCShareTransport
import RTCShareWHIP

/// What kind of failure ended (or refused) a share, for whoever decides what happens next: the
/// reconnect (retry or stop), a supervisor (the CLI's exit status), an embedder (the C ABI's
/// codes). One place decides, so the three never disagree.
public enum FailureClass: Sendable, Equatable {
    /// The server refused the credentials: HTTP 401 or 403, or the token is unusable.
    /// Permanent until someone fixes the token.
    case unauthorized
    /// The configuration cannot work as given: the server refused it (400, 404, 415, 422, any
    /// other 4xx), answered something rtcshare cannot use (no common codec, video rejected, bad
    /// SDP, wrong content type, 200 instead of 201, no Location), a server certificate that does
    /// not verify, DTLS without a common SRTP profile, a plan over the memory cap. Permanent.
    case refused
    /// The server or the path is away for now: HTTP 5xx, 408, 429, a timeout, a refused or reset
    /// connection, ICE failed, consent lost, DTLS failed or closed. `retryAfterSeconds`: what
    /// the server's `Retry-After` asked for (capped), if it said.
    case unavailable(retryAfterSeconds: Int?)
    /// The system ran short: memory or address space, a library that cannot be loaded or
    /// initialised, a thread that cannot be started.
    case resource
    /// The share stopped while it was being made (a signal, the host's `stop`): not a failure.
    case stopped
    /// Encoding or sending failed while the share ran: a fault of rtcshare's (or of a library
    /// under it), not of the server or the system.
    case software
    /// Anything else: the source, a file or socket cannot be opened, a setting is refused.
    case other

    /// Whether trying again can help, for a reconnect.
    public var retry: Retry {
        switch self {
        case .unavailable(let after): .temporary(afterSeconds: after)
        case .resource: .temporary(afterSeconds: nil)
        case .unauthorized, .refused, .stopped, .software, .other: .permanent
        }
    }
}

extension ConnectionFailure {
    /// Permanent or temporary, with the server's `Retry-After`: what the reconnect acts on.
    public var retry: Retry { failureClass.retry }

    public var failureClass: FailureClass {
        switch self {
        case .whip(_, let error):
            if error == .stopped { return .stopped }
            if error.isUnauthorized { return .unauthorized }
            if case .resource = error { return .resource }
            return switch error.retry {
            case .permanent: .refused
            case .temporary(let after): .unavailable(retryAfterSeconds: after)
            }
        case .transport(let failure):
            return failure.failureClass
        }
    }
}

extension TransportFailure {
    /// ICE, consent and DTLS failures are the path's or the server's, for now: temporary. Two
    /// DTLS outcomes are not: a handshake without a common SRTP profile, and a certificate that
    /// is not the one the answer's fingerprint names (a new POST gets the same server, or the
    /// same man in the middle).
    public var failureClass: FailureClass {
        switch self {
        case .dtls(.noSRTPProfile), .dtls(.fingerprintMismatch), .dtls(.malformedFingerprint): .refused
        case .dtls(.certificateGeneration): .resource
        case .relay(.unauthorized): .unauthorized
        case .relay(.certificate): .refused
        case .relay: .unavailable(retryAfterSeconds: nil)
        case .ice, .consentLost, .dtls, .dtlsClosed, .srtpKeys, .peerUnreachable, .localAddressGone, .noLocalAddress:
            .unavailable(retryAfterSeconds: nil)
        }
    }
}

extension ShareError {
    /// The class of this failure. `.connection` is typed finely; a plan over the cap is
    /// `.refused` (retrying the same configuration cannot help); a failure of the running
    /// pipeline is `.software`; the source, the outputs and a configuration refused before
    /// the start (a WAV file that cannot be read, an out-of-range value) are `.other`; the
    /// system short of memory, address space or a library is `.resource`.
    public var failureClass: FailureClass {
        switch self {
        case .connection(let failure): failure.failureClass
        case .doesNotFit: .refused
        case .pipeline: .software
        case .resource: .resource
        case .output, .source, .invalidConfiguration: .other
        }
    }

    /// Permanent or temporary: `failureClass.retry`.
    public var retry: Retry { failureClass.retry }
}

extension ShareError {
    /// What a reconnect does with a failure once the endpoint has taken this share: as
    /// `retry`, but the endpoint answering 404 is temporary. A server that restarted (a
    /// gateway, simple-whip-server) answers before its endpoints are made again, and the share
    /// was published there, so the URL is right; the reconnect's limit still ends it. On the
    /// first publish a 404 stays permanent: the URL is wrong.
    public var retryOncePublished: Retry {
        if case .connection(.whip(_, .httpStatus(404, _, let after))) = self { return .temporary(afterSeconds: after) }
        return retry
    }
}
