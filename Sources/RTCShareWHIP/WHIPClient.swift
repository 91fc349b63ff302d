import Glibc

/// The WHIP HTTP exchange (RFC 9725): POST the offer, PATCH trickled candidates, DELETE the
/// session. Blocking calls on libcurl, made at the IO edge and never on the media thread.
///
/// What the server must do, and what happens otherwise (one `WHIPError` each):
/// - POST answers `201 Created`, `Content-Type: application/sdp`, the answer as the body, and
///   the session resource in `Location` (absolute or relative to the URL that answered, after
///   307/308 redirects, which keep the method and body). A missing `Location` is an error: the
///   session could not be ended.
/// - 4xx/5xx carry the status and the first line of the body, sanitised and capped.
/// - Bodies are capped (`maximumAnswerBytes`); larger ones are refused, never truncated.
///
/// The bearer token goes into the `Authorization` header only; every error text is scrubbed of
/// it (a server may echo the request), and no other state keeps it.
public struct WHIPClient: Sendable {
    public struct Configuration: Sendable {
        /// Seconds to set up the TCP (and TLS) connection.
        public var connectTimeout = 5.0
        /// Seconds for a whole POST or PATCH, redirects included.
        public var totalTimeout = 10.0
        /// Seconds for the DELETE at the end of a share (RFC 9725 §4.4): a stopping sender must
        /// not hang on a slow server. At most 1.
        public var deleteTimeout = 1.0
        /// Redirects followed (307/308); more is an error.
        public var maximumRedirects = 3
        /// Largest answer (or error body) read.
        public var maximumAnswerBytes = 64 << 10
        /// Raised: a POST or PATCH is not sent, or is given up within milliseconds
        /// (`WHIPError.stopped`). The DELETE does not watch it. nil: requests end by their timeouts.
        public var stop: WHIPStop?

        public init(stop: WHIPStop? = nil) { self.stop = stop }
    }

    /// What a PATCH achieved: the server took the fragment, or it does not do trickle ICE
    /// (405 Method Not Allowed, 501 Not Implemented) — not an error, the offer had every
    /// candidate already.
    public enum PatchResult: Sendable, Equatable { case applied, unsupported }

    public var configuration: Configuration

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// POSTs `offer` to the WHIP endpoint `url` and returns the server's answer and session.
    /// An answer refused here (not 201, not application/sdp, no body) whose `Location` came is
    /// DELETEd before the error is thrown; one refused later (its SDP) is the caller's to DELETE.
    public func publish(to url: String, offer: String, token: WHIPToken?) throws(WHIPError) -> WHIPPublication {
        var request = makeRequest("POST", url, token: token, timeout: configuration.totalTimeout)
        request.stop = configuration.stop
        request.headers += ["Content-Type: application/sdp", "Accept: application/sdp"]
        request.body = offer
        request.maximumRedirects = configuration.maximumRedirects
        // One hold for the whole exchange: the request and resolving its Location.
        if configuration.stop?.isRaised == true { throw .stopped }
        let library = try CurlLibrary()
        defer { _ = library }
        let response = try CurlEasy().perform(request)
        try requireSuccess(response, request)
        let location = response.headers["Location"].flatMap { $0.isEmpty ? nil : $0 }.map { text in
            Result { () throws(WHIPError) in try CurlURL.resolve(text, against: response.effectiveURL) }
        }
        do throws(WHIPError) {
            return try publication(response, location: location, request)
        } catch {
            let resource = try? location?.get()
            // The server may have made a session for an answer we refuse (a 200, text/html, an
            // empty body): if it said where, it is ended here, or it stays on the server.
            if let resource { _ = deleteReportingFailure(resource: resource, token: token) }
            throw error
        }
    }

    /// What a 2xx answer to the POST must be: 201, a Location, application/sdp, a body.
    private func publication(_ response: HTTPResponse, location: Result<String, WHIPError>?,
                             _ request: HTTPRequest) throws(WHIPError) -> WHIPPublication {
        guard response.status == 201 else {
            throw .httpStatus(response.status, reason: "expected 201 Created", retryAfterSeconds: Self.retryAfter(response))
        }
        guard let location else { throw .missingLocation }
        let resource = try location.get()
        if let type = response.headers["Content-Type"] {
            let mediaType = type.split(separator: ";").first.map { $0.trimmingSpaces.lowercased() } ?? ""
            guard mediaType == "application/sdp" else {
                throw .wrongContentType(WHIPText.sanitised(Array(type.utf8), limit: 60, hiding: request.secrets))
            }
        }
        guard let answer = String(validating: response.body, as: UTF8.self), !answer.isEmpty else {
            throw .badAnswer("the 201 body is empty or not UTF-8")
        }
        return WHIPPublication(answer: answer, resourceURL: resource,
                               iceServers: WHIPICEServer.parse(linkHeaders: response.headers.values("Link")),
                               entityTag: response.headers["ETag"])
    }

    /// PATCHes an SDP fragment (`application/trickle-ice-sdpfrag`, RFC 8840) to the session
    /// resource: trickled candidates or an ICE restart. `entityTag` is sent as `If-Match`.
    public func patch(resource: String, fragment: String, token: WHIPToken?,
                      entityTag: String? = nil) throws(WHIPError) -> PatchResult {
        let ifMatch = try entityTag.map { (tag) throws(WHIPError) in try headerSafe(tag) }
        return try sendFragment(fragment, to: resource, token: token, ifMatch: ifMatch) == nil ? .unsupported : .applied
    }

    /// What an ICE restart PATCH achieved: the server's new credentials, or that it does not
    /// restart ICE this way (405 Method Not Allowed, 501 Not Implemented: publish anew).
    public enum ICERestartResult: Sendable, Equatable {
        case restarted(WHIPICERestart)
        case unsupported
    }

