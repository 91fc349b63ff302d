import RTCShareCore
import RTCShareIO
import RTCShareMedia
import Synchronization

/// `ipc:PATH`: frames and PCM audio pushed by another process (docs/ipc.md). rtcshare listens
/// on a SOCK_SEQPACKET Unix socket at PATH; one producer at a time connects, shares a memfd
/// holding its frame buffers, and names a buffer per FRAME. Each frame is read out of the
/// shared file in one pass into a pool slot — I420 and NV12 as they are, BGRA/BGRX converted to
/// I420 on the way — and the buffer is released at once; the orientation tag stays on the frame
/// for the pipeline to turn upright. A producer that goes away leaves the share running (the
/// filler repeats the last frame) until it, or another, connects again.
///
/// Producer input is untrusted: every message goes through `IPCMessage.parse` and
/// `IPCProducerStateMachine`; anything wrong is counted, logged in one line, and the producer
/// is disconnected — never a crash, never an allocation that grows.
///
/// Received audio is converted to native-endian Int16 and queued in `audioSamples` for the audio
/// path to take on its own thread.
public final class IPCSource: VideoSource {
    public let name: String
    /// Slots hold I420 (NV12 frames, which need no more room, stay NV12).
    public let format = PixelFormat.i420
    /// The slot size: `maxSize` laid out so that a picture of that size fits in either orientation.
    public let frameWidth: Int
    public let frameHeight: Int
    public let fixedOrientation: Orientation? = nil
    public let isLive = true

    public let path: String
    /// The largest picture a producer may send (either orientation).
    public let maxSize: PictureSize
    /// PCM received from the producer, for the audio path (one consumer thread). Usable at once;
    /// it holds its memory (from the share's budget) after `prepare(budget:)`.
    public let audioSamples: PCMChunkQueue

    public static let defaultMaxSize = PictureSize(width: 1280, height: 720)
    /// Room for the largest message (an AUDIO of 100 ms stereo) with margin.
    static let receiveBytes = 32 << 10
    /// A producer's capture time further than this in the past (or in the future) is replaced
    /// by the arrival time.
    static let ptsToleranceMicroseconds: Int64 = 2_000_000
    /// A connected producer silent this long is dropped when the watchdog restarts the source.
    static let silenceLimit = MediaDuration.seconds(1)

    private let log: @Sendable (String) -> Void
    private let limits: IPCProducerStateMachine.Limits
    private let bounceBytes: Int

    // Touched by the capture thread only (and by `prepare`, before that thread starts).
    private var listener: IPCListener?
    private var connection: IPCConnection?
    private var shared: SharedMemoryFile?
    private var machine: IPCProducerStateMachine
    private var descriptors = ReceivedDescriptors()
    private var receiveMemory: BudgetBlock?
    private var bounceMemory: BudgetBlock?
    private var receiveBuffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var bounce = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var peerLabel = ""
    private var lastMessageAt = MediaTime.zero
    private var framesThisConnection = 0
    private var lastRefusedPID: Int32 = -1
    private var lastRefusalLogged = MediaTime.zero

    private let producersCount = Atomic<Int>(0)
    private let refusedCount = Atomic<Int>(0)
    private let framesCount = Atomic<Int>(0)
    private let droppedCount = Atomic<Int>(0)
    private let malformedCount = Atomic<Int>(0)
    private let tooLargeCount = Atomic<Int>(0)

    /// A source listening at `path` (from `prepare` on) for pictures up to `maxSize` (sides up
    /// to 4096) in either orientation. `log` gets one line per connection event.
    public init(path: String, maxSize: PictureSize = defaultMaxSize,
                log: @escaping @Sendable (String) -> Void = { _ in }) {
        let box = PictureSize(width: min(max(maxSize.width, 16), 4096), height: min(max(maxSize.height, 16), 4096))
        self.path = path
        self.name = "ipc:\(path)"
        self.maxSize = box
        self.log = log
        self.limits = IPCProducerStateMachine.Limits(maxWidth: box.width, maxHeight: box.height)
        self.machine = IPCProducerStateMachine(limits: limits)
        (frameWidth, frameHeight) = Self.slotSize(box)
        // Two rows of the widest BGRA picture always fit, so a conversion band is never empty.
        bounceBytes = max(64 << 10, 2 * 4 * max(box.width, box.height))
        audioSamples = PCMChunkQueue()
    }

