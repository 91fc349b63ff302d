import Glibc

// The command line of `rtcshare`, parsed without Foundation.
//
// Why not swift-argument-parser: on Linux it imports FoundationEssentials, which a statically
// linked binary then carries whole; measured, that costs 1.8 MiB of peak RSS (a static hello
// world: 5.4 MiB plain, 7.2 MiB with FoundationEssentials) — 1.8 MiB of a 50 MiB process
// budget that a 1280x720 share with SRTP needs. What rtcshare needs of a parser is small:
// `--name value`, `--name=value` and `--flag`, typed values, one-line errors, generated help.
//
// An options type lists its options as `OptionSpec`s over its own key paths; a command's
// options can include another type's (`lifted(into:)`), as option groups.

/// A bad command line: one line for the user, exit status 2.
struct ValidationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A type an option's text converts to.
protocol ArgumentValue {
    init?(argument: String)
    /// How the value reads in help ("20", "auto").
    var argumentDescription: String { get }
}

extension Int: ArgumentValue {
    init?(argument: String) { self.init(argument) }
    var argumentDescription: String { String(self) }
}

extension Double: ArgumentValue {
    init?(argument: String) {
        guard let value = Double(argument), value.isFinite else { return nil }
        self = value
    }
    var argumentDescription: String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}

extension String: ArgumentValue {
    init?(argument: String) { self = argument }
    var argumentDescription: String { self }
}

/// One option of an options type `Root`: its name, help and how its text lands in a `Root`.
struct OptionSpec<Root> {
    /// The long name without dashes ("fps").
    let name: String
    /// `<value>` in help; nil for a flag.
    let valueName: String?
    let help: String
    let hidden: Bool
    /// The default as help shows it, if it has one worth showing.
    let defaultText: String?
    /// Stores `text` (ignored for flags) into the options.
    let store: (inout Root, String) throws(ValidationError) -> Void

    var isFlag: Bool { valueName == nil }

    /// The same option inside a larger options type that holds a `Root` at `path`.
    func lifted<Outer>(into path: WritableKeyPath<Outer, Root>) -> OptionSpec<Outer> {
        let store = self.store
        return OptionSpec<Outer>(name: name, valueName: valueName, help: help, hidden: hidden,
                                 defaultText: defaultText) { (outer: inout Outer, text: String) throws(ValidationError) in
            try store(&outer[keyPath: path], text)
        }
    }
}

extension OptionSpec {
    /// `--name <value>` for a property with a default.
    static func option<V: ArgumentValue>(_ name: String, _ path: WritableKeyPath<Root, V>, value: String? = nil,
                                         help: String, hidden: Bool = false, showDefault: Bool = true,
                                         defaults: Root) -> OptionSpec {
        OptionSpec(name: name, valueName: value ?? name, help: help, hidden: hidden,
                   defaultText: showDefault ? defaults[keyPath: path].argumentDescription : nil) {
            (root: inout Root, text: String) throws(ValidationError) in
            guard let v = V(argument: text) else { throw Self.badValue(name, text, V.self) }
            root[keyPath: path] = v
        }
    }

    /// `--name <value>` for a property that is nil when the option is not given.
    static func option<V: ArgumentValue>(_ name: String, _ path: WritableKeyPath<Root, V?>, value: String? = nil,
                                         help: String, hidden: Bool = false) -> OptionSpec {
        OptionSpec(name: name, valueName: value ?? name, help: help, hidden: hidden, defaultText: nil) {
            (root: inout Root, text: String) throws(ValidationError) in
            guard let v = V(argument: text) else { throw Self.badValue(name, text, V.self) }
            root[keyPath: path] = v
        }
    }

    /// `--name`, setting a Bool.
    static func flag(_ name: String, _ path: WritableKeyPath<Root, Bool>, help: String, hidden: Bool = false) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help, hidden: hidden, defaultText: nil) {
            (root: inout Root, _: String) throws(ValidationError) in
            root[keyPath: path] = true
        }
    }

    private static func badValue<V>(_ name: String, _ text: String, _ type: V.Type) -> ValidationError {
        let kind = type == Int.self ? "a whole number" : type == Double.self ? "a number" : "a value"
        return ValidationError("--\(name) must be \(kind), not '\(text)'")
    }
}

