// One reading of a source named as text, for both faces that take one: the CLI's `--source`
// and the C ABI's `rtcshare_config.source`. A form one of them accepted and the other refused
// (an empty display or path) would make the same words mean two things.
extension ShareSourceChoice {
    /// Why a text names no source: one line, without the option's name (the CLI puts
    /// `--source ` in front, the C ABI `source `).
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Reads `testsrc`, `y4m:PATH` (`y4m:-`: standard input), `x11` (the display in $DISPLAY),
    /// `x11:DISPLAY`, `wayland` (the first output), `wayland:OUTPUT`, `portal` (the ScreenCast portal), `ipc:PATH` and, where the host hands pictures in (`acceptsPush`: the C
    /// ABI; the CLI has nothing to push), `push`. What the text does not say takes its default
    /// (the test pattern at 30 fps, upright, never stalling; ipc and pushed pictures up to
    /// `IPCSource.defaultMaxSize`); a caller with other settings puts them in afterwards.
    public static func parse(_ text: String, acceptsPush: Bool = false) throws(ParseError) -> ShareSourceChoice {
        if text == "testsrc" { return .testPattern() }
        if text == "x11" { return .x11(display: nil) }
        if text == "wayland" { return .wayland(output: nil) }
        if text == "portal" { return .portal() }
        if let output = text.value(after: "wayland:") {
            guard !output.isEmpty else { throw ParseError("wayland: needs an output name, e.g. wayland:HDMI-A-1 (or wayland for the first)") }
            return .wayland(output: output)
        }
        if acceptsPush, text == "push" { return .pushed(maxSize: IPCSource.defaultMaxSize) }
        if let display = text.value(after: "x11:") {
            guard !display.isEmpty else { throw ParseError("x11: needs a display, e.g. x11::0 (or x11 for $DISPLAY)") }
            return .x11(display: display)
        }
        if let path = text.value(after: "y4m:") {
            guard !path.isEmpty else { throw ParseError("y4m: needs a path (or - for standard input)") }
            return .y4m(path: path)
        }
        if let path = text.value(after: "ipc:") {
            guard !path.isEmpty else { throw ParseError("ipc: needs the path of the socket to listen on") }
            return .ipc(path: path, maxSize: IPCSource.defaultMaxSize)
        }
        throw ParseError("must be \(acceptsPush ? "push, " : "")testsrc, y4m:PATH, y4m:-, x11[:DISPLAY], wayland[:OUTPUT], portal or ipc:PATH, not '\(text)'")
    }
}

private extension String {
    /// The rest of the text after `prefix`, or nil when it does not start with it.
    func value(after prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
    }
}
