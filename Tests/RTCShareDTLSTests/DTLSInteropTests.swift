import Foundation
import Glibc
import TestSupport
import Testing
import RTCShareDTLS
import RTCShareRTP

/// Handshakes with DTLS peers nobody here wrote: `openssl s_server` and `openssl s_client` on
/// 127.0.0.1, reached over a real UDP socket. The tool prints the RFC 5764 exporter output it
/// derived; our keys must be exactly that, split by role.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
                 && FileManager.default.isExecutableFile(atPath: "/usr/bin/stdbuf")))
struct DTLSInteropTests {
    @Test func handshakeWithOpenSSLServerExportsTheSameKeys() throws {
        let peer = try PeerIdentity()
        defer { peer.remove() }
        let port = try UDPSocket(connectingTo: nil).localPort
        let server = try peer.start(["s_server", "-dtls1_2", "-accept", "127.0.0.1:\(port)", "-verify", "1",
                                     "-mtu", "1200", "-naccept", "1", "-use_srtp", "SRTP_AES128_CM_SHA1_80",
                                     "-keymatexportlen", "60"])
        defer { PeerIdentity.stop(server) }

        let identity = try DTLSCertificate()
        var us = try DTLSTransport(certificate: identity, configuration: DTLSConfiguration(
            role: .client, remoteFingerprint: peer.fingerprint, initialRetransmitTimeout: .milliseconds(100)))
        let socket = try UDPSocket(connectingTo: port)
        let ours = try #require(try handshake(&us, over: socket))
        #expect(ours.profile == .aesCM128HmacSHA1_80)
        #expect(try peer.printedKeyingMaterial() == Self.exporterOutput(ours, role: .client))
        us.close()
        while let datagram = us.pollTransmit() { socket.send(datagram) }
    }

    @Test func handshakeWithOpenSSLClientExportsTheSameKeys() throws {
        let peer = try PeerIdentity()
        defer { peer.remove() }
        let identity = try DTLSCertificate()
        var us = try DTLSTransport(certificate: identity, configuration: DTLSConfiguration(
            role: .server, remoteFingerprint: peer.fingerprint, initialRetransmitTimeout: .milliseconds(100)))
        let socket = try UDPSocket(connectingTo: nil)  // connects to whoever sends first
        let client = try peer.start(["s_client", "-dtls1_2", "-connect", "127.0.0.1:\(socket.localPort)", "-mtu", "1200",
                                     "-use_srtp", "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80",
                                     "-keymatexportlen", "56"])
        defer { PeerIdentity.stop(client) }

        let ours = try #require(try handshake(&us, over: socket))
        #expect(ours.profile == .aeadAES128GCM)  // our preference, as the server, wins
        #expect(try peer.printedKeyingMaterial() == Self.exporterOutput(ours, role: .server))
        us.close()
        while let datagram = us.pollTransmit() { socket.send(datagram) }
    }

    /// Runs `transport`'s handshake over `socket` for up to 10 s; returns the keys.
    private func handshake(_ transport: inout DTLSTransport, over socket: UDPSocket) throws -> DTLSSRTPKeys? {
        let deadline = ContinuousClock.now + .seconds(10)
        var buffer = [UInt8](repeating: 0, count: DTLSTransport.maximumDatagramBytes)
        while ContinuousClock.now < deadline {
            while let datagram = transport.pollTransmit() { socket.send(datagram) }
            if let n = socket.receive(into: &buffer, within: transport.nextTimeout ?? .milliseconds(100)) {
                transport.handle(datagram: Array(buffer[..<n]))
            }
            transport.handleTimeout()
            while let event = transport.pollEvent() {
                switch event {
                case .connected(let keys):
                    while let datagram = transport.pollTransmit() { socket.send(datagram) }
                    return keys
                case .failed(let error): Issue.record("handshake failed: \(error)"); return nil
                case .closed: Issue.record("closed during the handshake"); return nil
                }
            }
        }
        Issue.record("no handshake within 10 s")
        return nil
    }

