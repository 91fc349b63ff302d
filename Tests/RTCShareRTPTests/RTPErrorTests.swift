import Testing
@testable import RTCShareRTP

@Suite struct RTPErrorTests {
    @Test func errorsReadAsOneLine() {
        #expect(RTPError.bufferTooSmall(needed: 10, available: 4).description
                == "buffer too small: 10 bytes needed, 4 available")
        #expect(!RTPError.srtp("auth failed", status: 7).description.contains("\n"))
    }
}
