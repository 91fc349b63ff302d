import Testing
import RTCShareDTLS

/// The self-signed P-256 identity is cheap enough to make at every start.
@Suite struct DTLSCertificateTests {
    @Test func generationTakesMilliseconds() throws {
        _ = try DTLSCertificate()  // first use loads OpenSSL's providers; time the steady state too
        let clock = ContinuousClock()
        var slowest = Duration.zero
        var total = Duration.zero
        let runs = 20
        for _ in 0..<runs {
            let elapsed = try clock.measure { _ = try DTLSCertificate() }
            slowest = max(slowest, elapsed)
            total += elapsed
        }
        print("DTLS certificate (P-256 key + self-signed X.509): mean \(total / runs), slowest \(slowest) over \(runs) runs")
        #expect(slowest < .milliseconds(50))
    }

    @Test func invalidValidityIsRefused() {
        #expect(throws: DTLSError.certificateGeneration) { _ = try DTLSCertificate(validityDays: 0) }
    }
}
