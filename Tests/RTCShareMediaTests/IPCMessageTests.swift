import RTCShareCore
import TestSupport
import Testing
@testable import RTCShareMedia

/// The IPC wire format (docs/ipc.md): byte tables annotated field by field, round trips of every
/// message, refusals of malformed input, and a fuzzer whose oracle is the round trip.
@Suite struct IPCMessageTests {
    private func parse(_ bytes: [UInt8]) throws(IPCWireError) -> IPCMessage { try IPCMessage.parse(bytes) }

    private func le32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }

    // MARK: byte tables

    @Test func helloByteTable() throws {
        let bytes: [UInt8] = [
            0x01, 0x00,                                     // type 1 HELLO
            0x00, 0x00,                                     // reserved
            0x2C, 0x00, 0x00, 0x00,                         // body length 44
            0x52, 0x54, 0x43, 0x53, 0x48, 0x41, 0x52, 0x45, // magic "RTCSHARE"
            0x01, 0x00,                                     // version 1
            0x00, 0x00,                                     // reserved
            0x63, 0x61, 0x6D,                               // name "cam"
        ] + [UInt8](repeating: 0, count: 29)                // NUL padding to 32 bytes
        let message = try parse(bytes)
        #expect(message == .hello(IPCHello(name: "cam")))
        #expect(message.serialized() == bytes)
    }

    @Test func welcomeByteTable() throws {
        let bytes: [UInt8] = [
            0x02, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, // WELCOME, body 24
            0x01, 0x00,                                     // version 1
            0x00, 0x00,                                     // reserved
            0x00, 0x05, 0x00, 0x00,                         // max width 1280
            0xD0, 0x02, 0x00, 0x00,                         // max height 720
            0x20, 0x00, 0x00, 0x00,                         // max buffers 32
            0xC0, 0x12, 0x00, 0x00,                         // max audio frames 4800
            0x00, 0x00, 0x00, 0x00,                         // reserved
        ]
        let message = try parse(bytes)
        #expect(message == .welcome(IPCWelcome(maxWidth: 1280, maxHeight: 720)))
        #expect(message.serialized() == bytes)
    }

    @Test func buffersByteTable() throws {
        let bytes: [UInt8] = [
            0x03, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, // BUFFERS, body 16 + 2 x 16 = 48
            0x02, 0x00, 0x00, 0x00,                         // count 2
            0x00, 0x00, 0x00, 0x00,                         // reserved
            0x00, 0x20, 0x00, 0x00, 0, 0, 0, 0,             // file bytes 8192
            0x00, 0x00, 0x00, 0x00, 0, 0, 0, 0,             // buffer 0 offset 0
            0x00, 0x10, 0x00, 0x00, 0, 0, 0, 0,             // buffer 0 length 4096
            0x00, 0x10, 0x00, 0x00, 0, 0, 0, 0,             // buffer 1 offset 4096
            0x00, 0x10, 0x00, 0x00, 0, 0, 0, 0,             // buffer 1 length 4096
        ]
        let message = try parse(bytes)
        #expect(message == .buffers(.uniform(count: 2, length: 4096)))
        #expect(message.serialized() == bytes)
    }

    @Test func frameByteTable() throws {
        let bytes: [UInt8] = [
            0x04, 0x00, 0x00, 0x00, 0x38, 0x00, 0x00, 0x00, // FRAME, body 56
            0x02, 0x00, 0x00, 0x00,                         // buffer id 2
            0x03, 0x00,                                     // format 3 BGRA
            0x06, 0x00,                                     // orientation 6
            0x68, 0x01, 0x00, 0x00,                         // width 360
            0x80, 0x02, 0x00, 0x00,                         // height 640
            0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // pts 0x0102030405060708 µs
            0xA0, 0x05, 0x00, 0x00,                         // stride 0: 1440
            0x00, 0x00, 0x00, 0x00,                         // stride 1 (none)
            0x00, 0x00, 0x00, 0x00,                         // stride 2 (none)
            0x00, 0x00, 0x00, 0x00,                         // reserved
            0x00, 0x10, 0x00, 0x00,                         // offset 0: 4096
            0x00, 0x00, 0x00, 0x00,                         // offset 1 (none)
            0x00, 0x00, 0x00, 0x00,                         // offset 2 (none)
            0x00, 0x00, 0x00, 0x00,                         // reserved
        ]
        let message = try parse(bytes)
        #expect(message == .frame(IPCFrame(bufferID: 2, format: .bgra, orientation: .right, width: 360, height: 640,
                                           ptsMicroseconds: 0x0102_0304_0506_0708, strides: SIMD3(1440, 0, 0),
                                           offsets: SIMD3(4096, 0, 0))))
        #expect(message.serialized() == bytes)
    }

    @Test func releaseAndUnchangedByteTables() throws {
        let release: [UInt8] = [
            0x05, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, // RELEASE, body 8
            0x07, 0x00, 0x00, 0x00,                         // buffer id 7
            0x00, 0x00, 0x00, 0x00,                         // reserved
        ]
        #expect(try parse(release) == .release(IPCRelease(bufferID: 7)))
        let unchanged: [UInt8] = [
            0x07, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, // UNCHANGED, body 8
            0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, // time -1 µs (signed)
        ]
        #expect(try parse(unchanged) == .unchanged(IPCUnchanged(ptsMicroseconds: -1)))
        #expect(IPCMessage.release(IPCRelease(bufferID: 7)).serialized() == release)
    }

    @Test func audioByteTableKeepsSamplesInPlace() throws {
        let bytes: [UInt8] = [
            0x06, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, // AUDIO, body 24 + 2 frames x 2 ch x 2 = 32
            0x80, 0xBB, 0x00, 0x00,                         // sample rate 48000
            0x02, 0x00,                                     // channels 2
            0x01, 0x00,                                     // byte order 1: big-endian
            0x02, 0x00, 0x00, 0x00,                         // frames 2
            0x00, 0x00, 0x00, 0x00,                         // reserved
            0x40, 0x42, 0x0F, 0x00, 0, 0, 0, 0,             // pts 1 000 000 µs
            0x12, 0x34, 0xFF, 0xFE, 0x80, 0x00, 0x00, 0x01, // samples (big-endian, as sent)
        ]
        let message = try parse(bytes)
        let audio = IPCAudio(sampleRate: 48_000, channels: 2, bigEndian: true, frames: 2, ptsMicroseconds: 1_000_000)
        #expect(message == .audio(audio))
        #expect(audio.pcmBytes == 8)
        #expect(Array(bytes[IPCAudio.pcmOffset...]) == [0x12, 0x34, 0xFF, 0xFE, 0x80, 0x00, 0x00, 0x01])
        #expect(message.serialized(pcm: Array(bytes[IPCAudio.pcmOffset...])) == bytes)
    }

    @Test func byeByteTable() throws {
        let bytes: [UInt8] = [
            0x08, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, // BYE, body 64
            0x04, 0x00,                                     // reason 4 busy
            0x00, 0x00,                                     // reserved
            0x62, 0x75, 0x73, 0x79,                         // text "busy"
        ] + [UInt8](repeating: 0, count: 56)                // NUL padding to 60 bytes
        let message = try parse(bytes)
        #expect(message == .bye(IPCBye(reason: .busy, text: "busy")))
        #expect(message.serialized() == bytes)
    }

    // MARK: round trips

    static let samples: [IPCMessage] = [
        .hello(IPCHello(name: "Écran de présentation")),
        .hello(IPCHello(name: "")),
        .welcome(IPCWelcome(maxWidth: 720, maxHeight: 1280, maxBuffers: 8, maxAudioFrames: 960)),
        .buffers(IPCBuffers(fileBytes: 1 << 30, entries: [.init(offset: 0, length: 1), .init(offset: 99, length: 12345)])),
        .buffers(.uniform(count: 32, length: 1 << 20)),
        .frame(IPCFrame(bufferID: 31, format: .i420, orientation: .leftMirrored, width: 1920, height: 1080,
                        ptsMicroseconds: -5, strides: SIMD3(1920, 960, 960), offsets: SIMD3(0, 2_073_600, 2_592_000))),
        .frame(IPCFrame(bufferID: 0, format: .nv12, orientation: .up, width: 16, height: 16, ptsMicroseconds: .max,
                        strides: SIMD3(64, 64, 0), offsets: SIMD3(0, 1024, 0))),
        .frame(IPCFrame(bufferID: 1, format: .bgrx, orientation: .left, width: 4096, height: 2160,
                        ptsMicroseconds: .min, strides: SIMD3(16384, 0, 0), offsets: SIMD3(0, 0, 0))),
        .release(IPCRelease(bufferID: .max)),
        .audio(IPCAudio(sampleRate: 8_000, channels: 1, bigEndian: false, frames: 1, ptsMicroseconds: 0)),
        .audio(IPCAudio(sampleRate: 192_000, channels: 2, bigEndian: true, frames: 4800, ptsMicroseconds: 77)),
        .unchanged(IPCUnchanged(ptsMicroseconds: 123_456_789)),
        .bye(IPCBye(reason: .malformed, text: "FRAME: plane 1 ends past buffer 3")),
        .bye(IPCBye(reason: IPCByeReason(rawValue: 999), text: "")),
    ]

    @Test(arguments: samples)
    func everyMessageRoundTrips(message: IPCMessage) throws {
        var pcm: [UInt8] = []
        if case .audio(let a) = message { pcm = (0..<a.pcmBytes).map { UInt8(truncatingIfNeeded: $0 &* 31) } }
        let bytes = message.serialized(pcm: pcm)
        #expect(bytes.count == message.size)
        #expect(try parse(bytes) == message)
        if !pcm.isEmpty { #expect(Array(bytes[IPCAudio.pcmOffset...]) == pcm) }
    }

    @Test func textIsCutOnACharacterBoundaryAndControlsReplaced() throws {
        let hello = IPCHello(name: "line\nbreak " + String(repeating: "é", count: 40))
        #expect(hello.name.utf8.count <= IPCHello.nameBytes)
        #expect(!hello.name.contains("\n"))
        #expect(try parse(IPCMessage.hello(hello).serialized()) == .hello(hello))
    }

    @Test func writeRefusesASmallBuffer() {
        var small = [UInt8](repeating: 0, count: 20)
        #expect(throws: IPCWireError.bufferTooSmall(needed: 52, available: 20)) {
            _ = try small.withUnsafeMutableBytes { raw throws(IPCWireError) in
                try IPCMessage.hello(IPCHello(name: "x")).write(into: raw)
            }
        }
    }

    // MARK: refusals

    @Test func malformedMessagesGiveOneClearError() {
        var frame = IPCMessage.frame(IPCFrame(bufferID: 0, format: .bgra, orientation: .up, width: 16, height: 16,
                                              ptsMicroseconds: 0, strides: SIMD3(64, 0, 0),
                                              offsets: SIMD3(0, 0, 0))).serialized()
        #expect(throws: IPCWireError.truncatedHeader(3)) { try parse([1, 0, 0]) }
        #expect(throws: IPCWireError.unknownType(9)) { try parse([9, 0, 0, 0, 0, 0, 0, 0]) }
        #expect(throws: IPCWireError.unknownType(0)) { try parse([0, 0, 0, 0, 0, 0, 0, 0]) }
        #expect(throws: IPCWireError.lengthMismatch(type: "FRAME", expected: 56, actual: 55)) {
            try parse(Array(frame.dropLast()))
        }
        frame[14] = 9  // orientation 9
        #expect(throws: IPCWireError.badValue(type: "FRAME", field: "orientation", value: 9)) { try parse(frame) }
        frame[14] = 1
        frame[8 + 36] = 1  // the reserved word after the strides
        #expect(throws: IPCWireError.reservedNotZero(type: "FRAME", offset: 36)) { try parse(frame) }
        frame[8 + 36] = 0
        frame[8 + 28] = 1  // a stride for plane 1 of a one-plane format
        #expect(throws: IPCWireError.badValue(type: "FRAME", field: "plane 1 stride (bgra has no plane 1)", value: 1)) {
            try parse(frame)
        }

        var hello = IPCMessage.hello(IPCHello(name: "ok")).serialized()
        hello[8] = UInt8(ascii: "X")
        #expect(throws: IPCWireError.badMagic) { try parse(hello) }
        hello[8] = UInt8(ascii: "R")
        hello[8 + 12 + 5] = 0x41  // a byte after the NUL padding started
        #expect(throws: IPCWireError.badText(type: "HELLO", field: "name")) { try parse(hello) }
        hello[8 + 12 + 5] = 0
        hello[8 + 12] = 0x0A  // a newline
        #expect(throws: IPCWireError.badText(type: "HELLO", field: "name")) { try parse(hello) }
        hello[8 + 12] = 0xC3  // a lone UTF-8 lead byte
        #expect(throws: IPCWireError.badText(type: "HELLO", field: "name")) { try parse(hello) }

        let buffers0: [UInt8] = [3, 0, 0, 0, 16, 0, 0, 0] + le32(0) + le32(0) + [UInt8](repeating: 0, count: 8)
        #expect(throws: IPCWireError.badValue(type: "BUFFERS", field: "count", value: 0)) { try parse(buffers0) }
        let buffers33: [UInt8] = [3, 0, 0, 0, 16, 0, 0, 0] + le32(33) + le32(0) + [UInt8](repeating: 0, count: 8)
        #expect(throws: IPCWireError.badValue(type: "BUFFERS", field: "count", value: 33)) { try parse(buffers33) }

        let audio = IPCMessage.audio(IPCAudio(sampleRate: 48_000, channels: 2, bigEndian: false, frames: 4,
                                              ptsMicroseconds: 0)).serialized()
        #expect(throws: IPCWireError.lengthMismatch(type: "AUDIO", expected: 40, actual: 39)) {
            var short = audio
            short.removeLast()
            short[4] = 39
            return try parse(short)
        }
        var threeChannels = audio
        threeChannels[12] = 3
        #expect(throws: IPCWireError.badValue(type: "AUDIO", field: "channels", value: 3)) { try parse(threeChannels) }
        var slowRate = audio
        slowRate.replaceSubrange(8..<12, with: le32(7_999))
        #expect(throws: IPCWireError.badValue(type: "AUDIO", field: "sample rate", value: 7_999)) { try parse(slowRate) }
        var tooMany = audio
        tooMany.replaceSubrange(16..<20, with: le32(4801))
        #expect(throws: IPCWireError.badValue(type: "AUDIO", field: "frames", value: 4801)) { try parse(tooMany) }
    }

    // MARK: fuzzing


    /// The oracle: whatever parses must write back to exactly the same bytes.
    private func checkRoundTrip(_ bytes: [UInt8]) -> Bool {
        guard let message = try? parse(bytes) else { return true }
        let pcm = message.type == .audio ? Array(bytes[IPCAudio.pcmOffset...]) : []
        return message.serialized(pcm: pcm) == bytes
    }

    @Test func randomBytesNeverTrapAndWhatParsesRoundTrips() {
        var rng = SeededRandom(seed: 0x1234_5678)
        var parsed = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0..<160, using: &rng)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if bytes.count >= 8, Bool.random(using: &rng) {
                // Make the header plausible, so the body checks get exercised too.
                bytes[0] = UInt8.random(in: 1...8, using: &rng)
                bytes[1] = 0
                bytes[2] = 0
                bytes[3] = 0
                bytes.replaceSubrange(4..<8, with: le32(UInt32(bytes.count - 8)))
            }
            if (try? parse(bytes)) != nil { parsed += 1 }
            #expect(checkRoundTrip(bytes), "round trip failed for \(bytes)")
        }
        _ = parsed
    }

    @Test func mutatedValidMessagesNeverTrapAndWhatParsesRoundTrips() {
        var rng = SeededRandom(seed: 0xC0FFEE)
        var corpus: [[UInt8]] = Self.samples.map { message in
            var pcm: [UInt8] = []
            if case .audio(let a) = message { pcm = (0..<a.pcmBytes).map { UInt8(truncatingIfNeeded: $0) } }
            return message.serialized(pcm: pcm)
        }
        corpus.append(IPCMessage.hello(IPCHello(name: "phone")).serialized())
        var accepted = 0
        for _ in 0..<20_000 {
            var bytes = corpus.randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                switch Int.random(in: 0..<6, using: &rng) {
                case 0, 1:  // flip a byte
                    if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
                case 2:  // set a byte to an edge value
                    if !bytes.isEmpty {
                        bytes[Int.random(in: 0..<bytes.count, using: &rng)] = [0, 1, 0x7F, 0x80, 0xFF].randomElement(using: &rng)!
                    }
                case 3:  // truncate
                    bytes.removeLast(Int.random(in: 0...min(bytes.count, 16), using: &rng))
                case 4:  // extend
                    bytes += (0..<Int.random(in: 1...16, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                default:  // keep the declared length honest, so the field checks are what refuses
                    if bytes.count >= 8 { bytes.replaceSubrange(4..<8, with: le32(UInt32(bytes.count - 8))) }
                }
            }
            if (try? parse(bytes)) != nil { accepted += 1 }
            #expect(checkRoundTrip(bytes), "round trip failed for \(bytes)")
        }
        #expect(accepted > 100)  // the mutations do reach accepted messages, not only refusals
    }
}