/// Options a command (or a group within one) reads from the command line.
protocol CommandLineOptions {
    init()
    /// Every option, in the order help lists them.
    static var options: [OptionSpec<Self>] { get }
    /// Checks the values together once all are read; throws one line.
    func validate() throws(ValidationError)
}

extension CommandLineOptions {
    func validate() throws(ValidationError) {}

    /// Reads `arguments` (after the command's name) into a new value and validates it.
    /// `--config FILE` reads options from a file first (`ConfigFile`); an option the command
    /// line gives replaces the file's. `--help` is not handled here (see `CommandLineTool`).
    static func parse(_ arguments: ArraySlice<String>, command: String) throws(ValidationError) -> Self {
        var result = Self()
        let (configPath, arguments) = try splitConfig(arguments, command: command)
        // The options whose value came from the file, by the line that gave it.
        var fromFile: [String: Int] = [:]
        var config: ConfigFile?
        if let configPath { config = try ConfigFile(path: configPath) }
        if let config {
            let given = Set(namesGiven(arguments))
            for entry in config.entries where !given.contains(entry.name) {
                try config.store(entry, into: &result, options: options, command: command)
                fromFile[entry.name] = entry.line
            }
        }
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw ValidationError("unexpected argument '\(argument)' (see rtcshare \(command) --help)")
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String? = nil
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let spec = options.first(where: { $0.name == name }) else {
                throw ValidationError("unknown option '--\(name)' (see rtcshare \(command) --help)")
            }
            if spec.isFlag {
                guard inlineValue == nil else { throw ValidationError("--\(name) takes no value") }
                try spec.store(&result, "")
            } else {
                guard let value = inlineValue ?? rest.popFirst() else {
                    throw ValidationError("--\(name) needs a value <\(spec.valueName ?? "value")>")
                }
                try spec.store(&result, value)
            }
        }
        do {
            try result.validate()
        } catch {
            // A check across options names the option it is about first: when that option's
            // value came from the file, say where.
            if let config, let name = error.firstOptionName, let line = fromFile[name] {
                throw config.error(line: line, error)
            }
            throw error
        }
        return result
    }

    /// The path `--config` names (at most once) and the other arguments, in order.
    private static func splitConfig(_ arguments: ArraySlice<String>,
                                    command: String) throws(ValidationError) -> (String?, [String]) {
        var path: String?
        var rest: [String] = []
        var arguments = arguments
        while let argument = arguments.popFirst() {
            var value: String?
            if argument == "--config" {
                guard let next = arguments.popFirst() else { throw ValidationError("--config needs a value <file>") }
                value = next
            } else if argument.hasPrefix("--config=") {
                value = String(argument.dropFirst("--config=".count))
            } else {
                rest.append(argument)
                // An option's value is never taken for an option (`--sdp --config` names a file).
                if let spec = options.first(where: { "--" + $0.name == argument }), !spec.isFlag,
                   let next = arguments.popFirst() {
                    rest.append(next)
                }
                continue
            }
            guard path == nil else { throw ValidationError("--config given twice") }
            guard let value, !value.isEmpty else { throw ValidationError("--config needs a value <file>") }
            path = value
        }
        return (path, rest)
    }

    /// The long names of the options in `arguments` (without dashes).
    private static func namesGiven(_ arguments: [String]) -> [String] {
        var names: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else { continue }
            let name = String(argument.dropFirst(2).prefix { $0 != "=" })
            names.append(name)
            if !argument.contains("="), let spec = options.first(where: { $0.name == name }), !spec.isFlag {
                index += 1
            }
        }
        return names
    }
}

extension ValidationError {
    /// The first `--name` the message speaks of ("--duration must be ..." names duration).
    var firstOptionName: String? {
        guard let start = description.firstRange(of: "--") else { return nil }
        let name = description[start.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" }
        return name.isEmpty ? nil : String(name)
    }
}