    deinit {
        if connection != nil { sendBye(.shuttingDown, "rtcshare is stopping") }
    }

    /// The slot layout for a `box`: its width, and a height raised until a picture of the box
    /// turned on its side (whose rows align differently) also fits, in I420 or NV12.
    static func slotSize(_ box: PictureSize) -> (width: Int, height: Int) {
        let (w, h) = (box.width, box.height)
        var need = 0
        for f in [PixelFormat.i420, .nv12] {
            need = max(need, f.bytes(width: w, height: h) ?? 0, f.bytes(width: h, height: w) ?? 0)
        }
        var height = h
        while (PixelFormat.i420.bytes(width: w, height: height) ?? .max) < need { height += 2 }
        return (w, height)
    }

    // MARK: VideoSource

    /// The receive and bounce buffers and the audio queue.
    public var budgetBytes: Int {
        Self.receiveBytes + bounceBytes + PCMChunkQueue.bytes() + 3 * 64 + 4096
    }

    public func prepare(budget: MemoryBudget) throws(SourceError) {
        guard listener == nil else { return }
        do {
            let receive = try BudgetBlock(budget: budget, byteCount: Self.receiveBytes)
            let bounceBlock = try BudgetBlock(budget: budget, byteCount: bounceBytes)
            receiveBuffer = UnsafeMutableRawBufferPointer(start: receive.base, count: receive.byteCount)
            bounce = UnsafeMutableRawBufferPointer(start: bounceBlock.base, count: bounceBlock.byteCount)
            receiveMemory = consume receive
            bounceMemory = consume bounceBlock
            try audioSamples.attach(budget: budget)
        } catch {
            throw SourceError("\(name): reserving its buffers: \(error)")
        }
        do {
            listener = try IPCListener(path: path)
        } catch {
            throw SourceError("\(name): \(error)")
        }
        log("ipc: listening on \(path) for a producer (pictures up to \(maxSize), either orientation)")
    }

    public func capture(from pool: FramePool, until deadline: MediaTime) throws(SourceError) -> CaptureOutcome {
        guard let listener else { throw SourceError("\(name): not prepared") }
        // If the listener polls readable but nothing can be accepted (out of descriptors), it
        // is left alone until the next capture instead of being polled in a busy loop.
        var watchListener = true
        while true {
            let connected = connection?.descriptor ?? -1
            let ready = IPCPoll.wait(watchListener ? listener.descriptor : -1, connected, until: deadline)
            if ready.first, !acceptWaiting(listener) { watchListener = false }
            if ready.second, connection != nil, let outcome = receiveOne(pool) { return outcome }
            if !ready.first && !ready.second || MonotonicClock.now() >= deadline { return .nothingYet }
        }
    }

    /// A stall: nothing came for the watchdog's threshold. A producer that is connected but has
    /// sent nothing at all for that long is dropped, so that another can connect.
    public func restart() throws(SourceError) {
        guard connection != nil else {
            log("ipc: no producer connected; waiting on \(path)")
            return
        }
        let silent = MonotonicClock.now() - lastMessageAt
        if silent >= Self.silenceLimit {
            sendBye(.timedOut, "silent for \(silent.microseconds / 1000) ms")
            disconnect("it sent nothing for \(silent.microseconds / 1000) ms")
        }
    }

    // MARK: counters

    /// Counters since the start, readable from any thread.
    public struct Counters: Equatable, Sendable {
        /// Producers that said HELLO.
        public var producers: Int
        /// Connections refused because a producer was already connected.
        public var refused: Int
        /// Frames delivered to the pipeline.
        public var frames: Int
        /// Frames released unread because every slot was busy downstream.
        public var droppedFrames: Int
        /// Producers disconnected for a malformed message.
        public var malformed: Int
        /// Producers disconnected for a frame larger than `maxSize`.
        public var tooLarge: Int
    }

    public var counters: Counters {
        Counters(producers: producersCount.load(ordering: .relaxed), refused: refusedCount.load(ordering: .relaxed),
                 frames: framesCount.load(ordering: .relaxed), droppedFrames: droppedCount.load(ordering: .relaxed),
                 malformed: malformedCount.load(ordering: .relaxed), tooLarge: tooLargeCount.load(ordering: .relaxed))
    }

