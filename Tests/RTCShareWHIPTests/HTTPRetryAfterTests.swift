import Testing
@testable import RTCShareWHIP

/// `Retry-After` (RFC 9110 §10.2.3): both forms, the cap, and what is not advice.
@Suite struct HTTPRetryAfterTests {
    // RFC 9110 §5.6.7's example date, and its epoch seconds.
    static let example = "Sun, 06 Nov 1994 08:49:37 GMT"
    static let exampleEpoch = 784_111_777

    @Test func theRFCExampleDateIsItsEpochSecond() {
        #expect(HTTPRetryAfter.epochSeconds(imfFixdate: Self.example) == Self.exampleEpoch)
        #expect(HTTPRetryAfter.daysFromCivil(year: 1970, month: 1, day: 1) == 0)
        #expect(HTTPRetryAfter.daysFromCivil(year: 2000, month: 3, day: 1) == 11_017)  // after a leap day
    }

    @Test(arguments: [("120", 120), ("0", 0), ("  7 ", 7), ("300", 300), ("301", 300),
                      ("99999999999999999999999", 300)])
    func deltaSecondsAreTakenAndCapped(value: String, seconds: Int) {
        #expect(HTTPRetryAfter.seconds(value, responseDate: nil, now: 0) == seconds)
    }

    @Test func aDateIsTakenAgainstTheResponsesOwnDate() {
        // The server's clock and ours disagree by an hour: its Date is the reference.
        let later = "Sun, 06 Nov 1994 08:50:17 GMT"
        #expect(HTTPRetryAfter.seconds(later, responseDate: Self.example, now: Self.exampleEpoch + 3_600) == 40)
        // Without a Date, ours.
        #expect(HTTPRetryAfter.seconds(later, responseDate: nil, now: Self.exampleEpoch) == 40)
    }

    @Test func aPastDateIsNowAndAFarOneIsTheCap() {
        #expect(HTTPRetryAfter.seconds(Self.example, responseDate: nil, now: Self.exampleEpoch + 10) == 0)
        #expect(HTTPRetryAfter.seconds("Thu, 01 Jan 2099 00:00:00 GMT", responseDate: nil, now: Self.exampleEpoch) == 300)
    }

    @Test(arguments: ["", "-5", "1.5", "soon", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
                      "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT"])
    func whatIsNotOneOfTheTwoFormsIsNoAdvice(value: String) {
        #expect(HTTPRetryAfter.seconds(value, responseDate: nil, now: Self.exampleEpoch) == nil)
    }
}

/// Permanent or temporary, per failure: what the reconnect and the exit status act on.
@Suite struct WHIPErrorRetryTests {
    @Test(arguments: [400, 401, 403, 404, 405, 409, 413, 415, 422, 200, 302])
    func refusalsArePermanent(status: Int) {
        #expect(WHIPError.httpStatus(status, reason: "").retry == .permanent)
    }

    @Test(arguments: [408, 425, 429, 500, 502, 503, 504])
    func serverTroubleIsTemporaryWithItsRetryAfter(status: Int) {
        #expect(WHIPError.httpStatus(status, reason: "").retry == .temporary(afterSeconds: nil))
        #expect(WHIPError.httpStatus(status, reason: "", retryAfterSeconds: 30).retry == .temporary(afterSeconds: 30))
    }

    @Test func eachKindHasItsClass() {
        let permanent: [WHIPError] = [.missingLocation, .badURL("x"), .wrongContentType("text/html"), .badToken("empty"),
                                      .noUsableVideoCodec(offered: ["VP8/90000"]), .badAnswer("x"),
                                      .responseTooLarge(what: "body", limit: 1), .tooManyRedirects(3),
                                      .untrustedServer("x"), .stopped]
        for e in permanent { #expect(e.retry == .permanent, "\(e)") }
        let temporary: [WHIPError] = [.timeout(seconds: 10), .transport("Connection refused"), .resource("no memory")]
        for e in temporary { #expect(e.retry == .temporary(afterSeconds: nil), "\(e)") }
        #expect(WHIPError.httpStatus(401, reason: "").isUnauthorized && WHIPError.badToken("x").isUnauthorized)
        #expect(!WHIPError.httpStatus(404, reason: "").isUnauthorized)
    }

    @Test func theDescriptionsStayAndNameTheRetryAfter() {
        #expect(WHIPError.httpStatus(503, reason: "busy").description == "WHIP server answered HTTP 503: busy")
        #expect(WHIPError.httpStatus(503, reason: "busy", retryAfterSeconds: 7).description
                == "WHIP server answered HTTP 503: busy (Retry-After: 7 s)")
        #expect(WHIPError.tooManyRedirects(3).description == "WHIP request failed: more than 3 redirects")
    }
}
