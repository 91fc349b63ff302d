import Testing
@testable import RTCShareMedia

@Suite struct Y4MHeaderTests {
    private func parse(_ s: String) throws(Y4MHeader.ParseError) -> Y4MHeader {
        try Y4MHeader.parse(Array(s.utf8))
    }

    @Test func typicalFfmpegHeaderParses() throws {
        let h = try parse("YUV4MPEG2 W1280 H720 F30000:1001 Ip A1:1 C420jpeg XYSCSS=420JPEG")
        #expect(h == Y4MHeader(width: 1280, height: 720, frameRateNumerator: 30000,
                               frameRateDenominator: 1001, interlaced: false))
        #expect(h.frameBytes == 1280 * 720 * 3 / 2)
    }

    @Test func oddSizeFrameBytesRoundChromaUp() throws {
        let h = try parse("YUV4MPEG2 W33 H17")
        #expect(h.frameBytes == 33 * 17 + 2 * 17 * 9)
    }

    @Test(arguments: [
        ("", Y4MHeader.ParseError.notYUV4MPEG2),
        ("YUV4MPEG W1 H1", .notYUV4MPEG2),
        ("YUV4MPEG2 H720", .missingSize),
        ("YUV4MPEG2 W0 H720", .badField("W0")),
        ("YUV4MPEG2 W-5 H720", .badField("W-5")),
        ("YUV4MPEG2 W99999999999999999999 H720", .badField("W99999999999999999999")),
        ("YUV4MPEG2 W16385 H720", .badField("W16385")),
        ("YUV4MPEG2 W64 H64 F30", .badField("F30")),
        ("YUV4MPEG2 W64 H64 F30:0", .badField("F30:0")),
        ("YUV4MPEG2 W64 H64 C444", .unsupportedChroma("444")),
        ("YUV4MPEG2 W64 H64 Z1", .badField("Z1")),
        ("YUV4MPEG2 W64 H64 Iq", .badField("Iq")),
    ])
    func malformedHeadersGiveOneClearError(input: String, expected: Y4MHeader.ParseError) {
        #expect(throws: expected) { try parse(input) }
    }

    @Test func overlongHeaderIsRefused() {
        let long = "YUV4MPEG2 W64 H64 " + String(repeating: "X", count: 2000)
        #expect(throws: Y4MHeader.ParseError.headerTooLong) { try parse(long) }
    }

    @Test func randomBytesNeverTrap() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var bytes = Array("YUV4MPEG2 ".utf8)
            for _ in 0..<Int.random(in: 0..<40, using: &rng) {
                bytes.append(UInt8.random(in: 0...255, using: &rng))
            }
            _ = try? Y4MHeader.parse(bytes)
        }
    }
}
