import Foundation
import TestSupport
import Testing

/// The lab the outage and reconnect tests build on (`NetworkLab`): datagrams cross the veth
/// pair, a cut drops them both ways and a restore lets them through again, an address can be
/// replaced, and nothing of it is left after `remove()`. Needs root, `ip`, `nft` and python3.
@Suite(.serialized) struct NetworkLabTests {
    static let unavailable: String? = NetworkLab.unavailable.map { "NetworkLabTests skipped: \($0)" }
        ?? (Tools.which("python3") == nil ? "NetworkLabTests skipped: no python3" : nil)

    /// Whether a UDP datagram from `from` reaches a listener on `address`:9000 in `to`'s
    /// namespace (three tries, 100 ms apart, a second to arrive).
    static func datagramArrives(_ lab: NetworkLab, from: NetworkLab.Side, to: NetworkLab.Side, at address: String) throws -> Bool {
        let python = Tools.which("python3") ?? "/usr/bin/python3"
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var (exe, args) = lab.command(in: to, python, ["-c", """
            import socket, sys
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((sys.argv[1], 9000)); s.settimeout(1.5)
            print("ready", flush=True)
            try: s.recvfrom(100); sys.exit(0)
            except socket.timeout: sys.exit(1)
            """, address])
        let listener = try BackgroundProcess(exe, args, in: dir, name: "listener")
        guard listener.waitForOutput(containing: "ready", onStandardOutput: true, timeout: 10) else {
            throw Tools.Failure(message: "the listener did not start: \(listener.stderr)")
        }
        (exe, args) = lab.command(in: from, python, ["-c", """
            import socket, sys, time
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            for _ in range(3): s.sendto(b"x", (sys.argv[1], 9000)); time.sleep(0.1)
            """, address])
        _ = try Tools.run(exe, args, timeout: 10)
        return listener.wait(timeout: 10) == 0
    }

    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func aCutDropsBothWaysARestoreLetsThroughAndNothingIsLeft() throws {
        let lab = try NetworkLab(name: "labt", net: 95)
        defer { lab.remove() }
        #expect(lab.a.address == "10.95.0.1" && lab.b.address == "10.95.0.2")
        #expect(try Self.datagramArrives(lab, from: lab.a, to: lab.b, at: lab.b.address))
        #expect(try Self.datagramArrives(lab, from: lab.b, to: lab.a, at: lab.a.address))
        try lab.cut()
        #expect(try !Self.datagramArrives(lab, from: lab.a, to: lab.b, at: lab.b.address))
        #expect(try !Self.datagramArrives(lab, from: lab.b, to: lab.a, at: lab.a.address))
        try lab.restore()
        #expect(try Self.datagramArrives(lab, from: lab.a, to: lab.b, at: lab.b.address))
        #expect(try Self.datagramArrives(lab, from: lab.b, to: lab.a, at: lab.a.address))

        let old = lab.a.address
        try lab.replaceAddress(of: lab.a, with: "10.95.0.3")
        #expect(lab.a.address == "10.95.0.3")
        #expect(try Self.datagramArrives(lab, from: lab.b, to: lab.a, at: "10.95.0.3"))
        let ip = Tools.which("ip") ?? "/usr/sbin/ip"
        let addresses = try Tools.run(ip, ["-n", lab.a.namespace, "-4", "addr", "show", "dev", lab.a.interface])
        #expect(!String(decoding: addresses.stdout, as: UTF8.self).contains(old + "/"))

        let namespaces = [lab.a.namespace, lab.b.namespace]
        lab.remove()
        lab.remove()
        let list = String(decoding: try Tools.run(ip, ["netns", "list"]).stdout, as: UTF8.self)
        #expect(namespaces.allSatisfy { !list.contains($0) }, "\(list)")
    }
}
