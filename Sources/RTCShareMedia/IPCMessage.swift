import RTCShareCore

// The messages of rtcshare's IPC protocol, version 1 (docs/ipc.md): a producer process pushes
// frames (by naming a buffer in shared memory) and PCM audio (inline) over a SOCK_SEQPACKET
// Unix socket. Every message is an 8-byte header and a fixed-layout body:
//
//     0       2       4               8
//     +-------+-------+---------------+----------------- ...
//     | type  | rsvd  | body length   | body
//     +-------+-------+---------------+----------------- ...
//
// All integers little-endian, reserved fields zero. Input is untrusted: `parse` checks every
// length before reading and returns an error, never traps. Parsing is strict (reserved bytes,
// padding, enum values), so that anything it accepts is written back byte for byte — the
// oracle of the fuzz test.

/// Message types and their fixed body sizes.
public enum IPCMessageType: UInt16, Sendable, CaseIterable {
    case hello = 1
    case welcome = 2
    case buffers = 3
    case frame = 4
    case release = 5
    case audio = 6
    case unchanged = 7
    case bye = 8

    public var name: String {
        switch self {
        case .hello: "HELLO"
        case .welcome: "WELCOME"
        case .buffers: "BUFFERS"
        case .frame: "FRAME"
        case .release: "RELEASE"
        case .audio: "AUDIO"
        case .unchanged: "UNCHANGED"
        case .bye: "BYE"
        }
    }
}

/// Constants of the protocol.
public enum IPCProtocol {
    /// The version this code speaks.
    public static let version: UInt16 = 1
    /// HELLO's first 8 bytes.
    public static let magic: [UInt8] = Array("RTCSHARE".utf8)
    public static let headerBytes = 8
    /// Most buffers one BUFFERS message describes.
    public static let maxBuffers = 32
    /// Most frames (samples per channel) in one AUDIO message: 100 ms at 48 kHz.
    public static let maxAudioFrames = 4800
    /// Largest shared file accepted.
    public static let maxSharedBytes: UInt64 = 1 << 30
    /// Largest plane stride accepted.
    public static let maxStride = 1 << 20
    /// Largest message of any type (an AUDIO of `maxAudioFrames` stereo frames).
    public static let maxMessageBytes = headerBytes + IPCAudio.bodyHeaderBytes + maxAudioFrames * 2 * 2
    /// Sample rates AUDIO may give.
    public static let sampleRates: ClosedRange<UInt32> = 8_000...192_000
}

/// Why bytes are not a valid message (or a message does not fit a buffer): one line for logs.
public enum IPCWireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer bytes than a header.
    case truncatedHeader(Int)
    case unknownType(UInt16)
    /// The header's body length disagrees with the bytes received or with the type's layout.
    case lengthMismatch(type: String, expected: Int, actual: Int)
    case reservedNotZero(type: String, offset: Int)
    case badMagic
    /// A field outside its allowed values.
    case badValue(type: String, field: String, value: Int64)
    /// A text field that is not NUL-padded UTF-8 without control characters.
    case badText(type: String, field: String)
    /// `write` was given a buffer too small for the message.
    case bufferTooSmall(needed: Int, available: Int)

    public var description: String {
        switch self {
        case .truncatedHeader(let n): "message of \(n) bytes is shorter than the 8-byte header"
        case .unknownType(let t): "unknown message type \(t)"
        case .lengthMismatch(let type, let expected, let actual):
            "\(type): body is \(actual) bytes, expected \(expected)"
        case .reservedNotZero(let type, let offset): "\(type): reserved field at body offset \(offset) is not zero"
        case .badMagic: "HELLO: magic is not RTCSHARE"
        case .badValue(let type, let field, let value): "\(type): \(field) \(value) is out of range"
        case .badText(let type, let field): "\(type): \(field) is not NUL-padded UTF-8 text"
        case .bufferTooSmall(let needed, let available):
            "message needs \(needed) bytes, buffer has \(available)"
        }
    }
}

// MARK: - message bodies

/// HELLO: magic, version, producer name (32 bytes of text).
public struct IPCHello: Equatable, Sendable {
    public static let bodyBytes = 44
    public static let nameBytes = 32
    public var version: UInt16
    /// Always valid for the wire: control characters are replaced and it is cut to 32 bytes.
    public private(set) var name: String