    // MARK: connections

    /// Takes every waiting connection; false if there was none to take.
    private func acceptWaiting(_ listener: IPCListener) -> Bool {
        var any = false
        while let incoming = listener.accept() {
            any = true
            if connection == nil {
                let pid = incoming.peerProcessID.map { "pid \($0)" } ?? "pid ?"
                connection = consume incoming
                machine = IPCProducerStateMachine(limits: limits)
                peerLabel = "(\(pid))"
                lastMessageAt = MonotonicClock.now()
                framesThisConnection = 0
            } else {
                // One producer at a time: the newcomer is told why and closed.
                incoming.discardWaiting(into: receiveBuffer)
                _ = Self.send(.bye(IPCBye(reason: .busy, text: "another producer is connected")), on: incoming)
                refusedCount.add(1, ordering: .relaxed)
                // A refused producer typically retries every few hundred ms: one line per
                // process, and at most one every 10 s, is enough.
                let pid = incoming.peerProcessID ?? 0
                let now = MonotonicClock.now()
                if pid != lastRefusedPID || now - lastRefusalLogged >= .seconds(10) {
                    lastRefusedPID = pid
                    lastRefusalLogged = now
                    log("ipc: refused a producer (pid \(pid)) and any retries: \(peerLabel) is connected")
                }
            }
        }
        return any
    }

    private func disconnect(_ why: String) {
        log("ipc: producer \(peerLabel) disconnected after \(framesThisConnection) frames: \(why)")
        connection = nil
        shared = nil
        descriptors.closeAll()
        machine = IPCProducerStateMachine(limits: limits)
    }

    /// Reads and acts on one message; returns what the capture gave, or nil to keep waiting.
    private func receiveOne(_ pool: FramePool) -> CaptureOutcome? {
        let result = connection!.receive(into: receiveBuffer, descriptors: &descriptors)
        switch result {
        case .nothing:
            return nil
        case .closed:
            disconnect("it closed the connection")
            return nil
        case .failed(let e):
            disconnect("\(IPCSystemError("receive", errno: e))")
            return nil
        case .truncated:
            return perform(machine.receivedMalformed(
                "a message longer than \(receiveBuffer.count) bytes, or with more file descriptors than allowed"),
                message: UnsafeRawBufferPointer(start: nil, count: 0), file: nil, pool: pool)
        case .message(let n):
            lastMessageAt = MonotonicClock.now()
            let bytes = UnsafeRawBufferPointer(start: receiveBuffer.baseAddress, count: n)
            let attached = descriptors.count
            // A descriptor is taken over at once: kept if the message turns out to be a good
            // BUFFERS, closed otherwise.
            var file: SharedMemoryFile? = nil
            var fileBytes: Int? = nil
            if let fd = descriptors.takeFirst() {
                let adopted = SharedMemoryFile(adopting: fd)
                fileBytes = adopted.regularFileBytes
                file = consume adopted
            }
            descriptors.closeAll()
            let action: IPCProducerStateMachine.Action
            do {
                let message = try IPCMessage.parse(bytes)
                action = machine.received(message, attachedFiles: attached, fileBytes: fileBytes)
            } catch {
                action = machine.receivedMalformed(error)
            }
            return perform(action, message: bytes, file: file, pool: pool)
        }
    }

    private func perform(_ action: IPCProducerStateMachine.Action, message: UnsafeRawBufferPointer,
                         file: consuming SharedMemoryFile?, pool: FramePool) -> CaptureOutcome? {
        switch action {
        case .reply(let reply):
            if case .welcome = reply {
                producersCount.add(1, ordering: .relaxed)
                peerLabel = "'\(machine.producerName ?? "")' \(peerLabel)"
                log("ipc: producer \(peerLabel) connected")
            }
            sendOrDrop(reply)
            return nil
        case .adoptBuffers:
            shared = file.take()
            return nil
        case .copyFrame(let layout):
            return deliver(layout, pool: pool)
        case .deliverAudio(let audio):
            let pcm = UnsafeRawBufferPointer(rebasing: message[IPCAudio.pcmOffset..<IPCAudio.pcmOffset + audio.pcmBytes])
            audioSamples.push(pcm, bigEndian: audio.bigEndian, sampleRate: Int(audio.sampleRate),
                              channels: Int(audio.channels), ptsMicroseconds: Self.captureTime(audio.ptsMicroseconds))
            return nil
        case .alive:
            return .unchanged
        case .close(let bye, let why):
            if let bye {
                if bye.reason == .malformed { malformedCount.add(1, ordering: .relaxed) }
                if bye.reason == .frameTooLarge { tooLargeCount.add(1, ordering: .relaxed) }
                sendBye(bye)
            }
            disconnect(why)
            return nil
        }
    }

