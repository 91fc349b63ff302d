import RTCShare
import Testing

/// One classification for the reconnect, the CLI's exit status and the C ABI's codes.
@Suite struct FailureClassTests {
    func whip(_ e: WHIPError) -> ConnectionFailure { .whip(url: "http://192.0.2.1/whip", e) }

    @Test func credentialsRefusedAreUnauthorizedAndPermanent() {
        for e in [WHIPError.httpStatus(401, reason: ""), .httpStatus(403, reason: ""), .badToken("empty")] {
            #expect(whip(e).failureClass == .unauthorized && whip(e).retry == .permanent, "\(e)")
            #expect(whip(e).isUnauthorized)
        }
    }

    @Test func aConfigurationTheServerRefusesIsPermanent() {
        let refused: [WHIPError] = [.httpStatus(400, reason: ""), .httpStatus(404, reason: ""),
                                    .httpStatus(415, reason: ""), .httpStatus(422, reason: ""),
                                    .httpStatus(200, reason: "expected 201 Created"), .missingLocation,
                                    .wrongContentType("text/html"), .noUsableVideoCodec(offered: ["VP8/90000"]),
                                    .badAnswer("has no a=ice-ufrag"), .badURL("ftp://x"), .untrustedServer("x")]
        for e in refused { #expect(whip(e).failureClass == .refused && whip(e).retry == .permanent, "\(e)") }
    }

    @Test func theServerOrPathAwayIsTemporaryWithItsRetryAfter() {
        #expect(whip(.httpStatus(503, reason: "", retryAfterSeconds: 12)).retry == .temporary(afterSeconds: 12))
        #expect(whip(.httpStatus(503, reason: "", retryAfterSeconds: 12)).failureClass
                == .unavailable(retryAfterSeconds: 12))
        for e in [WHIPError.httpStatus(500, reason: ""), .httpStatus(408, reason: ""), .httpStatus(429, reason: ""),
                  .timeout(seconds: 10), .transport("Connection refused")] {
            #expect(whip(e).retry == .temporary(afterSeconds: nil), "\(e)")
        }
        let transport: [TransportFailure] = [.ice(.allPairsFailed(pairs: 1)), .consentLost, .dtlsClosed,
                                             .dtls(.timedOut), .dtls(.peerAlert(40)), .srtpKeys("x")]
        for f in transport { #expect(ConnectionFailure.transport(f).retry == .temporary(afterSeconds: nil), "\(f)") }
    }

    /// A restarted server answers before its endpoints are made again: once the endpoint took
    /// the share, its 404 is waited out; the first publish's 404 (a wrong URL) is not.
    @Test func anEndpointThatTookTheShareAnswering404IsWaitedOut() {
        let notFound = ShareError.connection(whip(.httpStatus(404, reason: "Invalid endpoint ID")))
        #expect(notFound.retry == .permanent)
        #expect(notFound.retryOncePublished == .temporary(afterSeconds: nil))
        #expect(ShareError.connection(whip(.httpStatus(404, reason: "", retryAfterSeconds: 5))).retryOncePublished
                == .temporary(afterSeconds: 5))
        for e in [WHIPError.httpStatus(400, reason: ""), .httpStatus(401, reason: ""), .httpStatus(403, reason: ""),
                  .httpStatus(410, reason: ""), .httpStatus(422, reason: ""), .missingLocation] {
            #expect(ShareError.connection(whip(e)).retryOncePublished == .permanent, "\(e)")
        }
        #expect(ShareError.connection(whip(.httpStatus(503, reason: ""))).retryOncePublished == .temporary(afterSeconds: nil))
    }

    @Test func dtlsThatCanNeverAgreeIsPermanent() {
        #expect(ConnectionFailure.transport(.dtls(.noSRTPProfile)).failureClass == .refused)
        #expect(ConnectionFailure.transport(.dtls(.fingerprintMismatch)).failureClass == .refused)
    }

    @Test func resourcesStoppingAndTheRest() {
        #expect(whip(.resource("cannot load libcurl.so.4")).failureClass == .resource)
        #expect(whip(.stopped).failureClass == .stopped)
        #expect(ShareError.connection(whip(.stopped)).retry == .permanent)
        #expect(ShareError.doesNotFit("x").failureClass == .refused)
        #expect(ShareError.pipeline("RTP video: x").failureClass == .software)
        #expect(ShareError.source("x").failureClass == .other && ShareError.output("x").failureClass == .other)
        #expect(ShareError.invalidConfiguration("--audio wav:x: open: No such file").failureClass == .other)
    }
}
