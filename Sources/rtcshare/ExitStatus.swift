import RTCShare

/// The exit statuses of `rtcshare`, for a supervisor to act on: the BSD sysexits codes where
/// one fits, so "try again later" (75) is told from "fix the token" (77) and "fix the
/// configuration" (78) without reading the message.
enum ExitStatus: Int32, CaseIterable {
    /// The share finished: its duration passed, the source ended, or SIGINT/SIGTERM stopped it
    /// (at any moment, while connecting too).
    case finished = 0
    /// The share failed for a local reason: the source, a file or socket cannot be opened, the
    /// source failed while running.
    /// `rtcshare plan`: the plan does not fit.
    case failure = 1
    /// The command line is wrong.
    case usage = 2
    /// EX_SOFTWARE: encoding or sending failed while running (a fault of rtcshare's or of a
    /// library under it).
    case software = 70
    /// EX_OSERR: the system ran short: memory or address space, a library that cannot be
    /// loaded or initialised.
    case resource = 71
    /// EX_TEMPFAIL: the server or the path is away for now (HTTP 5xx, 408, 429, a timeout, a
    /// refused connection, ICE failed, consent lost, DTLS failed or closed): try again later,
    /// after the Retry-After the line names if any.
    case temporary = 75
    /// EX_NOPERM: the server refused the credentials (HTTP 401, 403) or the token is unusable.
    case unauthorized = 77
    /// EX_CONFIG: the configuration cannot work: the server refused it (400, 404, 415, 422,
    /// another 4xx), its answer cannot be used (no common codec, video rejected, bad SDP, not
    /// application/sdp, 200 instead of 201, no Location), its certificate does not verify, or
    /// the plan is over --mem-cap.
    case configuration = 78

    init(_ failure: FailureClass) {
        self = switch failure {
        case .unauthorized: .unauthorized
        case .refused: .configuration
        case .unavailable: .temporary
        case .resource: .resource
        case .stopped: .finished
        case .software: .software
        case .other: .failure
        }
    }

    /// The status for whatever a command threw: a share's failure by its class, anything else 1.
    init(error: any Error) {
        switch error {
        case let error as ShareError: self.init(error.failureClass)
        case let error as WHIPError: self.init(ConnectionFailure.whip(url: "", error).failureClass)
        default: self = .failure
        }
    }

    /// For `--help`: one entry per status.
    static var helpText: String {
        let lines: [(ExitStatus, String)] = [
            (.finished, "finished: duration passed, source ended, or stopped by SIGINT/SIGTERM"),
            (.failure, "failed: the source, a file or a socket (plan: does not fit)"),
            (.usage, "bad command line"),
            (.software, "EX_SOFTWARE: encoding or sending failed while running"),
            (.resource, "EX_OSERR: out of memory or address space, a library cannot load"),
            (.temporary, "EX_TEMPFAIL: server or path away for now (5xx, 408, 429, timeout, refused, "
                + "ICE, consent, DTLS): try again later"),
            (.unauthorized, "EX_NOPERM: HTTP 401/403 or an unusable token"),
            (.configuration, "EX_CONFIG: the server refuses the configuration (400, 404, 415, 422), "
                + "its answer cannot be used, or the plan is over --mem-cap"),
        ]
        return lines.map { status, text in
            let code = String(status.rawValue)
            let wrapped = CommandLineTool.wrap(text, indent: 8, width: 80)
            return "  " + code + String(repeating: " ", count: 6 - code.count) + wrapped.dropFirst(8) + "\n"
        }.joined()
    }
}