    // MARK: frames

    /// Reads a frame out of the shared file into a slot and releases the producer's buffer.
    private func deliver(_ layout: IPCFrameLayout, pool: FramePool) -> CaptureOutcome? {
        let slotFormat: PixelFormat = layout.format == .nv12 ? .nv12 : .i420
        var frame: FrameSlot
        do {
            frame = try pool.acquire(format: slotFormat, width: layout.width, height: layout.height)
        } catch .poolExhausted {
            // Every slot is busy downstream: skip this picture (alive), let the producer reuse it.
            droppedCount.add(1, ordering: .relaxed)
            release(layout.bufferID)
            return .unchanged
        } catch {
            return perform(.close(bye: IPCBye(reason: .frameTooLarge, text: "max \(maxSize)"),
                                  why: "its \(layout.width)x\(layout.height) frame does not fit a slot"),
                           message: UnsafeRawBufferPointer(start: nil, count: 0), file: nil, pool: pool)
        }
        let copied = copy(layout, into: &frame)
        release(layout.bufferID)
        guard copied else {
            return perform(machine.receivedMalformed(
                "buffer \(layout.bufferID) cannot be read: the shared file is shorter than BUFFERS said"),
                message: UnsafeRawBufferPointer(start: nil, count: 0), file: nil, pool: pool)
        }
        frame.orientation = layout.orientation
        frame.ptsMicroseconds = Self.captureTime(layout.ptsMicroseconds)
        framesCount.add(1, ordering: .relaxed)
        framesThisConnection += 1
        return .frame(frame)
    }

    /// The producer's capture time on our clock if it is plausible (same CLOCK_MONOTONIC), else now.
    private static func captureTime(_ micros: Int64) -> Int64 {
        let now = MonotonicClock.now().microseconds
        return micros <= now && micros >= now - ptsToleranceMicroseconds ? micros : now
    }

    private func copy(_ layout: IPCFrameLayout, into frame: inout FrameSlot) -> Bool {
        guard shared != nil else { return false }
        return frame.withMutablePixels { pixels -> Bool in
            switch layout.format {
            case .i420, .nv12:
                for p in 0..<layout.planeCount where !copyPlane(layout.plane(p), into: pixels.plane(p)) {
                    return false
                }
                return true
            case .bgra, .bgrx:
                return convertToI420(layout, into: pixels)
            }
        }
    }

    /// One plane, straight into the slot when the strides agree, else through the bounce buffer.
    private func copyPlane(_ source: IPCFrameLayout.Plane, into plane: PixelPlane) -> Bool {
        guard plane.rowBytes == source.rowBytes, plane.rows == source.rows, let base = plane.row(0).baseAddress else {
            return false
        }
        if source.stride == plane.stride {
            return shared!.read(at: source.fileOffset, into: base,
                                count: source.stride * (source.rows - 1) + source.rowBytes)
        }
        var y = 0
        while y < source.rows {
            guard let band = readBand(source, from: y, evenRows: false) else { return false }
            let from = UnsafeRawPointer(bounce.baseAddress!)
            let into = UnsafeMutableRawPointer(base)
            for r in 0..<band.rows {
                let target: UnsafeMutableRawPointer = into + (y + r) * plane.stride
                target.copyMemory(from: from + r * band.stride, byteCount: source.rowBytes)
            }
            y += band.rows
        }
        return true
    }

