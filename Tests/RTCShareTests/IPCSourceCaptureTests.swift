import Glibc
import RTCShareCore
import RTCShareIO
import RTCShareMedia
import Testing
@testable import RTCShare

/// `IPCSource` driven in process: a test plays the producer on a real socket, the source's
/// `capture` runs on the test thread. Pixels come out exactly, buffers are released, and a
/// producer that shrinks its shared file under rtcshare is disconnected — no SIGBUS.
@Suite(.serialized) struct IPCSourceCaptureTests {
    /// A source, its pool, and a connected producer end.
    final class Rig {
        let path = "/tmp/rtcshare-ipc-unit-\(getpid()).sock"
        let source: IPCSource
        let budget: MemoryBudget
        let pool: FramePool
        var producer: IPCConnection?
        var file: Int32 = -1
        let lines = LineLog()

        final class LineLog: @unchecked Sendable {
            private var lines: [String] = []
            private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
            init() { pthread_mutex_init(lock, nil) }
            func add(_ s: String) { pthread_mutex_lock(lock); lines.append(s); pthread_mutex_unlock(lock) }
            var all: [String] { pthread_mutex_lock(lock); defer { pthread_mutex_unlock(lock) }; return lines }
        }

        init() throws {
            let lines = self.lines
            source = IPCSource(path: path, maxSize: PictureSize(width: 64, height: 48), log: { lines.add($0) })
            budget = try MemoryBudget(capBytes: source.budgetBytes + (1 << 20), prefault: false)
            pool = try FramePool(budget: budget, format: source.format, maxWidth: source.frameWidth,
                                 maxHeight: source.frameHeight, count: 2)
            try source.prepare(budget: budget)
            producer = try IPCConnection.connect(to: path)
        }

        deinit { if file >= 0 { close(file) } }

        func send(_ message: IPCMessage, passing fd: Int32 = -1) {
            let bytes = message.serialized()
            let result = bytes.withUnsafeBytes { producer!.send($0, passing: fd) }
            #expect(result == .sent)
        }

        /// The next reply rtcshare sent, if any came.
        func reply() -> IPCMessage? {
            var buffer = [UInt8](repeating: 0, count: 256)
            var fds = ReceivedDescriptors()
            let result = buffer.withUnsafeMutableBytes { producer!.receive(into: $0, descriptors: &fds) }
            guard case .message(let n) = result else { return nil }
            return try? IPCMessage.parse(Array(buffer[..<n]))
        }

        func receiveResult() -> IPCReceiveResult {
            var buffer = [UInt8](repeating: 0, count: 256)
            var fds = ReceivedDescriptors()
            return buffer.withUnsafeMutableBytes { producer!.receive(into: $0, descriptors: &fds) }
        }

        /// Runs one capture with a short deadline; the frame if one came.
        func capture() throws -> FrameSlot? {
            let outcome = try source.capture(from: pool, until: MonotonicClock.now() + .milliseconds(100))
            switch consume outcome {
            case .frame(let frame): return frame
            default: return nil
            }
        }

        /// HELLO, WELCOME, then BUFFERS over a fresh (unlinked) regular file holding `content`.
        func handshake(content: [UInt8], buffers: IPCBuffers) throws {
            send(.hello(IPCHello(name: "unit")))
            _ = try capture()
            #expect(reply() == .welcome(IPCWelcome(maxWidth: 64, maxHeight: 48)))
            let name = "/tmp/rtcshare-ipc-unit-\(getpid()).buf"
            file = open(name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            unlink(name)
            #expect(ftruncate(file, off_t(buffers.fileBytes)) == 0)
            _ = content.withUnsafeBytes { pwrite(file, $0.baseAddress, $0.count, 0) }
            send(.buffers(buffers), passing: file)
            _ = try capture()
        }
    }

