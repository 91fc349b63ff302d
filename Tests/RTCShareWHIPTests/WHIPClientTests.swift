import Foundation
import Testing
@testable import RTCShareWHIP

/// The HTTP client against the Python server on 127.0.0.1: statuses, Location forms,
/// redirects, Link headers, limits, and the token kept out of every error.
@Suite struct WHIPClientTests {
    static let secret = "s3cr3t-T0KEN-value"
    let token = try! WHIPToken(WHIPClientTests.secret)

    /// The error a call throws, or nil.
    func error(_ body: () throws -> Void) -> WHIPError? {
        do { try body(); return nil } catch { return error as? WHIPError }
    }

    /// Every text form of an error lacks the token.
    func expectNoToken(_ e: WHIPError?, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let e else { Issue.record("no error", sourceLocation: sourceLocation); return }
        for text in [e.description, String(describing: e), String(reflecting: e), "\(e)"] {
            #expect(!text.contains(Self.secret), "token in '\(text)'", sourceLocation: sourceLocation)
        }
    }

    @Test func relativeLocationIsResolvedAgainstTheEndpoint() throws {
        let s = try WHIPTestServer.get()
        let p = try WHIPClient().publish(to: s.base + "/echo", offer: "v=0\r\n", token: token)
        #expect(p.resourceURL == s.base + "/whip/resource/echo")
        #expect(p.answer == "v=0\r\n")
    }

    @Test func absoluteLocationIsKept() throws {
        let s = try WHIPTestServer.get()
        let p = try WHIPClient().publish(to: s.base + "/absolute/a1", offer: "v=0\r\n", token: nil)
        #expect(p.resourceURL == "http://127.0.0.1:\(s.port)/whip/resource/a1")
    }

    @Test func lowercaseLocationHeaderIsFoundAndResolvedRelativeToThePath() throws {
        let s = try WHIPTestServer.get()
        let p = try WHIPClient().publish(to: s.base + "/lowercase/l1", offer: "v=0\r\n", token: nil)
        #expect(p.resourceURL == s.base + "/lowercase/resource/l1")
        try WHIPClient().delete(resource: p.resourceURL, token: nil)
        let deletes = try #require(try s.summary()["deletes"] as? [String])
        #expect(deletes.contains("l1"))
    }

    @Test(arguments: [307, 308])
    func redirectIsFollowedKeepingMethodBodyAndToken(code: Int) throws {
        let s = try WHIPTestServer.get()
        let body = "v=0\r\n" + String(repeating: "a=x-padding:0123456789\r\n", count: 100) + "a=x-redirect:\(code)\r\n"
        let p = try WHIPClient().publish(to: s.base + "/redirect/\(code)/echo", offer: body, token: token)
        #expect(p.answer == body)  // /echo answers with what it was POSTed
        #expect(p.resourceURL == s.base + "/whip/resource/echo")
        // The echo of this case's own body: other tests POST to /echo beside it, some without a token.
        let echoes = try #require(try s.summary()["echoes"] as? [[String: Any]])
        let echoed = echoes.last { $0["body"] as? String == body }
        #expect(echoed?["method"] as? String == "POST")
        #expect(echoed?["auth"] as? Bool == true)  // same host and port: the token goes along
    }