    /// BGRA/BGRX rows, band by band through the bounce buffer, converted into the I420 slot.
    private func convertToI420(_ layout: IPCFrameLayout, into pixels: FramePixels) -> Bool {
        let source = layout.plane0
        var y = 0
        while y < layout.height {
            guard let band = readBand(source, from: y, evenRows: true) else { return false }
            let rows = FramePixels(packed: layout.format, width: layout.width, height: band.rows,
                                   base: bounce.baseAddress!.assumingMemoryBound(to: UInt8.self), stride: band.stride)
            let into = pixels.region(x: 0, y: y, width: layout.width, height: band.rows)
            guard (try? PixelConversion.packedToI420(rows, into: into)) != nil else { return false }
            y += band.rows
        }
        return true
    }

    /// Reads rows `y...` of a plane into the bounce buffer — as many as fit, an even number if
    /// asked — in one read when they fit with their stride, else row by row packed. Returns how
    /// many rows and their stride there; nil if the file came up short.
    private func readBand(_ source: IPCFrameLayout.Plane, from y: Int, evenRows: Bool) -> (rows: Int, stride: Int)? {
        let left = source.rows - y
        let file = source.fileOffset + y * source.stride
        if source.rowBytes <= bounce.count {
            var n = min(left, (bounce.count - source.rowBytes) / source.stride + 1)
            if evenRows, n < left { n &= ~1 }
            if n >= (evenRows ? 2 : 1) {
                let ok = shared!.read(at: file, into: bounce.baseAddress!, count: (n - 1) * source.stride + source.rowBytes)
                return ok ? (n, source.stride) : nil
            }
        }
        var n = min(left, bounce.count / max(source.rowBytes, 1))
        if evenRows, n < left { n &= ~1 }
        guard n >= 1 else { return nil }
        for r in 0..<n where !shared!.read(at: file + r * source.stride, into: bounce.baseAddress! + r * source.rowBytes,
                                           count: source.rowBytes) {
            return nil
        }
        return (n, source.rowBytes)
    }

    // MARK: replies

    private func release(_ bufferID: UInt32) {
        sendOrDrop(.release(IPCRelease(bufferID: bufferID)))
    }

    private func sendBye(_ reason: IPCByeReason, _ text: String) {
        sendBye(IPCBye(reason: reason, text: text))
    }

    /// Sends BYE to the connected producer, having read away what it had already sent, so that
    /// the close that follows reaches it after the BYE rather than as a reset.
    private func sendBye(_ bye: IPCBye) {
        guard connection != nil else { return }
        if receiveBuffer.count > 0 { connection!.discardWaiting(into: receiveBuffer) }
        _ = Self.send(.bye(bye), on: connection!)
    }

    /// Sends a reply; a producer that does not read its replies (queue full) or is gone is
    /// disconnected.
    private func sendOrDrop(_ message: IPCMessage) {
        guard connection != nil else { return }
        switch Self.send(message, on: connection!) {
        case .sent:
            break
        case .queueFull:
            disconnect("it does not read rtcshare's replies (its socket queue is full)")
        case .closed:
            // A producer that says BYE and closes at once can be gone before our reply to its
            // last frame: its BYE is still queued, and says why it left.
            disconnect(finalWords() ?? "it closed the connection")
        case .failed(let e):
            disconnect("\(IPCSystemError("send", errno: e))")
        }
    }

    /// Reads what a producer that has closed left queued (at most a few dozen messages) and
    /// returns its BYE's reason, if it sent one.
    private func finalWords() -> String? {
        guard connection != nil else { return nil }
        for _ in 0..<64 {
            guard case .message(let n) = connection!.receive(into: receiveBuffer, descriptors: &descriptors) else {
                break
            }
            descriptors.closeAll()
            guard let message = try? IPCMessage.parse(UnsafeRawBufferPointer(start: receiveBuffer.baseAddress, count: n)),
                  case .bye = message else { continue }
            if case .close(_, let why) = machine.received(message, attachedFiles: 0, fileBytes: nil) { return why }
        }
        return nil
    }

    /// Writes a small reply (WELCOME, RELEASE, BYE) on the stack and sends it.
    private static func send(_ message: IPCMessage, on connection: borrowing IPCConnection) -> IPCSendResult {
        withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { raw -> IPCSendResult in
            guard let n = try? message.write(into: raw) else { return .failed(0) }
            return connection.send(UnsafeRawBufferPointer(rebasing: raw[..<n]))
        }
    }
}