    public init(name: String, version: UInt16 = IPCProtocol.version) {
        self.version = version
        self.name = IPCText.normalized(name, maxBytes: Self.nameBytes)
    }

    init(validatedName name: String, version: UInt16) {
        self.version = version
        self.name = name
    }
}

/// WELCOME: the limits rtcshare accepts.
public struct IPCWelcome: Equatable, Sendable {
    public static let bodyBytes = 24
    public var version: UInt16
    public var maxWidth: UInt32
    public var maxHeight: UInt32
    public var maxBuffers: UInt32
    public var maxAudioFrames: UInt32

    public init(version: UInt16 = IPCProtocol.version, maxWidth: UInt32, maxHeight: UInt32,
                maxBuffers: UInt32 = UInt32(IPCProtocol.maxBuffers),
                maxAudioFrames: UInt32 = UInt32(IPCProtocol.maxAudioFrames)) {
        self.version = version
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.maxBuffers = maxBuffers
        self.maxAudioFrames = maxAudioFrames
    }
}

/// BUFFERS: the shared file (sent alongside as SCM_RIGHTS) and where each buffer lies in it.
public struct IPCBuffers: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        public var offset: UInt64
        public var length: UInt64
        public init(offset: UInt64, length: UInt64) {
            self.offset = offset
            self.length = length
        }
    }

    public static let fixedBodyBytes = 16
    public static let entryBytes = 16
    public var fileBytes: UInt64
    /// 1...32 entries (the parser enforces it; `write` refuses other counts).
    public var entries: [Entry]

    public init(fileBytes: UInt64, entries: [Entry]) {
        self.fileBytes = fileBytes
        self.entries = entries
    }

    /// `count` buffers of `length` bytes back to back from offset 0.
    public static func uniform(count: Int, length: UInt64) -> IPCBuffers {
        IPCBuffers(fileBytes: UInt64(count) * length,
                   entries: (0..<count).map { Entry(offset: UInt64($0) * length, length: length) })
    }
}

/// FRAME: a picture is ready in buffer `bufferID`.
public struct IPCFrame: Equatable, Sendable {
    public static let bodyBytes = 56
    public var bufferID: UInt32
    public var format: PixelFormat
    public var orientation: Orientation
    public var width: UInt32
    public var height: UInt32
    /// Capture time, µs on CLOCK_MONOTONIC.
    public var ptsMicroseconds: Int64
    /// Stride and offset (from the buffer's start) of planes 0, 1, 2; zero for planes the format
    /// does not have. (SIMD3 only as a fixed, allocation-free triple.)
    public var strides: SIMD3<UInt32>
    public var offsets: SIMD3<UInt32>

    public init(bufferID: UInt32, format: PixelFormat, orientation: Orientation, width: UInt32,
                height: UInt32, ptsMicroseconds: Int64, strides: SIMD3<UInt32>, offsets: SIMD3<UInt32>) {
        self.bufferID = bufferID
        self.format = format
        self.orientation = orientation
        self.width = width
        self.height = height
        self.ptsMicroseconds = ptsMicroseconds
        self.strides = strides
        self.offsets = offsets
    }

    /// The wire code of a pixel format.
    public static func code(_ format: PixelFormat) -> UInt16 {
        switch format {
        case .i420: 1
        case .nv12: 2
        case .bgra: 3
        case .bgrx: 4
        }
    }

    public static func format(code: UInt16) -> PixelFormat? {
        switch code {
        case 1: .i420
        case 2: .nv12
        case 3: .bgra
        case 4: .bgrx
        default: nil
        }
    }
}

/// RELEASE: rtcshare no longer reads buffer `bufferID`.
public struct IPCRelease: Equatable, Sendable {
    public static let bodyBytes = 8
    public var bufferID: UInt32
    public init(bufferID: UInt32) { self.bufferID = bufferID }
}