    @Test func nv12WithPaddedStridesArrivesExactlyAndIsReleased() throws {
        let rig = try Rig()
        // A 48x32 NV12 picture, rows padded to 50 bytes (so the copy goes through the bounce buffer).
        let (w, h, stride) = (48, 32, 50)
        var content = [UInt8](repeating: 0xEE, count: 8192)
        for y in 0..<h { for x in 0..<w { content[y * stride + x] = UInt8((x * 3 + y * 5) & 0xFF) } }
        let uvOffset = 4096
        for y in 0..<h / 2 { for x in 0..<w { content[uvOffset + y * stride + x] = UInt8((x + 100 + y) & 0xFF) } }
        try rig.handshake(content: content, buffers: .uniform(count: 1, length: 8192))

        let pts = MonotonicClock.now().microseconds - 1000
        rig.send(.frame(IPCFrame(bufferID: 0, format: .nv12, orientation: .left, width: UInt32(w), height: UInt32(h),
                                 ptsMicroseconds: pts, strides: SIMD3(UInt32(stride), UInt32(stride), 0),
                                 offsets: SIMD3(0, UInt32(uvOffset), 0))))
        guard let frame = try rig.capture() else { Issue.record("no frame"); return }
        #expect(frame.format == .nv12 && frame.width == w && frame.height == h)
        #expect(frame.orientation == .left)
        #expect(frame.ptsMicroseconds == pts)  // a plausible capture time is kept
        frame.withPixels { pixels in
            let luma = pixels.plane(0), chroma = pixels.plane(1)
            for y in 0..<h { #expect(Array(luma.row(y)) == Array(content[y * stride..<y * stride + w])) }
            for y in 0..<h / 2 {
                #expect(Array(chroma.row(y)) == Array(content[uvOffset + y * stride..<uvOffset + y * stride + w]))
            }
        }
        #expect(rig.reply() == .release(IPCRelease(bufferID: 0)))
        #expect(rig.source.counters.frames == 1)
    }

    @Test func bgraIsConvertedToI420OnTheWayIn() throws {
        let rig = try Rig()
        let (w, h) = (32, 16)
        // Left half white, right half black, full-range BGRA.
        var content = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<h { for x in 0..<w / 2 { for c in 0..<4 { content[(y * w + x) * 4 + c] = 255 } } }
        try rig.handshake(content: content, buffers: .uniform(count: 1, length: UInt64(content.count)))
        rig.send(.frame(IPCFrame(bufferID: 0, format: .bgrx, orientation: .up, width: UInt32(w), height: UInt32(h),
                                 ptsMicroseconds: -1, strides: SIMD3(UInt32(w * 4), 0, 0), offsets: SIMD3(0, 0, 0))))
        guard let frame = try rig.capture() else { Issue.record("no frame"); return }
        #expect(frame.format == .i420)
        #expect(abs(frame.ptsMicroseconds - MonotonicClock.now().microseconds) < 1_000_000)  // implausible: now
        frame.withPixels { pixels in
            let luma = pixels.plane(0)
            #expect(luma.row(0)[0] == 235 && luma.row(h - 1)[w / 2 - 1] == 235)
            #expect(luma.row(0)[w / 2] == 16 && luma.row(h - 1)[w - 1] == 16)
        }
    }

    @Test func aSharedFileShrunkUnderRtcshareDisconnectsTheProducerWithoutACrash() throws {
        let rig = try Rig()
        try rig.handshake(content: [UInt8](repeating: 7, count: 4096), buffers: .uniform(count: 1, length: 4096))
        #expect(ftruncate(rig.file, 100) == 0)  // no seal stops this
        rig.send(.frame(IPCFrame(bufferID: 0, format: .bgra, orientation: .up, width: 16, height: 16,
                                 ptsMicroseconds: 0, strides: SIMD3(64, 0, 0), offsets: SIMD3(0, 0, 0))))
        let gotFrame = try rig.capture() != nil
        #expect(!gotFrame)
        #expect(rig.reply() == .release(IPCRelease(bufferID: 0)))
        guard case .bye(let bye)? = rig.reply() else { Issue.record("no BYE"); return }
        #expect(bye.reason == .malformed)
        #expect(rig.receiveResult() == .closed)
        #expect(rig.source.counters.malformed == 1)
        let disconnects = rig.lines.all.filter { $0.contains("disconnected") }
        #expect(disconnects.count == 1 && disconnects[0].contains("shorter than BUFFERS said"), "\(rig.lines.all)")
        #expect(rig.pool.stats.inUse == 0)  // the slot went back
    }

    @Test func aSecondProducerIsToldBusyAndAnAudioMessageIsQueued() throws {
        let rig = try Rig()
        rig.send(.hello(IPCHello(name: "first")))
        _ = try rig.capture()
        _ = rig.reply()
        let second = try IPCConnection.connect(to: rig.path)
        var samples: [UInt8] = []
        for i in 0..<4 { samples += [0x01, UInt8(i)] }  // big-endian 0x0100, 0x0101, …
        let audio = IPCAudio(sampleRate: 16_000, channels: 2, bigEndian: true, frames: 2, ptsMicroseconds: 0)
        let bytes = IPCMessage.audio(audio).serialized(pcm: samples)
        _ = bytes.withUnsafeBytes { rig.producer!.send($0) }
        _ = try rig.capture()
        _ = try rig.capture()
        var buffer = [UInt8](repeating: 0, count: 256)
        var fds = ReceivedDescriptors()
        let got = buffer.withUnsafeMutableBytes { second.receive(into: $0, descriptors: &fds) }
        guard case .message(let n) = got, case .bye(let bye)? = try? IPCMessage.parse(Array(buffer[..<n])) else {
            Issue.record("second producer got \(got)"); return
        }
        #expect(bye.reason == .busy)
        #expect(rig.source.counters.refused == 1)
        let chunk = rig.source.audioSamples.pop { (Array($0.samples), $0.sampleRate, $0.channels) }
        #expect(chunk?.0 == [0x0100, 0x0101, 0x0102, 0x0103])
        #expect(chunk?.1 == 16_000 && chunk?.2 == 2)
    }

    @Test func aStaleSocketFileIsReplacedAndALiveListenerRefused() throws {
        let rig = try Rig()
        let other = IPCSource(path: rig.path)
        let budget = try MemoryBudget(capBytes: other.budgetBytes + (1 << 16), prefault: false)
        #expect(throws: SourceError.self) { try other.prepare(budget: budget) }
        // A socket file whose listener is gone (left by a killed run) is taken over.
        let stale = "/tmp/rtcshare-ipc-stale-\(getpid()).sock"
        do { _ = try IPCListener(path: stale) }  // bound, then closed: its file is removed
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(stale.utf8)) }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        close(fd)  // the file stays, nobody listens
        let listener = try IPCListener(path: stale)
        #expect(listener.path == stale)
    }
}
