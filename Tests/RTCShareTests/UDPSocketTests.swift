import Testing
import RTCShareIO

@Suite struct UDPSocketTests {
    @Test(arguments: [
        ("127.0.0.1:5004", "127.0.0.1:5004"),
        ("localhost:9", "127.0.0.1:9"),
        ("[::1]:5004", "[::1]:5004"),
    ])
    func addressesParse(text: String, expected: String) throws {
        #expect(try SocketAddress(parsing: text).description == expected)
    }

    @Test(arguments: ["127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", ":5004", "::1:5004", "[::1]5004",
                      "127.0.0.1:x", "no-such-host.invalid:5004"])
    func badAddressesAreOneLine(text: String) {
        #expect(throws: SocketError.self) { try SocketAddress(parsing: text) }
    }

    @Test func aDatagramCrossesLoopbackAndTheSenderIsKnown() throws {
        let receiver = try UDPSocket(bindingTo: SocketAddress(parsing: "127.0.0.1:1").with(port: 0))
        let sender = try UDPSocket(for: receiver.localAddress)
        let payload: [UInt8] = [1, 2, 3, 4, 5]
        let sent = payload.withUnsafeBytes { sender.send($0, to: receiver.localAddress) }
        #expect(sent == .sent)
        #expect(receiver.waitReadable(timeoutMicroseconds: 1_000_000))
        var buffer = [UInt8](repeating: 0, count: 64)
        let result = buffer.withUnsafeMutableBytes { receiver.receive(into: $0) }
        guard case .datagram(let count, let from) = result else {
            Issue.record("nothing received: \(result)")
            return
        }
        #expect(Array(buffer[0..<count]) == payload)
        #expect(from.port == sender.localAddress.port)
        #expect(buffer.withUnsafeMutableBytes { receiver.receive(into: $0) } == .nothing)
        #expect(!receiver.waitReadable(timeoutMicroseconds: 10_000))
    }
}