/// AUDIO: the fixed part; the samples follow it in the message (`pcmOffset`, `pcmBytes`).
public struct IPCAudio: Equatable, Sendable {
    public static let bodyHeaderBytes = 24
    /// Where the samples start, counted from the start of the message.
    public static let pcmOffset = IPCProtocol.headerBytes + bodyHeaderBytes
    public var sampleRate: UInt32
    public var channels: UInt16
    public var bigEndian: Bool
    /// Samples per channel.
    public var frames: UInt32
    public var ptsMicroseconds: Int64

    public init(sampleRate: UInt32, channels: UInt16, bigEndian: Bool, frames: UInt32, ptsMicroseconds: Int64) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.bigEndian = bigEndian
        self.frames = frames
        self.ptsMicroseconds = ptsMicroseconds
    }

    /// Bytes of samples that follow.
    public var pcmBytes: Int { Int(frames) * Int(channels) * 2 }
}

/// UNCHANGED: the producer is alive and its picture has not changed.
public struct IPCUnchanged: Equatable, Sendable {
    public static let bodyBytes = 8
    public var ptsMicroseconds: Int64
    public init(ptsMicroseconds: Int64) { self.ptsMicroseconds = ptsMicroseconds }
}

/// Why a side closes.
public struct IPCByeReason: RawRepresentable, Equatable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let done = IPCByeReason(rawValue: 0)
    public static let unsupportedVersion = IPCByeReason(rawValue: 1)
    public static let malformed = IPCByeReason(rawValue: 2)
    public static let frameTooLarge = IPCByeReason(rawValue: 3)
    public static let busy = IPCByeReason(rawValue: 4)
    public static let timedOut = IPCByeReason(rawValue: 5)
    public static let shuttingDown = IPCByeReason(rawValue: 6)

    public var description: String {
        switch rawValue {
        case 0: "done"
        case 1: "unsupported-version"
        case 2: "malformed"
        case 3: "frame-too-large"
        case 4: "busy"
        case 5: "timed-out"
        case 6: "shutting-down"
        default: "reason \(rawValue)"
        }
    }
}

/// BYE: a reason and 60 bytes of text for logs.
public struct IPCBye: Equatable, Sendable {
    public static let bodyBytes = 64
    public static let textBytes = 60
    public var reason: IPCByeReason
    public private(set) var text: String

    public init(reason: IPCByeReason, text: String) {
        self.reason = reason
        self.text = IPCText.normalized(text, maxBytes: Self.textBytes)
    }

    init(reason: IPCByeReason, validatedText: String) {
        self.reason = reason
        self.text = validatedText
    }
}

// MARK: - the message

/// One message of the protocol.
public enum IPCMessage: Equatable, Sendable {
    case hello(IPCHello)
    case welcome(IPCWelcome)
    case buffers(IPCBuffers)
    case frame(IPCFrame)
    case release(IPCRelease)
    /// The samples are not held here: they stay in the received bytes at `IPCAudio.pcmOffset`.
    case audio(IPCAudio)
    case unchanged(IPCUnchanged)
    case bye(IPCBye)

    public var type: IPCMessageType {
        switch self {
        case .hello: .hello
        case .welcome: .welcome
        case .buffers: .buffers
        case .frame: .frame
        case .release: .release
        case .audio: .audio
        case .unchanged: .unchanged
        case .bye: .bye
        }
    }

    /// Body bytes of this message.
    public var bodySize: Int {
        switch self {
        case .hello: IPCHello.bodyBytes
        case .welcome: IPCWelcome.bodyBytes
        case .buffers(let b): IPCBuffers.fixedBodyBytes + IPCBuffers.entryBytes * b.entries.count
        case .frame: IPCFrame.bodyBytes
        case .release: IPCRelease.bodyBytes
        case .audio(let a): IPCAudio.bodyHeaderBytes + a.pcmBytes
        case .unchanged: IPCUnchanged.bodyBytes
        case .bye: IPCBye.bodyBytes
        }
    }

    /// Bytes of the whole message, header included.
    public var size: Int { IPCProtocol.headerBytes + bodySize }

