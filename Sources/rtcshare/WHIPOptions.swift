import Glibc
import RTCShare

/// Options of `--whip URL`: publishing into a WebRTC server (ICE, DTLS-SRTP, WHIP).
struct WHIPOptions: CommandLineOptions {
    var whip: String?
    var token: String?
    var tokenFile: String?
    var whipBind: String?
    var iceTimeout = 10
    var consentTimeout = 30
    var stun: [String] = []
    var reconnect = "forever"
    var reconnectStableAfter = 10
    var iceServers: [String] = []
    var iceUsername: String?
    var iceCredentialFile: String?
    var iceTransportPolicy = "all"
    var iceCA: String?
    var turnLifetime = 600

    static var options: [OptionSpec<WHIPOptions>] {
        let d = WHIPOptions()
        return [
            .option("whip", \.whip, value: "url",
                    help: "Publish into this WHIP endpoint (RFC 9725): ICE, DTLS-SRTP, VP8 or H.264 + Opus."),
            .option("token", \.token, value: "token", help: "Bearer token for the WHIP endpoint (prefer --token-file)."),
            .option("token-file", \.tokenFile, value: "file", help: "Read the WHIP bearer token from this file (kept off the command line)."),
            .option("whip-bind", \.whipBind, value: "host:port",
                    help: "Bind the session's UDP socket here (default: every IPv4 interface, a random port)."),
            OptionSpec(name: "stun", valueName: "ip:port",
                       help: "Ask this STUN server (numeric IPv4) for our public address before the offer; repeatable.",
                       hidden: false, defaultText: nil) { (o: inout WHIPOptions, text: String) throws(ValidationError) in
                o.stun.append(text)
            },
            OptionSpec(name: "ice-server", valueName: "uri",
                       help: "A STUN or TURN server (RFC 7064/7065): stun:IP:port, turn:host:port?transport=udp|tcp, "
                           + "turns:host:443 (TLS); repeatable. TURN servers take --ice-username and "
                           + "--ice-credential-file; a relayed candidate is allocated on them before the offer (the best "
                           + "that answers: UDP, then TCP, then TLS). TURN servers the WHIP answer names are used too.",
                       hidden: false, defaultText: nil) { (o: inout WHIPOptions, text: String) throws(ValidationError) in
                o.iceServers.append(text)
            },
            .option("ice-username", \.iceUsername, value: "name", help: "The TURN servers' username."),
            .option("ice-credential-file", \.iceCredentialFile, value: "file",
                    help: "Read the TURN servers' password from this file (its first line)."),
            .option("ice-transport-policy", \.iceTransportPolicy, value: "all|relay",
                    help: "relay: offer and check the TURN relay only (nothing goes anywhere but the TURN server).",
                    defaults: d),
            .option("ice-ca", \.iceCA, value: "file",
                    help: "PEM certificate authorities a turns: server's certificate must chain to (default: the system's)."),
            .option("turn-lifetime", \.turnLifetime, value: "seconds",
                    help: "The TURN allocation lifetime asked for (refreshed before it ends).", hidden: true, defaults: d),
            .option("ice-timeout", \.iceTimeout, value: "seconds",
                    help: "Give up when no ICE path to the server works within this long.", defaults: d),
            .option("consent-timeout", \.consentTimeout, value: "seconds",
                    help: "Consider the connection lost when the server has not confirmed consent (RFC 7675) for this long.",
                    defaults: d),
            .option("reconnect", \.reconnect, value: "forever|N|off",
                    help: "Publish again when the connection is lost or the POST fails for a reason that may pass "
                        + "(a 5xx, a timeout, consent lost): back-off 1 s doubling to 30 s, the server's Retry-After "
                        + "honoured; N attempts in a row, or off to end the share at the first failure.",
                    defaults: d),
            .option("reconnect-stable-after", \.reconnectStableAfter, value: "seconds",
                    help: "A connection that held this long starts the back-off from 1 s again.", hidden: true,
                    defaults: d),
        ]
    }

    func validate() throws(ValidationError) {
        guard let whip else {
            for (given, name) in [(token != nil, "--token"), (tokenFile != nil, "--token-file"),
                                  (whipBind != nil, "--whip-bind"), (!stun.isEmpty, "--stun"),
                                  (!iceServers.isEmpty, "--ice-server"), (iceUsername != nil, "--ice-username"),
                                  (iceCredentialFile != nil, "--ice-credential-file"),
                                  (iceTransportPolicy != "all", "--ice-transport-policy"), (iceCA != nil, "--ice-ca")]
            where given {
                throw ValidationError("\(name) needs --whip URL")
            }
            return
        }
        guard whip.hasPrefix("http://") || whip.hasPrefix("https://") else {
            throw ValidationError("--whip must be an http:// or https:// URL, not '\(whip)'")
        }
        guard !(token != nil && tokenFile != nil) else { throw ValidationError("give --token or --token-file, not both") }
        if let whipBind {
            do { _ = try SocketAddress(parsingBindAddress: whipBind) } catch {
                throw ValidationError("--whip-bind: \(error)")
            }
        }
        for text in stun { _ = try Self.stunServer(text) }
        guard stun.count <= 8 else { throw ValidationError("--stun: at most 8 servers") }
        guard iceServers.count <= 8 else { throw ValidationError("--ice-server: at most 8 servers") }
        var turn = false
        for text in iceServers {
            let uri = try Self.iceServer(text)
            if uri.isTURN { turn = true } else { _ = try Self.stunServer(uri) }
        }
        if turn {
            guard iceUsername != nil, iceCredentialFile != nil else {
                throw ValidationError("a TURN --ice-server needs --ice-username and --ice-credential-file")
            }
        }
        guard (10...3600).contains(turnLifetime) else { throw ValidationError("--turn-lifetime must be 10...3600 seconds") }
        guard ICETransportPolicy(rawValue: iceTransportPolicy) != nil else {
            throw ValidationError("--ice-transport-policy must be all or relay, not '\(iceTransportPolicy)'")
        }
        guard (1...120).contains(iceTimeout) else { throw ValidationError("--ice-timeout must be 1...120 seconds") }
        guard (2...300).contains(consentTimeout) else { throw ValidationError("--consent-timeout must be 2...300 seconds") }
        _ = try Self.reconnectLimit(reconnect)
        guard (0...3600).contains(reconnectStableAfter) else {
            throw ValidationError("--reconnect-stable-after must be 0...3600 seconds")
        }
    }

