import Glibc

/// A subcommand: its options, its help, what it does.
protocol CommandLineCommand: CommandLineOptions {
    static var name: String { get }
    static var abstract: String { get }
    /// More help, after the overview.
    static var discussion: String? { get }
    /// Titles of option groups, by the name of their first option (help shows the title there).
    static var groupTitles: [String: String] { get }
    func run() throws
}

extension CommandLineCommand {
    static var discussion: String? { nil }
    static var groupTitles: [String: String] { [:] }
}

/// Picks the subcommand, handles `--help` and `--version`, runs it, and turns every failure
/// into one `rtcshare: error:` line: exit 2 for a bad command line, else the `ExitStatus` of
/// the failure (1 when it has none finer).
struct CommandLineTool {
    let name: String
    let abstract: String
    let version: String
    let commands: [any CommandLineCommand.Type]
    /// Run when the first argument names no subcommand (`rtcshare --peer …` is `rtcshare share --peer …`).
    let defaultCommand: any CommandLineCommand.Type

    func main(_ arguments: [String] = CommandLine.arguments) -> Never {
        let rest = Array(arguments.dropFirst())
        let first = rest.first ?? ""
        if first == "--version" {
            Self.out(version)
            exit(0)
        }
        if first == "--help" || first == "-h" || first == "help" {
            let sub = rest.count > 1 ? rest[1] : ""
            if first == "help", let named = command(named: sub) {
                Self.out(named.helpText(tool: self, overview: true))
            } else {
                Self.out(rootHelp())
            }
            exit(0)
        }
        var chosen = defaultCommand
        var options = rest[...]
        if let named = command(named: first) {
            chosen = named
            options = rest.dropFirst()
        } else if !first.isEmpty, !first.hasPrefix("-") {
            fail("unknown command '\(first)'; the commands are \(commandNames)", status: 2)
        }
        if options.contains("--help") || options.contains("-h") {
            Self.out(chosen.helpText(tool: self, overview: true))
            exit(0)
        }
        chosen.execute(options, tool: self)
    }

    private func command(named name: String) -> (any CommandLineCommand.Type)? {
        for command in commands where command.name == name { return command }
        return nil
    }

    private var commandNames: String {
        var names: [String] = []
        for command in commands { names.append(command.name) }
        return names.joined(separator: ", ")
    }

    func fail(_ message: String, status: Int32) -> Never {
        StandardError.write("\(name): error: \(message)", level: .error)
        exit(status)
    }

    static func out(_ text: String) {
        let t = text.hasSuffix("\n") ? text : text + "\n"
        _ = t.withCString { write(STDOUT_FILENO, $0, strlen($0)) }
    }

    func rootHelp() -> String {
        var text = "OVERVIEW: \(abstract)\n\nUSAGE: \(name) [<command>] [<options>]\n\nCOMMANDS:\n"
        for command in commands {
            let label = command.name + (command.name == defaultCommand.name ? " (default)" : "")
            text += Self.entry(label, command.abstract)
        }
        text += "\n  See '\(name) <command> --help' for the options of each; '\(name) --version' for the version.\n\n"
        text += defaultCommand.helpText(tool: self, overview: false)
        text += "\nEXIT STATUS:\n" + ExitStatus.helpText
        text += "\nENVIRONMENT:\n" + EnvironmentHelp.helpText
        return text
    }

    /// "  label      help…" with the help wrapped at 80 columns, aligned at column 26.
    static func entry(_ label: String, _ help: String) -> String {
        let column = 26
        let wrapped = wrap(help, indent: column, width: 80)
        if label.count + 2 < column - 1 {
            let first = "  " + label + String(repeating: " ", count: column - 2 - label.count)
            return first + wrapped.dropFirst(column) + "\n"
        }
        return "  " + label + "\n" + wrapped + "\n"
    }

    /// `text` in lines of at most `width` columns, each indented by `indent` spaces.
    static func wrap(_ text: String, indent: Int, width: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, indent + line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        let pad = String(repeating: " ", count: indent)
        return lines.map { pad + $0 }.joined(separator: "\n")
    }
}

extension CommandLineCommand {
    /// Parses `arguments`, runs the command and exits: 0, or 2 for a bad command line, or the
    /// failure's `ExitStatus`.
    static func execute(_ arguments: ArraySlice<String>, tool: CommandLineTool) -> Never {
        let command: Self
        do {
            command = try parse(arguments, command: name)
        } catch {
            tool.fail(error.description, status: 2)
        }
        do {
            try command.run()
        } catch {
            tool.fail("\(error)", status: ExitStatus(error: error).rawValue)
        }
        exit(0)
    }

    static func helpText(tool: CommandLineTool, overview: Bool = true) -> String {
        var text = overview ? "OVERVIEW: \(abstract)\n\n" : ""
        if overview, let more = discussion { text += CommandLineTool.wrap(more, indent: 0, width: 80) + "\n\n" }
        text += "USAGE: \(tool.name) \(name) [<options>]\n\nOPTIONS:\n"
        for spec in options where !spec.hidden {
            if let title = groupTitles[spec.name] { text += "\n\(title.uppercased()):\n" }
            let label = "--\(spec.name)" + (spec.valueName.map { " <\($0)>" } ?? "")
            let help = spec.help + (spec.defaultText.map { " (default: \($0))" } ?? "")
            text += CommandLineTool.entry(label, help)
        }
        if !options.isEmpty {
            text += CommandLineTool.entry("--config <file>", "Read options from this file first: one 'key = value' "
                + "a line, each key a long option above without its dashes (a flag: key = true), # comments. "
                + "An option the command line gives replaces the file's.")
        }
        text += CommandLineTool.entry("-h, --help", "Show help information.")
        if overview, name == tool.defaultCommand.name {
            text += "\nEXIT STATUS:\n" + ExitStatus.helpText + "\nENVIRONMENT:\n" + EnvironmentHelp.helpText
        }
        return text
    }
}