    /// Writes the message at the start of `buffer`; returns its size. For AUDIO, `pcm` (exactly
    /// `pcmBytes` long) is copied after the fixed part; with nil the samples are taken to be in
    /// place already (a producer can generate them straight into its send buffer).
    public func write(into buffer: UnsafeMutableRawBufferPointer,
                      pcm: UnsafeRawBufferPointer? = nil) throws(IPCWireError) -> Int {
        let total = size
        guard buffer.count >= total else { throw .bufferTooSmall(needed: total, available: buffer.count) }
        var w = IPCWriter(buffer)
        w.u16LE(type.rawValue)
        w.u16LE(0)
        w.u32LE(UInt32(bodySize))
        switch self {
        case .hello(let h):
            w.bytes(IPCProtocol.magic)
            w.u16LE(h.version)
            w.u16LE(0)
            w.text(h.name, size: IPCHello.nameBytes)
        case .welcome(let m):
            w.u16LE(m.version)
            w.u16LE(0)
            w.u32LE(m.maxWidth)
            w.u32LE(m.maxHeight)
            w.u32LE(m.maxBuffers)
            w.u32LE(m.maxAudioFrames)
            w.u32LE(0)
        case .buffers(let b):
            guard (1...IPCProtocol.maxBuffers).contains(b.entries.count) else {
                throw .badValue(type: "BUFFERS", field: "count", value: Int64(b.entries.count))
            }
            w.u32LE(UInt32(b.entries.count))
            w.u32LE(0)
            w.u64LE(b.fileBytes)
            for e in b.entries {
                w.u64LE(e.offset)
                w.u64LE(e.length)
            }
        case .frame(let f):
            w.u32LE(f.bufferID)
            w.u16LE(IPCFrame.code(f.format))
            w.u16LE(UInt16(f.orientation.rawValue))
            w.u32LE(f.width)
            w.u32LE(f.height)
            w.i64LE(f.ptsMicroseconds)
            for i in 0..<3 { w.u32LE(f.strides[i]) }
            w.u32LE(0)
            for i in 0..<3 { w.u32LE(f.offsets[i]) }
            w.u32LE(0)
        case .release(let r):
            w.u32LE(r.bufferID)
            w.u32LE(0)
        case .audio(let a):
            w.u32LE(a.sampleRate)
            w.u16LE(a.channels)
            w.u16LE(a.bigEndian ? 1 : 0)
            w.u32LE(a.frames)
            w.u32LE(0)
            w.i64LE(a.ptsMicroseconds)
            if let pcm {
                guard pcm.count == a.pcmBytes else {
                    throw .lengthMismatch(type: "AUDIO", expected: a.pcmBytes, actual: pcm.count)
                }
                w.seek(to: IPCAudio.pcmOffset)
                w.bytes(pcm)
            }
        case .unchanged(let u):
            w.i64LE(u.ptsMicroseconds)
        case .bye(let b):
            w.u16LE(b.reason.rawValue)
            w.u16LE(0)
            w.text(b.text, size: IPCBye.textBytes)
        }
        _ = try w.finish()
        return total
    }

