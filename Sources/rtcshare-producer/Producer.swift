import Glibc
import RTCShareCore
import RTCShareIO
import RTCShareMedia

/// The producer's run loop: connect (and reconnect), HELLO, BUFFERS with the memfd, then a FRAME
/// per capture into whichever buffer rtcshare has released, and 20 ms AUDIO messages of a tone.
/// It never waits on rtcshare: a capture that finds no free buffer is skipped.
final class Producer {
    struct Settings {
        var socket: String
        var size: (width: Int, height: Int)
        var framesPerSecond: Int
        var format: ProducerFormat
        var orientation: Orientation
        var toneHz: Double?
        var bigEndianAudio: Bool
        /// PCM sample rate (a multiple of 50, so a 20 ms message is whole frames) and channels.
        var audioRate: Int
        var audioChannels: Int
        var duration: MediaDuration?
        var firstCounter: UInt32
        var bufferCount: Int
        var name: String
        var strideAlign: Int
        var quiet: Bool
    }

    /// 20 ms per AUDIO message.
    static let audioMessagesPerSecond = 50
    static let retryInterval = MediaDuration.milliseconds(200)

    let settings: Settings
    private let layout: ProducerFrameLayout
    private let pattern: TestPattern
    private let budget: MemoryBudget
    private let uprightPool: FramePool
    private let turnedPool: FramePool?
    private let turner: FrameTransformer?
    private let memory: SharedMemoryFile
    private let mapping: SharedMapping
    private var free: [Bool]
    private var sendBuffer: [UInt8]

    private var connection: IPCConnection?
    private var welcomed = false
    private var nextAttempt = MediaTime.zero

    private var counter: UInt32
    private var audioFramesSent = 0
    private var framesSent = 0
    private var framesSkipped = 0
    private var connections = 0

    init(_ settings: Settings) throws {
        self.settings = settings
        let (w, h) = (settings.size.width, settings.size.height)
        let (sw, sh) = settings.orientation.uprightSize(width: w, height: h)  // stored size
        layout = ProducerFrameLayout(format: settings.format, width: sw, height: sh, strideAlign: settings.strideAlign)
        pattern = TestPattern(width: w, height: h)
        let frame = (PixelFormat.i420.bytes(width: w, height: h) ?? 0) + 4096
        let scratch = try FrameTransformer.scratchBytes(maxSourceWidth: w, maxSourceHeight: h,
                                                        maxOutputWidth: sw, maxOutputHeight: sh)
        budget = try MemoryBudget(capBytes: 2 * frame + scratch + (1 << 20), prefault: false)
        uprightPool = try FramePool(budget: budget, format: .i420, maxWidth: w, maxHeight: h, count: 1)
        if settings.orientation != .up {
            turnedPool = try FramePool(budget: budget, format: .i420, maxWidth: sw, maxHeight: sh, count: 1)
            turner = try FrameTransformer(budget: budget, maxSourceWidth: w, maxSourceHeight: h,
                                          maxOutputWidth: sw, maxOutputHeight: sh)
        } else {
            turnedPool = nil
            turner = nil
        }
        let total = layout.bufferBytes * settings.bufferCount
        memory = try SharedMemoryFile.create(name: "rtcshare-producer", bytes: total)
        mapping = try memory.mapWritable(bytes: total)
        free = Array(repeating: true, count: settings.bufferCount)
        sendBuffer = Array(repeating: 0, count: IPCProtocol.maxMessageBytes)
        counter = settings.firstCounter
    }