    /// The exporter output as RFC 5764 §4.2 lays it out (client key, server key, client salt,
    /// server salt), rebuilt from our role-assigned keys, in uppercase hex as OpenSSL prints it.
    private static func exporterOutput(_ keys: DTLSSRTPKeys, role: DTLSRole) -> String {
        let (client, server) = role == .client ? (keys.local, keys.remote) : (keys.remote, keys.local)
        let bytes = Array(client.masterKey) + Array(server.masterKey) + Array(client.masterSalt) + Array(server.masterSalt)
        return bytes.map { String(format: "%02X", $0) }.joined()
    }

}

/// The OpenSSL command-line peer: its own P-256 certificate, its fingerprint, and the keying
/// material it prints (s_server/s_client `-keymatexport`, line-buffered through stdbuf).
private struct PeerIdentity {
    let dir: URL
    let fingerprint: DTLSFingerprint
    var cert: String { dir.appendingPathComponent("cert.pem").path }
    var key: String { dir.appendingPathComponent("key.pem").path }
    var output: URL { dir.appendingPathComponent("peer.txt") }

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("rtcs-dtls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let cert = dir.appendingPathComponent("cert.pem").path, key = dir.appendingPathComponent("key.pem").path
        _ = try Self.run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                          "-nodes", "-keyout", key, "-out", cert, "-subj", "/CN=openssl-peer", "-days", "1"])
        // "sha256 Fingerprint=AB:CD:..." → "sha-256 AB:CD:..."
        let printed = try Self.run(["x509", "-in", cert, "-noout", "-fingerprint", "-sha256"])
        let hex = try #require(printed.split(separator: "=").last).trimmingCharacters(in: .whitespacesAndNewlines)
        fingerprint = try DTLSFingerprint(attributeValue: "sha-256 " + hex)
    }

    func remove() { try? FileManager.default.removeItem(at: dir) }

    /// Starts `openssl` with `arguments` plus this identity and the exporter label.
    func start(_ arguments: [String]) throws -> Process {
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
        p.arguments = ["-oL", "/usr/bin/openssl"] + arguments
            + ["-cert", cert, "-key", key, "-keymatexport", "EXTRACTOR-dtls_srtp"]
        p.standardInput = Pipe()  // kept open: the tools end the connection on end of input
        p.standardOutput = try FileHandle(forWritingTo: output)
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }

    /// Ends the tool. SIGKILL, because children of the test runner inherit its blocked SIGTERM.
    static func stop(_ process: Process) {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// The hex after "Keying material:" once the peer has printed it (up to 5 s).
    func printedKeyingMaterial() throws -> String {
        var printed: String?
        waitUntil(timeout: 5) {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            printed = text.split(separator: "\n").first(where: { $0.contains("Keying material:") })
                .flatMap { $0.split(separator: ":").last }
                .map { $0.trimmingCharacters(in: .whitespaces).uppercased() }
            return printed != nil
        }
        guard let printed else { throw PeerError.noKeyingMaterial }
        return printed
    }

    enum PeerError: Error { case noKeyingMaterial }

    private static func run(_ arguments: [String]) throws -> String {
        let result = try Tools.run("/usr/bin/openssl", arguments)
        try #require(result.status == 0, "openssl \(arguments.first ?? "") failed")
        return String(decoding: result.stdout, as: UTF8.self)
    }
}

/// A loopback UDP socket, connected to 127.0.0.1:`port` when one is given.
private final class UDPSocket {
    let fd: Int32
    private var connected = false

    init(connectingTo port: UInt16?) throws {
        fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        var local = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0)
        if let port {
            var remote = Self.loopback(port: port)
            let connected = withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            try #require(connected == 0)
            self.connected = true
        }
    }

    deinit { Glibc.close(fd) }

    var localPort: UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Sends; a refused datagram (the server not listening yet) is simply lost, as on a network.
    func send(_ datagram: [UInt8]) {
        _ = datagram.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
    }

    /// Waits up to `wait` for one datagram; returns its length. An unconnected socket connects
    /// to the sender of the first datagram, so that `send` answers it.
    func receive(into buffer: inout [UInt8], within wait: Duration) -> Int? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(max(1, wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000))
        guard poll(&pfd, 1, ms) == 1 else { return nil }
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = buffer.withUnsafeMutableBytes { b in
            withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, b.baseAddress, b.count, 0, $0, &length) }
            }
        }
        guard n > 0 else { return nil }
        if !connected {
            connected = withUnsafePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) == 0 }
            }
        }
        return n
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return a
    }
}