    /// The message as a new array (tests and start-up; the hot path writes into its buffer).
    public func serialized(pcm: [UInt8] = []) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        out.withUnsafeMutableBytes { raw in
            pcm.withUnsafeBytes { p in
                _ = try? write(into: raw, pcm: type == .audio && !pcm.isEmpty ? p : nil)
            }
        }
        return out
    }

    /// Parses one whole message (one datagram).
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(IPCWireError) -> IPCMessage {
        guard bytes.count >= IPCProtocol.headerBytes else { throw .truncatedHeader(bytes.count) }
        var r = IPCReader(bytes)
        let rawType = try r.u16LE()
        guard let type = IPCMessageType(rawValue: rawType) else { throw .unknownType(rawType) }
        let name = type.name
        guard try r.u16LE() == 0 else { throw .reservedNotZero(type: "\(name) header", offset: 2) }
        let declared = Int(try r.u32LE())
        let actual = bytes.count - IPCProtocol.headerBytes
        guard declared == actual else { throw .lengthMismatch(type: name, expected: declared, actual: actual) }
        func expect(_ n: Int) throws(IPCWireError) {
            guard actual == n else { throw .lengthMismatch(type: name, expected: n, actual: actual) }
        }
        func reserved16(_ offset: Int, _ value: UInt16) throws(IPCWireError) {
            guard value == 0 else { throw .reservedNotZero(type: name, offset: offset) }
        }
        func reserved32(_ offset: Int, _ value: UInt32) throws(IPCWireError) {
            guard value == 0 else { throw .reservedNotZero(type: name, offset: offset) }
        }

        switch type {
        case .hello:
            try expect(IPCHello.bodyBytes)
            guard try r.matches(IPCProtocol.magic) else { throw .badMagic }
            let version = try r.u16LE()
            try reserved16(10, try r.u16LE())
            guard let text = try r.text(size: IPCHello.nameBytes) else { throw .badText(type: name, field: "name") }
            return .hello(IPCHello(validatedName: text, version: version))

        case .welcome:
            try expect(IPCWelcome.bodyBytes)
            let version = try r.u16LE()
            try reserved16(2, try r.u16LE())
            let w = try r.u32LE(), h = try r.u32LE(), nb = try r.u32LE(), na = try r.u32LE()
            try reserved32(20, try r.u32LE())
            return .welcome(IPCWelcome(version: version, maxWidth: w, maxHeight: h, maxBuffers: nb, maxAudioFrames: na))

        case .buffers:
            guard actual >= IPCBuffers.fixedBodyBytes else {
                throw .lengthMismatch(type: name, expected: IPCBuffers.fixedBodyBytes, actual: actual)
            }
            let count = Int(try r.u32LE())
            guard (1...IPCProtocol.maxBuffers).contains(count) else {
                throw .badValue(type: name, field: "count", value: Int64(count))
            }
            try expect(IPCBuffers.fixedBodyBytes + IPCBuffers.entryBytes * count)
            try reserved32(4, try r.u32LE())
            let fileBytes = try r.u64LE()
            var entries: [IPCBuffers.Entry] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let offset = try r.u64LE(), length = try r.u64LE()
                entries.append(.init(offset: offset, length: length))
            }
            return .buffers(IPCBuffers(fileBytes: fileBytes, entries: entries))

        case .frame:
            try expect(IPCFrame.bodyBytes)
            let id = try r.u32LE()
            let code = try r.u16LE()
            guard let format = IPCFrame.format(code: code) else {
                throw .badValue(type: name, field: "format", value: Int64(code))
            }
            let tag = try r.u16LE()
            guard let orientation = Orientation(rawValue: Int(tag)) else {
                throw .badValue(type: name, field: "orientation", value: Int64(tag))
            }
            let width = try r.u32LE(), height = try r.u32LE()
            let pts = try r.i64LE()
            let strides = SIMD3(try r.u32LE(), try r.u32LE(), try r.u32LE())
            try reserved32(36, try r.u32LE())
            let offsets = SIMD3(try r.u32LE(), try r.u32LE(), try r.u32LE())
            try reserved32(52, try r.u32LE())
            // Planes the format lacks carry zeros (so every accepted message writes back the same).
            for plane in format.planeCount..<3 where strides[plane] != 0 || offsets[plane] != 0 {
                throw .badValue(type: name, field: "plane \(plane) stride (\(format) has no plane \(plane))",
                                value: Int64(strides[plane]))
            }
            return .frame(IPCFrame(bufferID: id, format: format, orientation: orientation, width: width,
                                   height: height, ptsMicroseconds: pts, strides: strides, offsets: offsets))

        case .release:
            try expect(IPCRelease.bodyBytes)
            let id = try r.u32LE()
            try reserved32(4, try r.u32LE())
            return .release(IPCRelease(bufferID: id))

        case .audio:
            guard actual >= IPCAudio.bodyHeaderBytes else {
                throw .lengthMismatch(type: name, expected: IPCAudio.bodyHeaderBytes, actual: actual)
            }
            let rate = try r.u32LE()
            guard IPCProtocol.sampleRates.contains(rate) else {
                throw .badValue(type: name, field: "sample rate", value: Int64(rate))
            }
            let channels = try r.u16LE()
            guard channels == 1 || channels == 2 else {
                throw .badValue(type: name, field: "channels", value: Int64(channels))
            }
            let order = try r.u16LE()
            guard order <= 1 else { throw .badValue(type: name, field: "byte order", value: Int64(order)) }
            let frames = try r.u32LE()
            guard frames >= 1, frames <= UInt32(IPCProtocol.maxAudioFrames) else {
                throw .badValue(type: name, field: "frames", value: Int64(frames))
            }
            try reserved32(12, try r.u32LE())
            let pts = try r.i64LE()
            let audio = IPCAudio(sampleRate: rate, channels: channels, bigEndian: order == 1, frames: frames,
                                 ptsMicroseconds: pts)
            try expect(IPCAudio.bodyHeaderBytes + audio.pcmBytes)
            return .audio(audio)

        case .unchanged:
            try expect(IPCUnchanged.bodyBytes)
            return .unchanged(IPCUnchanged(ptsMicroseconds: try r.i64LE()))

        case .bye:
            try expect(IPCBye.bodyBytes)
            let reason = try r.u16LE()
            try reserved16(2, try r.u16LE())
            guard let text = try r.text(size: IPCBye.textBytes) else { throw .badText(type: name, field: "text") }
            return .bye(IPCBye(reason: IPCByeReason(rawValue: reason), validatedText: text))
        }
    }

    /// Parses bytes held in an array.
    public static func parse(_ bytes: [UInt8]) throws(IPCWireError) -> IPCMessage {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(IPCWireError) in try parse(raw) } }
        return try result.get()
    }
}