    static func say(_ text: String) {
        var line = "rtcshare-producer: \(text)\n"
        line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// Forgets the connection and retries after a pause.
    private func drop(_ why: String) {
        say(why)
        connection = nil
        welcomed = false
        nextAttempt = MonotonicClock.now() + Self.retryInterval
    }

    private func say(_ text: String) {
        if !settings.quiet { Self.say(text) }
    }

    func run() throws {
        let start = MonotonicClock.now()
        let end = settings.duration.map { start + $0 }
        let frameInterval = MediaDuration.frameInterval(framesPerSecond: settings.framesPerSecond)
        let audioInterval = MediaDuration.milliseconds(20)
        var nextFrame = start, nextAudio = start
        nextAttempt = start
        var connectedAt = start
        var waitingSaid = false
        var received = [UInt8](repeating: 0, count: 1024)

        while true {
            var now = MonotonicClock.now()
            if let end, now >= end { break }

            if connection == nil {
                if now >= nextAttempt {
                    do {
                        let c = try IPCConnection.connect(to: settings.socket)
                        connection = consume c
                        connectedAt = now
                        welcomed = false
                        waitingSaid = false
                        // If this fails, rtcshare has closed already; its BYE (why) is
                        // still to be read below.
                        _ = send(.hello(IPCHello(name: settings.name)), on: connection!)
                    } catch {
                        if !waitingSaid { say("waiting for rtcshare at \(settings.socket) (\(error))") }
                        waitingSaid = true
                        nextAttempt = now + Self.retryInterval
                    }
                }
                if connection == nil {
                    var wake = nextAttempt
                    if let end, end < wake { wake = end }
                    MonotonicClock.sleep(until: wake)
                    continue
                }
            }

            // Replies: WELCOME, RELEASE, BYE.
            var descriptors = ReceivedDescriptors()
            receiving: while connection != nil {
                let result = received.withUnsafeMutableBytes { connection!.receive(into: $0, descriptors: &descriptors) }
                switch result {
                case .nothing:
                    break receiving
                case .closed:
                    drop("rtcshare closed the connection; reconnecting")
                case .truncated, .failed:
                    drop("bad reply from rtcshare (\(result)); reconnecting")
                case .message(let n):
                    let message = received.withUnsafeBytes { raw in
                        try? IPCMessage.parse(UnsafeRawBufferPointer(rebasing: raw[..<n]))
                    }
                    switch message {
                    case .welcome(let w)?:
                        welcomed = true
                        connections += 1
                        for i in free.indices { free[i] = true }
                        say("connected to \(settings.socket) (rtcshare takes up to \(w.maxWidth)x\(w.maxHeight)); "
                            + "sending \(settings.format.rawValue) \(layout.width)x\(layout.height) tagged \(settings.orientation.rawValue)")
                        let table = IPCBuffers.uniform(count: settings.bufferCount, length: UInt64(layout.bufferBytes))
                        if !send(.buffers(table), on: connection!, passing: memory.descriptor) {
                            drop("could not send BUFFERS; reconnecting")
                        }
                    case .release(let r)?:
                        if Int(r.bufferID) < free.count { free[Int(r.bufferID)] = true }
                    case .bye(let b)? where b.reason == .frameTooLarge || b.reason == .unsupportedVersion:
                        // Trying again would only be refused again.
                        throw ProducerError("rtcshare said BYE (\(b.reason)): \(b.text)")
                    case .bye(let b)?:
                        drop("rtcshare said BYE (\(b.reason)): \(b.text); retrying")
                    default:
                        drop("unexpected reply from rtcshare; reconnecting")
                    }
                }
            }
            guard connection != nil else { continue }
            now = MonotonicClock.now()
            if !welcomed {
                if now - connectedAt > .seconds(2) { drop("no WELCOME from rtcshare; reconnecting") }
                MonotonicClock.sleep(until: now + .milliseconds(5))
                continue
            }

            if now >= nextFrame {
                sendFrame(on: connection!, now: now, elapsed: now - start)
                repeat { nextFrame += frameInterval } while nextFrame <= now
            }
            if settings.toneHz != nil {
                while nextAudio <= now, connection != nil {
                    sendAudio(on: connection!, pts: nextAudio)
                    nextAudio += audioInterval
                }
            }

            var wake = min(nextFrame, settings.toneHz != nil ? nextAudio : nextFrame)
            if let end, end < wake { wake = end }
            _ = IPCPoll.wait(connection?.descriptor ?? -1, -1, until: wake)
        }

        if connection != nil {
            // The socket may be full of frames rtcshare has not read yet (a busy machine): retry
            // for half a second so the BYE is not lost and the close is not taken for a crash.
            let giveUp = MonotonicClock.now() + .milliseconds(500)
            while !send(.bye(IPCBye(reason: .done, text: "duration reached")), on: connection!),
                  MonotonicClock.now() < giveUp {
                MonotonicClock.sleep(until: MonotonicClock.now() + .milliseconds(10))
            }
            connection = nil
        }
        say("done: \(framesSent) frames sent (\(framesSkipped) skipped, no free buffer), "
            + "\(audioFramesSent / (settings.audioRate / Self.audioMessagesPerSecond)) audio messages, \(connections) connections")
    }

    /// Renders the next picture into a released buffer and names it in a FRAME.
    private func sendFrame(on connection: borrowing IPCConnection, now: MediaTime, elapsed: MediaDuration) {
        guard let id = free.firstIndex(of: true) else {
            framesSkipped += 1
            return
        }
        do {
            var upright = try uprightPool.acquire(format: .i420, width: settings.size.width, height: settings.size.height)
            upright.withMutablePixels {
                pattern.render(into: $0, counter: counter, captureMicros: UInt64(now.microseconds),
                               elapsedMicros: elapsed.microseconds)
            }
            let target = mapping.base + id * layout.bufferBytes
            if let turnedPool, let turner {
                var turned = try turnedPool.acquire(format: .i420, width: layout.width, height: layout.height)
                try turner.apply(upright, into: &turned, orientation: settings.orientation.inverse)
                turned.withPixels { layout.write($0, to: target) }
            } else {
                upright.withPixels { layout.write($0, to: target) }
            }
        } catch {
            Self.say("error: rendering a frame: \(error)")
            return
        }
        let frame = IPCFrame(bufferID: UInt32(id), format: layout.format.pixelFormat, orientation: settings.orientation,
                             width: UInt32(layout.width), height: UInt32(layout.height),
                             ptsMicroseconds: now.microseconds, strides: layout.strides, offsets: layout.offsets)
        if send(.frame(frame), on: connection) {
            free[id] = false
            counter &+= 1
            framesSent += 1
        } else {
            framesSkipped += 1
        }
    }

    /// One 20 ms AUDIO message of the tone, generated straight into the send buffer.
    private func sendAudio(on connection: borrowing IPCConnection, pts: MediaTime) {
        guard let hz = settings.toneHz else { return }
        let frames = settings.audioRate / Self.audioMessagesPerSecond, channels = settings.audioChannels
        let rate = Double(settings.audioRate)
        let audio = IPCAudio(sampleRate: UInt32(settings.audioRate), channels: UInt16(channels),
                             bigEndian: settings.bigEndianAudio, frames: UInt32(frames), ptsMicroseconds: pts.microseconds)
        let message = IPCMessage.audio(audio)
        let first = audioFramesSent
        let bigEndian = settings.bigEndianAudio
        let ok = sendBuffer.withUnsafeMutableBytes { raw -> Bool in
            let pcm = raw.baseAddress! + IPCAudio.pcmOffset
            for i in 0..<frames {
                let t = Double(first + i) / rate
                let sample = Int16(sin(2 * Double.pi * hz * t) * 0.25 * 32767)
                let bits = bigEndian ? UInt16(bitPattern: sample).bigEndian : UInt16(bitPattern: sample).littleEndian
                for c in 0..<channels { pcm.storeBytes(of: bits, toByteOffset: (i * channels + c) * 2, as: UInt16.self) }
            }
            guard let n = try? message.write(into: raw) else { return false }
            return connection.send(UnsafeRawBufferPointer(rebasing: raw[..<n])) == .sent
        }
        if ok { audioFramesSent += frames }
    }

    private func send(_ message: IPCMessage, on connection: borrowing IPCConnection, passing fd: Int32 = -1) -> Bool {
        sendBuffer.withUnsafeMutableBytes { raw -> Bool in
            guard let n = try? message.write(into: raw) else { return false }
            return connection.send(UnsafeRawBufferPointer(rebasing: raw[..<n]), passing: fd) == .sent
        }
    }
}

/// A failure that ends the producer: one line.
struct ProducerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
