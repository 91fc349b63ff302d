import RTCShare
import Testing

/// The one reading of a source string (`--source`, the C ABI's `source`): each accepted form
/// and what it names, each refused one and its line.
@Suite struct ShareSourceChoiceParseTests {
    static let defaultMax = IPCSource.defaultMaxSize

    /// The line a refused text gets; nil when it parses.
    static func refusal(_ text: String, acceptsPush: Bool = false) -> String? {
        do {
            _ = try ShareSourceChoice.parse(text, acceptsPush: acceptsPush)
            return nil
        } catch {
            return error.description
        }
    }

    @Test(arguments: [
        ("testsrc", ShareSourceChoice.testPattern()),
        ("x11", .x11(display: nil)),
        ("x11::0", .x11(display: ":0")),
        ("x11:host:1.0", .x11(display: "host:1.0")),
        ("wayland", .wayland(output: nil)),
        ("wayland:HEADLESS-1", .wayland(output: "HEADLESS-1")),
        ("portal", .portal()),
        ("y4m:clip.y4m", .y4m(path: "clip.y4m")),
        ("y4m:-", .y4m(path: "-")),
        ("y4m:/a path/with:colon.y4m", .y4m(path: "/a path/with:colon.y4m")),
        ("ipc:/run/rtcshare.sock", .ipc(path: "/run/rtcshare.sock", maxSize: defaultMax)),
    ])
    func acceptedForms(text: String, expected: ShareSourceChoice) throws {
        #expect(try ShareSourceChoice.parse(text) == expected)
        #expect(try ShareSourceChoice.parse(text, acceptsPush: true) == expected)
    }

    @Test func pushIsASourceOnlyWhereTheHostCanPush() throws {
        #expect(try ShareSourceChoice.parse("push", acceptsPush: true) == .pushed(maxSize: Self.defaultMax))
        #expect(throws: ShareSourceChoice.ParseError.self) { try ShareSourceChoice.parse("push") }
    }

    @Test(arguments: [
        ("", "must be testsrc, y4m:PATH, y4m:-, x11[:DISPLAY], wayland[:OUTPUT], portal or ipc:PATH, not ''"),
        ("push", "must be testsrc, y4m:PATH, y4m:-, x11[:DISPLAY], wayland[:OUTPUT], portal or ipc:PATH, not 'push'"),
        ("Testsrc", "must be testsrc, y4m:PATH, y4m:-, x11[:DISPLAY], wayland[:OUTPUT], portal or ipc:PATH, not 'Testsrc'"),
        ("testsrc:", "must be testsrc, y4m:PATH, y4m:-, x11[:DISPLAY], wayland[:OUTPUT], portal or ipc:PATH, not 'testsrc:'"),
        ("x11 ", "must be testsrc, y4m:PATH, y4m:-, x11[:DISPLAY], wayland[:OUTPUT], portal or ipc:PATH, not 'x11 '"),
        ("clip.y4m", "must be testsrc, y4m:PATH, y4m:-, x11[:DISPLAY], wayland[:OUTPUT], portal or ipc:PATH, not 'clip.y4m'"),
        ("x11:", "x11: needs a display, e.g. x11::0 (or x11 for $DISPLAY)"),
        ("y4m:", "y4m: needs a path (or - for standard input)"),
        ("wayland:", "wayland: needs an output name, e.g. wayland:HDMI-A-1 (or wayland for the first)"),
        ("ipc:", "ipc: needs the path of the socket to listen on"),
        ("portal:", "must be testsrc, y4m:PATH, y4m:-, x11[:DISPLAY], wayland[:OUTPUT], portal or ipc:PATH, not 'portal:'"),
    ])
    func refusedFormsSayWhyInOneLine(text: String, line: String) {
        #expect(Self.refusal(text) == line)
    }

    @Test func theCABIsListNamesPush() {
        #expect(Self.refusal("nope", acceptsPush: true)
                == "must be push, testsrc, y4m:PATH, y4m:-, x11[:DISPLAY], wayland[:OUTPUT], portal or ipc:PATH, not 'nope'")
    }
}