// MARK: - byte access

// Messages are read and written with the core's bounds-checked ByteReader/ByteWriter, in
// little-endian (the byte order of every platform a producer runs on); the parser checks each
// message's length against its type's layout first, so a read past the end is only a safety net.

extension IPCWireError: ByteReaderFailure, ByteWriterFailure {
    public static func readPastEnd(offset: Int, needed: Int, available: Int) -> IPCWireError {
        .lengthMismatch(type: "message", expected: offset + needed, actual: offset + available)
    }

    public static func writePastEnd(offset: Int, needed: Int, available: Int) -> IPCWireError {
        .bufferTooSmall(needed: offset + needed, available: available)
    }
}

private typealias IPCReader = ByteReader<IPCWireError>
private typealias IPCWriter = ByteWriter<IPCWireError>

extension ByteReader where Failure == IPCWireError {
    fileprivate mutating func i64LE() throws(IPCWireError) -> Int64 { Int64(bitPattern: try u64LE()) }

    /// Whether the next bytes are `expected` (consumed either way).
    fileprivate mutating func matches(_ expected: [UInt8]) throws(IPCWireError) -> Bool {
        let field = try bytes(expected.count)
        return field.elementsEqual(expected)
    }

    /// A NUL-padded text field of `size` bytes; nil unless it is valid UTF-8 without control
    /// characters followed only by NULs.
    fileprivate mutating func text(size: Int) throws(IPCWireError) -> String? {
        let field = try bytes(size)
        let end = field.firstIndex(of: 0) ?? size
        guard field[end...].allSatisfy({ $0 == 0 }) else { return nil }
        guard let text = String(validating: field[..<end], as: UTF8.self) else { return nil }
        guard !text.unicodeScalars.contains(where: IPCText.isControl) else { return nil }
        return text
    }
}

extension ByteWriter where Failure == IPCWireError {
    fileprivate mutating func i64LE(_ v: Int64) { u64LE(UInt64(bitPattern: v)) }

    fileprivate mutating func bytes(_ b: [UInt8]) {
        for byte in b { u8(byte) }
    }

    /// `text` (already normalized to fit) NUL-padded to `size` bytes.
    fileprivate mutating func text(_ text: String, size: Int) {
        var n = 0
        for byte in text.utf8 where n < size {
            u8(byte)
            n += 1
        }
        zeros(size - n)
    }
}

/// Text fields: UTF-8, no control characters, cut on a character boundary to fit.
enum IPCText {
    static func isControl(_ s: Unicode.Scalar) -> Bool { s.value < 0x20 || s.value == 0x7F }

    static func normalized(_ text: String, maxBytes: Int) -> String {
        var out = ""
        var bytes = 0
        for scalar in text.unicodeScalars {
            let s = isControl(scalar) ? "?" : scalar
            let n = String(s).utf8.count
            guard bytes + n <= maxBytes else { break }
            out.unicodeScalars.append(s)
            bytes += n
        }
        return out
    }
}
