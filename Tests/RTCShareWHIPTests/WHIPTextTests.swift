import Foundation
import Testing
@testable import RTCShareWHIP

@Suite struct WHIPTextTests {
    @Test func keepsTheFirstLineOnlyPrintableAndCapped() {
        #expect(WHIPText.sanitised(Array("\r\n  Bad \u{1B}[31mtoken\u{07}\tnow  \r\nsecond".utf8)) == "Bad [31mtoken now")
        let long = WHIPText.sanitised(Array(String(repeating: "x", count: 500).utf8))
        #expect(long == String(repeating: "x", count: WHIPText.maximumReason) + "…")
        #expect(WHIPText.sanitised(Array("caf\u{E9}".utf8)) == "caf")
    }

    @Test func hidesSecretsEvenWhenTheyStraddleTheCap() {
        let secret = "ABCDEFGHIJ"
        let body = String(repeating: "y", count: 115) + secret
        let out = WHIPText.sanitised(Array(body.utf8), hiding: [secret])
        #expect(!out.contains("ABCDE"))
    }

    @Test func headersAreFoundInAnyCaseAndInOrder() {
        let h = HTTPHeaders(raw: Array("HTTP/1.1 201 Created\r\nlocation: /a\r\nLink: <stun:x>\r\nLINK: <stun:y>\r\n\r\n".utf8))
        #expect(h["Location"] == "/a")
        #expect(h.values("link") == ["<stun:x>", "<stun:y>"])
    }

    @Test func linkValuesParseQuotedParametersAndSkipOtherRelations() {
        let servers = WHIPICEServer.parse(linkHeaders: [
            #"<stun:a.example:3478>; rel="ice-server", <https://x>; rel=help, <turns:b.example>; rel="ice-server"; username="u\"1"; credential=c"#,
            #"<ftp:nope>; rel="ice-server""#, "garbage <stun:z>",
        ])
        #expect(servers == [WHIPICEServer(kind: .stun, url: "stun:a.example:3478"),
                            WHIPICEServer(kind: .turns, url: "turns:b.example", username: "u\"1", credential: "c")])
    }

    @Test func locationsResolveAsRFC3986Says() throws {
        let base = "http://127.0.0.1:8080/whip/endpoint/abc"
        #expect(try CurlURL.resolve("/whip/resource/1", against: base) == "http://127.0.0.1:8080/whip/resource/1")
        #expect(try CurlURL.resolve("res/1", against: base) == "http://127.0.0.1:8080/whip/endpoint/res/1")
        #expect(try CurlURL.resolve("../r", against: base) == "http://127.0.0.1:8080/whip/r")
        #expect(try CurlURL.resolve("https://10.0.0.1/x", against: base) == "https://10.0.0.1/x")
        #expect(throws: WHIPError.self) { try CurlURL.resolve("ftp://10.0.0.1/x", against: base) }
    }

    @Test func tokensNeverPrint() throws {
        let t = try WHIPToken("abc.DEF-123")
        for text in [t.description, t.debugDescription, String(describing: t), String(reflecting: t), "\(t)", "\([t])"] {
            #expect(!text.contains("abc.DEF"), "token in '\(text)'")
        }
        #expect(throws: WHIPError.self) { try WHIPToken("a\r\nX-Injected: 1") }
        #expect(throws: WHIPError.self) { try WHIPToken("") }
        #expect(throws: WHIPError.self) { try WHIPToken(String(repeating: "a", count: 4097)) }
    }

    @Test func tokenFilesLoseOneTrailingNewlineAndRefuseEmptyOrHuge() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rtcshare-token-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func file(_ name: String, _ contents: String) throws -> String {
            let path = dir.appendingPathComponent(name).path
            try contents.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        #expect(try WHIPToken.read(fromFile: try file("lf", "tok-1\n")).secret == "tok-1")
        #expect(try WHIPToken.read(fromFile: try file("crlf", "tok-2\r\n")).secret == "tok-2")
        #expect(try WHIPToken.read(fromFile: try file("bare", "tok-3")).secret == "tok-3")
        #expect(throws: WHIPError.self) { try WHIPToken.read(fromFile: try file("empty", "\n")) }
        #expect(throws: WHIPError.self) { try WHIPToken.read(fromFile: try file("two", "a\n\n")) }
        #expect(throws: WHIPError.self) { try WHIPToken.read(fromFile: try file("huge", String(repeating: "a", count: 10_000))) }
        #expect(throws: WHIPError.self) { try WHIPToken.read(fromFile: dir.appendingPathComponent("missing").path) }
        do { _ = try WHIPToken.read(fromFile: try file("secret-in-file", "a b")) } catch {
            #expect(!"\(error)".contains("a b"))
        }
    }
}
