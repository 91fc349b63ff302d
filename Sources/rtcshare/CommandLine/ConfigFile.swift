import Glibc

/// `--config FILE`: options read from a file, for a service whose command line stays fixed.
///
/// One `key = value` a line, the key an option's long name without its dashes, so every option
/// a command takes is a key with nothing to keep in step. A flag is `key = true` (or `false`, or
/// the key alone). Lines whose first non-blank character is `#` are comments; a value in double
/// quotes keeps its spaces; nothing else is quoted or escaped (a `#` inside a value, a URL's
/// fragment, is part of it). The entries are stored through the same `OptionSpec`s as the
/// command line, so a value is checked the same way; an error names the file and line.
struct ConfigFile {
    struct Entry {
        let name: String
        /// nil for a flag written without a value.
        let value: String?
        let line: Int
    }

    let path: String
    let entries: [Entry]

    /// Larger than any real configuration; what a path to the wrong file would bring in.
    static let maximumBytes = 64 * 1024

    init(path: String) throws(ValidationError) {
        self.path = path
        let bytes = try Self.readFile(path)
        guard let text = Self.utf8(bytes) else { throw ValidationError("--config \(path): not UTF-8 text") }
        entries = try Self.parse(text, path: path)
    }

    init(path: String, text: String) throws(ValidationError) {
        self.path = path
        entries = try Self.parse(text, path: path)
    }

    /// `FILE:LINE: what` for an error about that line.
    func error(line: Int, _ error: ValidationError) -> ValidationError {
        ValidationError("\(path):\(line): \(error.description)")
    }

    /// Stores `entry` through the option it names, or says why it cannot.
    func store<Root>(_ entry: Entry, into root: inout Root, options: [OptionSpec<Root>],
                     command: String) throws(ValidationError) {
        guard let spec = options.first(where: { $0.name == entry.name }) else {
            let hint = entry.name == "config" ? "a configuration file cannot name another"
                : "the keys are the long options of rtcshare \(command) --help, without the dashes"
            throw error(line: entry.line, ValidationError("unknown key '\(entry.name)' (\(hint))"))
        }
        do throws(ValidationError) {
            if spec.isFlag {
                switch entry.value?.lowercased() {
                case nil, "true", "yes", "on", "1": try spec.store(&root, "")
                case "false", "no", "off", "0": break
                case let other?: throw ValidationError("\(entry.name) is a flag: true or false, not '\(other)'")
                }
            } else {
                guard let value = entry.value else { throw ValidationError("\(entry.name) needs a value: \(entry.name) = <\(spec.valueName ?? "value")>") }
                try spec.store(&root, value)
            }
        } catch {
            throw self.error(line: entry.line, error)
        }
    }

    static func parse(_ text: String, path: String) throws(ValidationError) -> [Entry] {
        var entries: [Entry] = []
        var number = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            let content = trimmed(line)
            if content.isEmpty || content.hasPrefix("#") { continue }
            let key: Substring
            var value: Substring?
            if let equals = content.firstIndex(of: "=") {
                key = trimmed(content[..<equals])
                value = trimmed(content[content.index(after: equals)...])
            } else {
                key = content
            }
            guard !key.isEmpty, key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }),
                  !key.hasPrefix("-") else {
                throw ValidationError("\(path):\(number): expected 'key = value' (a long option's name without "
                                      + "its dashes), not '\(content.prefix(40))'")
            }
            if let v = value, v.count >= 2, v.hasPrefix("\""), v.hasSuffix("\"") {
                value = v.dropFirst().dropLast()
            }
            entries.append(Entry(name: String(key), value: value.map(String.init), line: number))
        }
        return entries
    }

    private static func trimmed(_ s: Substring) -> Substring {
        var s = s
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return s
    }

    private static func readFile(_ path: String) throws(ValidationError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("--config \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ValidationError("--config \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[..<n])
            guard bytes.count <= maximumBytes else {
                throw ValidationError("--config \(path): larger than \(maximumBytes / 1024) KiB; is it the right file?")
            }
        }
        return bytes
    }

    /// The text, or nil when the bytes are not UTF-8 or hold a NUL (a binary file).
    private static func utf8(_ bytes: [UInt8]) -> String? {
        guard !bytes.contains(0) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }
}