    @Test func linkHeadersGiveTheICEServers() throws {
        let s = try WHIPTestServer.get()
        let p = try WHIPClient().publish(to: s.base + "/echo", offer: "v=0\r\n", token: nil)
        #expect(p.iceServers == [
            WHIPICEServer(kind: .stun, url: "stun:127.0.0.1:3478"),
            WHIPICEServer(kind: .turn, url: "turn:127.0.0.1:3478?transport=udp", username: "user", credential: "pass word"),
        ])
        // The credential is a secret: never in the description.
        #expect(!p.iceServers[1].description.contains("pass word"))
        #expect(p.iceServers[1].description.contains("credential <redacted>"))
    }

    @Test(arguments: [401, 403, 404, 500, 503])
    func errorStatusCarriesTheFirstLineOfTheBody(code: Int) throws {
        let s = try WHIPTestServer.get()
        let e = error { _ = try WHIPClient().publish(to: s.base + "/status/\(code)", offer: "v=0\r\n", token: token) }
        #expect(e == .httpStatus(code, reason: "status \(code) from the test server"))
        expectNoToken(e)
    }

    @Test func anEchoedTokenIsRedactedFromTheReason() throws {
        let s = try WHIPTestServer.get()
        let e = error { _ = try WHIPClient().publish(to: s.base + "/echo-auth", offer: "v=0\r\n", token: token) }
        #expect(e == .httpStatus(401, reason: "bad credentials: Bearer <redacted>"))
        expectNoToken(e)
    }

    @Test func createdWithoutLocationIsAnError() throws {
        let s = try WHIPTestServer.get()
        let e = error { _ = try WHIPClient().publish(to: s.base + "/no-location", offer: "v=0\r\n", token: token) }
        #expect(e == .missingLocation)
        expectNoToken(e)
    }

    @Test func aServerThatNeverAnswersTimesOut() throws {
        let s = try WHIPTestServer.get()
        var client = WHIPClient()
        client.configuration.totalTimeout = 0.5
        let start = Date()
        let e = error { _ = try client.publish(to: s.base + "/hang", offer: "v=0\r\n", token: token) }
        let elapsed = Date().timeIntervalSince(start)
        guard case let .timeout(seconds)? = e else { Issue.record("expected a timeout, got \(String(describing: e))"); return }
        #expect(seconds >= 0.45 && elapsed < 2)
        #expect(e!.description.hasPrefix("WHIP request timed out after 0.5"))
        expectNoToken(e)
    }

    @Test func aRefusedConnectionIsATransportError() throws {
        // Port 1 on loopback: nothing listens there (and binding it needs root, which tests avoid).
        let e = error { _ = try WHIPClient().publish(to: "http://127.0.0.1:1/whip/x", offer: "v=0\r\n", token: token) }
        guard case .transport? = e else { Issue.record("expected transport, got \(String(describing: e))"); return }
        expectNoToken(e)
    }

    @Test func anOversizedAnswerIsRefused() throws {
        let s = try WHIPTestServer.get()
        let e = error { _ = try WHIPClient().publish(to: s.base + "/big", offer: "v=0\r\n", token: nil) }
        #expect(e == .responseTooLarge(what: "body", limit: 64 << 10))
    }

    @Test func onlyHTTPURLsAreRequested() {
        let e = error { _ = try WHIPClient().publish(to: "file:///etc/passwd", offer: "v=0\r\n", token: nil) }
        #expect(e == .badURL("file:///etc/passwd"))
    }

    @Test func patchAnswered405IsUnsupportedNotAnError() throws {
        let s = try WHIPTestServer.get()
        let result = try WHIPClient().patch(resource: s.base + "/whip/resource/p1",
                                            fragment: "a=end-of-candidates\r\n", token: token, entityTag: "\"p1-1\"")
        #expect(result == .unsupported)
    }

    @Test func retryAfterInSecondsIsCarriedWithTheStatus() throws {
        let s = try WHIPTestServer.get()
        let e = error { _ = try WHIPClient().publish(to: s.base + "/retry-after/503/7", offer: "v=0\r\n", token: token) }
        #expect(e == .httpStatus(503, reason: "status 503 from the test server", retryAfterSeconds: 7))
        #expect(e?.retry == .temporary(afterSeconds: 7))
    }

    @Test func retryAfterAsADateIsTakenAgainstTheServersDate() throws {
        let s = try WHIPTestServer.get()
        let e = error { _ = try WHIPClient().publish(to: s.base + "/retry-after-date/429/42", offer: "v=0\r\n", token: token) }
        #expect(e == .httpStatus(429, reason: "status 429 from the test server", retryAfterSeconds: 42))
    }

    @Test func aHugeRetryAfterIsCapped() throws {
        let s = try WHIPTestServer.get()
        let e = error { _ = try WHIPClient().publish(to: s.base + "/retry-after/503/86400", offer: "v=0\r\n", token: token) }
        #expect(e?.retry == .temporary(afterSeconds: HTTPRetryAfter.maximumSeconds))
    }

    @Test func twoHundredInsteadOfCreatedIsPermanent() throws {
        let s = try WHIPTestServer.get()
        let e = error { _ = try WHIPClient().publish(to: s.base + "/answer-200/c200", offer: "v=0\r\n", token: token) }
        #expect(e == .httpStatus(200, reason: "expected 201 Created"))
        #expect(e?.retry == .permanent)
    }

    /// A session the server made for an answer the client refuses is ended at once: nothing is
    /// left on the server for a 200 instead of 201 or an answer that is not SDP.
    @Test(arguments: [("/answer-200/left200", "left200"), ("/answer-html/lefthtml", "lefthtml")])
    func aRefusedAnswerWithALocationIsDeleted(path: String, id: String) throws {
        let s = try WHIPTestServer.get()
        let e = error { _ = try WHIPClient().publish(to: s.base + path, offer: "v=0\r\n", token: token) }
        #expect(e != nil)
        let deletes = try s.summary()["deletes"] as? [String] ?? []
        #expect(deletes.contains(id), "\(deletes)")
    }

    /// A stop raised while the POST waits for a server that never answers ends it at once,
    /// long before its timeout; one raised before is not sent at all.
    @Test func aRaisedStopEndsAPostInFlightAtOnce() throws {
        let s = try WHIPTestServer.get()
        let stop = WHIPStop()
        let client = WHIPClient(configuration: WHIPClient.Configuration(stop: stop))
        let raiser = Thread { usleep(300_000); stop.raise() }
        let start = Date()
        raiser.start()
        let e = error { _ = try client.publish(to: s.base + "/hang", offer: "v=0\r\n", token: token) }
        let elapsed = Date().timeIntervalSince(start)
        #expect(e == .stopped)
        // 0.3 s until the raise; the poll wakes on it at once. A loaded machine may add a
        // scheduling delay, never libcurl's once-a-second progress tick or the 10 s timeout.
        #expect(elapsed >= 0.29 && elapsed < 1.0, "\(elapsed) s")
        let again = Date()
        #expect(error { _ = try client.publish(to: s.base + "/hang", offer: "v=0\r\n", token: token) } == .stopped)
        #expect(Date().timeIntervalSince(again) < 0.5)
    }

    @Test func theDeleteDoesNotWatchTheStop() throws {
        let s = try WHIPTestServer.get()
        let stop = WHIPStop()
        stop.raise()
        let client = WHIPClient(configuration: WHIPClient.Configuration(stop: stop))
        // Sent and answered (404: nothing there), not refused as stopped.
        let e = error { try client.delete(resource: s.base + "/nothing/here", token: token) }
        guard case .httpStatus(404, _, _)? = e else { Issue.record("expected 404, got \(String(describing: e))"); return }
    }

    @Test(arguments: [("/status/500", "HTTP 500: status 500 from the test server"),
                      ("/status/405", "HTTP 405: status 405 from the test server"),
                      ("/nothing/here", "HTTP 404"),
                      ("/hang", "no answer within 1.0 s")])
    func aFailedDeleteIsOneLineWithoutTheToken(path: String, expected: String) throws {
        let s = try WHIPTestServer.get()
        let start = Date()
        let line = WHIPClient().deleteReportingFailure(resource: s.base + path + "?t=" + Self.secret, token: token)
        #expect(Date().timeIntervalSince(start) < 2.5, "the DELETE is bounded")
        let text = try #require(line)
        #expect(text.hasPrefix("WHIP DELETE \(s.base)\(path)?t=<redacted>: \(expected)"), "\(text)")
        #expect(!text.contains(Self.secret) && !text.contains("\n"))
    }

    @Test func aDeleteTheServerTakesSaysNothing() throws {
        let s = try WHIPTestServer.get()
        #expect(WHIPClient().deleteReportingFailure(resource: s.base + "/whip/resource/never-made", token: token) == nil)
    }

    @Test func deleteOfAnUnknownResourceReportsTheStatus() throws {
        let s = try WHIPTestServer.get()
        let e = error { try WHIPClient().delete(resource: s.base + "/nothing/here", token: token) }
        guard case .httpStatus(404, _, _)? = e else { Issue.record("expected 404, got \(String(describing: e))"); return }
        expectNoToken(e)
    }
}
