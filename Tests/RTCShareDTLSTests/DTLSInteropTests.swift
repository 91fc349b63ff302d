import Foundation
import Glibc
import Testing
import RTCShareDTLS
import RTCShareRTP

/// A handshake with a DTLS peer nobody here wrote: `openssl s_server` on 127.0.0.1, reached over a
/// real UDP socket. s_server prints the RFC 5764 exporter output it derived; our keys must be
/// exactly that, split by role.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
                 && FileManager.default.isExecutableFile(atPath: "/usr/bin/stdbuf")))
struct DTLSInteropTests {
    @Test func handshakeWithOpenSSLServerExportsTheSameKeys() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rtcs-dtls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let cert = dir.appendingPathComponent("cert.pem").path, key = dir.appendingPathComponent("key.pem").path
        _ = try run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                         "-nodes", "-keyout", key, "-out", cert, "-subj", "/CN=s_server", "-days", "1"])
        // "sha256 Fingerprint=AB:CD:..." → "sha-256 AB:CD:..."
        let printed = try run("/usr/bin/openssl", ["x509", "-in", cert, "-noout", "-fingerprint", "-sha256"])
        let hex = try #require(printed.split(separator: "=").last).trimmingCharacters(in: .whitespacesAndNewlines)
        let serverFingerprint = try DTLSFingerprint(attributeValue: "sha-256 " + hex)

        let port = try freeUDPPort()
        let output = dir.appendingPathComponent("s_server.txt")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
        server.arguments = ["-oL", "/usr/bin/openssl", "s_server", "-dtls1_2", "-accept", "127.0.0.1:\(port)",
                            "-cert", cert, "-key", key, "-verify", "1", "-mtu", "1200", "-naccept", "1",
                            "-use_srtp", "SRTP_AES128_CM_SHA1_80",
                            "-keymatexport", "EXTRACTOR-dtls_srtp", "-keymatexportlen", "60"]
        let stdin = Pipe()  // kept open: s_server ends the connection on end of input
        server.standardInput = stdin
        server.standardOutput = try FileHandle(forWritingTo: output)
        server.standardError = server.standardOutput
        try server.run()
        defer { if server.isRunning { server.terminate() }; server.waitUntilExit() }

        let identity = try DTLSCertificate()
        var client = try DTLSTransport(certificate: identity, configuration: DTLSConfiguration(
            role: .client, remoteFingerprint: serverFingerprint, initialRetransmitTimeout: .milliseconds(100)))
        let socket = try UDPSocket(connectingTo: port)
        let deadline = ContinuousClock.now + .seconds(10)
        var buffer = [UInt8](repeating: 0, count: DTLSTransport.maximumDatagramBytes)
        var keys: DTLSSRTPKeys?
        while keys == nil, ContinuousClock.now < deadline {
            while let datagram = client.pollTransmit() { socket.send(datagram) }
            let wait = client.nextTimeout ?? .milliseconds(100)
            if let n = socket.receive(into: &buffer, within: wait) { client.handle(datagram: Array(buffer[..<n])) }
            client.handleTimeout()
            while let event = client.pollEvent() {
                switch event {
                case .connected(let k): keys = k
                case .failed(let error): Issue.record("handshake failed: \(error)"); return
                case .closed: Issue.record("closed during the handshake"); return
                }
            }
        }
        let ours = try #require(keys)
        #expect(ours.profile == .aesCM128HmacSHA1_80)

        var theirs: String?
        while theirs == nil, ContinuousClock.now < deadline {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            theirs = text.split(separator: "\n").first { $0.contains("Keying material:") }?
                .split(separator: ":").last?.trimmingCharacters(in: .whitespaces)
            if theirs == nil { usleep(20_000) }
        }
        // RFC 5764 §4.2 order: client key, server key, client salt, server salt.
        let exported = Array(ours.local.masterKey) + Array(ours.remote.masterKey)
            + Array(ours.local.masterSalt) + Array(ours.remote.masterSalt)
        #expect(try #require(theirs).uppercased() == exported.map { String(format: "%02X", $0) }.joined())

        client.close()
        while let datagram = client.pollTransmit() { socket.send(datagram) }
    }

    private func run(_ tool: String, _ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0, "\(tool) \(arguments.first ?? "") failed")
        return String(decoding: data, as: UTF8.self)
    }

    private func freeUDPPort() throws -> UInt16 {
        let probe = try UDPSocket(connectingTo: nil)
        return probe.localPort
    }
}

/// A loopback UDP socket, connected to 127.0.0.1:`port` when one is given.
private final class UDPSocket {
    let fd: Int32

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

    /// Waits up to `wait` for one datagram; returns its length.
    func receive(into buffer: inout [UInt8], within wait: Duration) -> Int? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(max(1, wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000))
        guard poll(&pfd, 1, ms) == 1 else { return nil }
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? n : nil
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return a
    }
}