    /// The WHIP settings (nil without `--whip`); reads the token file.
    func configuration(audio: Bool, framesPerSecond: Int) throws(ValidationError) -> WHIPConfiguration? {
        guard let whip else { return nil }
        var c = WHIPConfiguration(url: whip)
        c.releasesStartupCodePages = true
        do {
            if let token { c.token = try WHIPToken(token) }
            if let tokenFile { c.token = try WHIPToken.read(fromFile: tokenFile) }
        } catch {
            throw ValidationError("\(tokenFile != nil ? "--token-file" : "--token"): \(error)")
        }
        if let whipBind {
            do {
                c.bindAddress = try SocketAddress(parsingBindAddress: whipBind)
            } catch {
                throw ValidationError("--whip-bind: \(error)")
            }
        }
        c.stunServers = try stun.map(Self.stunServer)
        c.iceTransportPolicy = ICETransportPolicy(rawValue: iceTransportPolicy) ?? .all
        c.iceCAFile = iceCA
        c.turnLifetimeSeconds = turnLifetime
        for text in iceServers {
            let uri = try Self.iceServer(text)
            guard uri.isTURN else {
                c.stunServers.append(try Self.stunServer(uri))
                continue
            }
            guard let iceUsername, let iceCredentialFile else { continue }
            do {
                let credentials = try TURNCredentials(username: iceUsername, password: try Self.readCredential(iceCredentialFile))
                c.turnServers.append(TURNServerConfiguration(uri: uri, credentials: credentials))
            } catch {
                throw ValidationError("--ice-server \(text): \(error)")
            }
        }
        c.sendsAudio = audio
        c.framesPerSecond = framesPerSecond
        c.connectTimeoutSeconds = iceTimeout
        c.consentTimeoutSeconds = consentTimeout
        c.reconnect.limit = try Self.reconnectLimit(reconnect)
        c.reconnect.stableAfter = .seconds(Int64(reconnectStableAfter))
        return c
    }

    /// `--reconnect forever|N|off` (N: 1...1000000 attempts in a row).
    static func reconnectLimit(_ text: String) throws(ValidationError) -> ReconnectPolicy.Limit {
        switch text {
        case "forever": return .forever
        case "off", "0": return .off
        default:
            guard let n = Int(text), (1...1_000_000).contains(n) else {
                throw ValidationError("--reconnect must be forever, off or a number of attempts (1...1000000), not '\(text)'")
            }
            return .attempts(n)
        }
    }

    static func iceServer(_ text: String) throws(ValidationError) -> ICEServerURI {
        do { return try ICEServerURI(parsing: text) } catch { throw ValidationError("--ice-server: \(error)") }
    }

    /// A `stun:` URI as a STUN server: numeric IPv4 (nothing is resolved), as `--stun`.
    static func stunServer(_ uri: ICEServerURI) throws(ValidationError) -> SocketAddress {
        guard uri.scheme == .stun, let address = uri.numericAddress, address.family == .ipv4 else {
            throw ValidationError("--ice-server \(uri): a STUN server must be stun: with a numeric IPv4 address")
        }
        return WHIPSink.socketAddress(address)
    }

    /// The first line of `--ice-credential-file` (at most 509 bytes).
    static func readCredential(_ path: String) throws(ValidationError) -> String {
        guard let file = fopen(path, "r") else {
            throw ValidationError("--ice-credential-file: cannot open '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 1024)
        guard fgets(&line, Int32(line.count), file) != nil else {
            throw ValidationError("--ice-credential-file: '\(path)' is empty")
        }
        var text = String(decoding: line.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        guard !text.isEmpty, text.utf8.count <= TURNCredentials.maximumBytes else {
            throw ValidationError("--ice-credential-file: '\(path)' must hold a password of 1...509 bytes on its first line")
        }
        return text
    }

    /// `--stun a.b.c.d:port`: a numeric IPv4 address only (nothing is resolved) and a port.
    static func stunServer(_ text: String) throws(ValidationError) -> SocketAddress {
        let bad = ValidationError("--stun must be a numeric IPv4 address and port (192.0.2.1:3478), not '\(text)'")
        guard let colon = text.lastIndex(of: ":") else { throw bad }
        let octets = text[..<colon].split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }),
              let port = Int(text[text.index(after: colon)...]), (1...65_535).contains(port) else { throw bad }
        do { return try SocketAddress(parsing: text) } catch { throw bad }
    }
}
