// What a TURN server sends, as the client takes it, and the framing of a stream to it.
//
// The input is a sequence of operations (first byte of each): a message from the server to the
// client (its transaction ID replaced by that of the client's newest request when the low bit
// of the operation asks, so answers reach the response paths: the 401 dance, errors, the first
// Allocate's success, which needs no integrity), a tick after some milliseconds, a datagram to
// wrap toward a peer, permissions asked for, a stream chunk into the reassembly, and an ICE
// server URI.
//
// Oracles:
// - Nothing traps, whatever the order.
// - Allocated means a relayed address of the client's family; failed stays failed.
// - What the client writes parses as STUN with a FINGERPRINT that verifies (ChannelData and Send
//   indications excepted, which are read back by TURNWire), never past the buffer it was given.
// - A relayed datagram's range lies inside the bytes handed in; ChannelData written for a
//   payload reads back as that payload on its channel.
// - The stream reassembly hands out frames whose length `frameLength` agrees with, never longer
//   than its limit, and loses no byte of a well-formed stream.
// - A URI that parses prints a form that parses back to the same URI.

import FuzzSupport
import RTCShareCore
import RTCShareICE

@main
enum FuzzTURN {
    static func main() { runLibFuzzer(fuzzTURN) }
}

private struct Counter: RandomNumberGenerator {
    var state: UInt64 = 0x1234_5678
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        return z ^ (z >> 31)
    }
}

private let server = ICEAddress(ipv4: 0xC000_0201, port: 3478)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTURN(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(fuzzBytes(data, size))
    guard !input.isAtEnd else { return 0 }
    let transport: TURNTransport = [.udp, .tcp, .tls][Int(input.u8() % 3)]
    var configuration = TURNClient<Counter>.Configuration(
        server: server, transport: transport, credentials: try! TURNCredentials(username: "user", password: "pass"))
    configuration.software = input.bool() ? "rtcshare fuzz" : nil
    var client = TURNClient(configuration: configuration, random: Counter())
    var now = MediaTime.seconds(1)
    client.start(at: now)
    var lastRequest: STUNTransactionID?
    var reassembly = TURNStreamReassembly(capacity: 2048, maximumFrame: 512)
    let out = UnsafeMutableRawBufferPointer.allocate(byteCount: TURNClient<Counter>.maximumMessageSize, alignment: 8)
    let wrapped = UnsafeMutableRawBufferPointer.allocate(byteCount: 1500 + TURNWire.maximumOverhead, alignment: 8)
    defer {
        out.deallocate()
        wrapped.deallocate()
    }
    var wasFailed = false
    for _ in 0..<64 where !input.isAtEnd {
        drain(&client, out, &lastRequest)
        let op = input.u8()
        switch (op >> 1) % 8 {
        case 0, 1:
            var message = Array(input.lengthPrefixed(wide: true))
            if op & 1 == 1, message.count >= 20, let id = lastRequest {
                withUnsafeBytes(of: id.high.bigEndian) { for i in 0..<4 { message[8 + i] = $0[i] } }
                withUnsafeBytes(of: id.low.bigEndian) { for i in 0..<8 { message[12 + i] = $0[i] } }
            }
            message.withUnsafeBytes { bytes in
                if case .relayed(_, let range) = client.receive(bytes, at: now) {
                    fuzzCheck(range.lowerBound >= 0 && range.upperBound <= bytes.count, "relayed \(range) of \(bytes.count)")
                }
            }
        case 2:
            now += .milliseconds(Int64(input.u16()) * 20)
            client.tick(at: now)
        case 3:
            let peer = ICEAddress(ipv4: 0x0A00_0000 | UInt32(input.u8()), port: input.u16())
            let payload = input.lengthPrefixed()
            if let n = client.wrap(payload, to: peer, into: wrapped, at: now) {
                fuzzCheck(n <= wrapped.count && n >= payload.count, "wrapped \(payload.count) into \(n)")
                let bytes = UnsafeRawBufferPointer(rebasing: wrapped[0..<n])
                if let (channel, range) = TURNWire.readChannelData(bytes) {
                    fuzzCheck(TURNWire.channelNumbers.contains(channel), "channel \(channel)")
                    fuzzCheck(Array(bytes[range]) == Array(payload), "ChannelData does not carry the payload")
                } else {
                    fuzzCheck((try? STUNMessage.parse(bytes)) != nil, "a Send indication that does not parse")
                }
            }
        case 4:
            client.permit([ICEAddress(ipv4: 0x0A00_0001, port: input.u16())], at: now)
        case 5:
            let chunk = input.lengthPrefixed()
            let free = reassembly.freeSpace()
            let n = min(free.count, chunk.count)
            if n > 0 { free.baseAddress!.copyMemory(from: chunk.baseAddress!, byteCount: n) }
            reassembly.appended(n)
            frames: while true {
                switch reassembly.nextFrame() {
                case .frame(let bytes, let length):
                    fuzzCheck(length <= reassembly.maximumFrame && length <= bytes.count, "frame of \(length)")
                    fuzzCheck(TURNWire.frameLength(UnsafeRawBufferPointer(rebasing: bytes[0..<4])) == length, "frame length")
                    _ = client.receive(UnsafeRawBufferPointer(rebasing: bytes[0..<length]), at: now)
                case .needMore:
                    break frames
                case .broken(let byte):
                    consume(byte)
                    reassembly = TURNStreamReassembly(capacity: 2048, maximumFrame: 512)
                    break frames
                }
            }
        case 6:
            let text = String(decoding: input.lengthPrefixed(), as: UTF8.self)
            if let uri = try? ICEServerURI(parsing: text) {
                let again = try? ICEServerURI(parsing: uri.description)
                fuzzCheck(again == uri, "'\(uri)' from '\(text)' parses to \(String(describing: again))")
            }
        default:
            client.close(at: now)
        }
        if case .failed = client.state { wasFailed = true }
        if wasFailed, case .failed = client.state {} else if wasFailed {
            fuzzCheck(client.state == .closed, "a failed allocation came back: \(client.state)")
        }
        if client.state == .allocated {
            fuzzCheck(client.relayedAddress?.family == .ipv4 || client.relayedAddress?.family == .ipv6, "allocated without a relay")
        }
        while let event = client.pollEvent() { consumeDescription(event) }
    }
    drain(&client, out, &lastRequest)
    return 0
}

/// The client's messages: each parses, its FINGERPRINT verifies (held datagrams aside), and the
/// newest request's ID is kept for the next answer.
private func drain(_ client: inout TURNClient<Counter>, _ out: UnsafeMutableRawBufferPointer, _ last: inout STUNTransactionID?) {
    while let n = client.pollTransmit(into: out) {
        fuzzCheck(n <= out.count, "\(n) bytes written into \(out.count)")
        let bytes = UnsafeRawBufferPointer(rebasing: out[0..<n])
        if TURNWire.readChannelData(bytes) != nil { continue }
        guard let parsed = try? STUNMessage.parse(bytes) else {
            fuzzCheck(false, "the client wrote what does not parse as STUN")
            continue
        }
        if parsed.message.type.messageClass == .request {
            fuzzCheck(parsed.verifyFingerprint(bytes), "a request whose FINGERPRINT does not verify")
            last = parsed.message.transactionID
        }
    }
}