    /// PATCHes `fragment` (new credentials, `WHIPICERestart.fragment`) to the session resource
    /// with `If-Match: "*"` (RFC 9725 §4.3.2: a restart matches any entity) and reads the
    /// server's new credentials from the 200.
    public func restartICE(resource: String, fragment: String, token: WHIPToken?) throws(WHIPError) -> ICERestartResult {
        guard let response = try sendFragment(fragment, to: resource, token: token, ifMatch: "\"*\"") else {
            return .unsupported
        }
        guard response.status == 200 else {
            throw .httpStatus(response.status, reason: "expected 200 with the server's ICE credentials")
        }
        let tag = try response.headers["ETag"].map { (tag) throws(WHIPError) in try headerSafe(tag) }
        return .restarted(try WHIPICERestart.parse(response.body, entityTag: tag))
    }

    /// The one PATCH exchange (RFC 8840 fragment, watching the stop): the 2xx response, or nil
    /// when the server does not take PATCHes (405, 501).
    private func sendFragment(_ fragment: String, to resource: String, token: WHIPToken?,
                              ifMatch: String?) throws(WHIPError) -> HTTPResponse? {
        var request = makeRequest("PATCH", resource, token: token, timeout: configuration.totalTimeout)
        request.stop = configuration.stop
        if configuration.stop?.isRaised == true { throw .stopped }
        request.headers.append("Content-Type: application/trickle-ice-sdpfrag")
        if let ifMatch { request.headers.append("If-Match: \(ifMatch)") }
        request.body = fragment
        let response = try CurlEasy().perform(request)
        if response.status == 405 || response.status == 501 { return nil }
        try requireSuccess(response, request)
        return response
    }

    /// DELETEs the session resource, within `deleteTimeout` (capped at 1 s). Not stopped by
    /// `configuration.stop`: ending the session is what a stopping sender still owes the server.
    public func delete(resource: String, token: WHIPToken?) throws(WHIPError) {
        let request = makeRequest("DELETE", resource, token: token, timeout: min(1, configuration.deleteTimeout))
        let response = try CurlEasy().perform(request)
        try requireSuccess(response, request)
    }

    /// DELETEs the session resource as `delete` does, and never throws: a share that ends must
    /// end whatever the server says. Returns nil when the server took it (2xx), else one line
    /// for a warning — `WHIP DELETE <resource>: HTTP 500: reason`, `… no answer within 1.0 s` —
    /// with the token scrubbed from it.
    public func deleteReportingFailure(resource: String, token: WHIPToken?) -> String? {
        do throws(WHIPError) {
            try delete(resource: resource, token: token)
            return nil
        } catch {
            return Self.deleteFailure(resource: resource, error, token: token)
        }
    }

    /// The one line `deleteReportingFailure` returns for `error`.
    public static func deleteFailure(resource: String, _ error: WHIPError, token: WHIPToken?) -> String {
        let secrets = token.map { [$0.secret] } ?? []
        let why: String = switch error {
        case let .httpStatus(status, reason, _): "HTTP \(status)" + (reason.isEmpty ? "" : ": \(reason)")
        case let .timeout(seconds): "no answer within \(WHIPText.seconds((seconds * 10).rounded() / 10)) s"
        case let .transport(text), let .resource(text), let .untrustedServer(text): text
        default: error.description
        }
        let target = WHIPText.sanitised(Array(resource.utf8), limit: 200, hiding: secrets)
        return "WHIP DELETE \(target): " + WHIPText.sanitised(Array(why.utf8), limit: 200, hiding: secrets)
    }

    private func makeRequest(_ method: String, _ url: String, token: WHIPToken?, timeout: Double) -> HTTPRequest {
        var request = HTTPRequest(method: method, url: url, connectTimeout: min(configuration.connectTimeout, timeout),
                                  totalTimeout: timeout, maximumRedirects: 0,
                                  maximumBodyBytes: configuration.maximumAnswerBytes)
        // "Expect:" stops libcurl from waiting for a 100 Continue on bodies over 1 KiB.
        request.headers = ["Expect:"]
        if let token {
            request.headers.append("Authorization: Bearer \(token.secret)")
            request.secrets = [token.secret]
        }
        return request
    }

    /// A 2xx passes; anything else becomes `httpStatus` with a reason from the body and the
    /// delay its `Retry-After` asks for.
    private func requireSuccess(_ response: HTTPResponse, _ request: HTTPRequest) throws(WHIPError) {
        guard !(200...299).contains(response.status) else { return }
        throw .httpStatus(response.status, reason: WHIPText.sanitised(response.body, hiding: request.secrets),
                          retryAfterSeconds: Self.retryAfter(response))
    }

    private static func retryAfter(_ response: HTTPResponse) -> Int? {
        guard let value = response.headers["Retry-After"] else { return nil }
        return HTTPRetryAfter.seconds(value, responseDate: response.headers["Date"], now: Int(time(nil)))
    }

    private func headerSafe(_ value: String) throws(WHIPError) -> String {
        guard value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { throw .badAnswer("ETag holds a control character") }
        return value
    }
}

/// What a successful WHIP POST returned.
public struct WHIPPublication: Sendable, Equatable {
    /// The SDP answer as received (read it with `WebRTCAnswer.parse`).
    public var answer: String
    /// The session resource, absolute: PATCH and DELETE go here.
    public var resourceURL: String
    /// ICE servers from the `Link` headers, in order.
    public var iceServers: [WHIPICEServer]
    /// The `ETag` of the session, for `If-Match` on PATCH (RFC 9725 §4.3.1), if the server sent one.
    public var entityTag: String?
}
