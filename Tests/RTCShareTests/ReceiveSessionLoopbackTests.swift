import Foundation
import Glibc
import RTCShare
import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP
import RTCShareReceive
import TestSupport
import Testing

/// The built-in receiver over real loopback sockets and real SRTP: a test sender encodes
/// stamped frames (VP8), packetizes them (RFC 7741), protects and sends them to a running
/// `ReceiveSession`, deliberately loses one packet, and reads the receiver's RTCP from its own
/// socket: the NACK for that packet, and a PLI when it is never resent.
@Suite(.serialized) struct ReceiveSessionLoopbackTests {
    static let width = 320, height = 240

    /// Plays the sender: socket, SRTP both ways, encoder, packetizer, and the SRTP bytes of
    /// every packet sent (for resending).
    final class TestSender {
        let socket: UDPSocket
        let receiver: SocketAddress
        var protect: SRTPContext
        var unprotect: SRTPContext
        var encoder: VP8Encoder
        let pool: FramePool
        var stream = RTPStream(ssrc: 0x1234_5678, payloadType: 96, clockRate: 90_000,
                               initialSequenceNumber: 65_530, timestampOffset: 1000)
        var packetizer = VP8Packetizer(initialPictureID: 5)
        var sent: [UInt16: [UInt8]] = [:]
        /// The plain RTP of every packet sent (to wrap in RTX).
        var plain: [UInt16: [UInt8]] = [:]
        var rtx = RTXPacketizer(ssrc: 0x0BAD_F00D, payloadType: 97, initialSequenceNumber: 7)
        /// Send plain RTP (for a receiver started with no key).
        var insecure = false
        /// What the receiver sent back, parsed.
        var nacked: [UInt16] = []
        var plis = 0
        var receiverReports = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        let encoded = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)

        init(key: SRTPMasterKey, receiver: SocketAddress) throws {
            socket = try UDPSocket(bindingTo: SocketAddress(parsing: "127.0.0.1:1").with(port: 0))
            self.receiver = receiver
            protect = try SRTPContext(key: key, direction: .sender)
            unprotect = try SRTPContext(key: key, direction: .receiver)
            var c = VP8Encoder.Configuration(width: width, height: height, bitrateKbps: 800)
            c.frameRate = 30
            c.frameDropThreshold = 0  // every frame encoded: the marker counters have no gaps
            encoder = try VP8Encoder(c)
            let budget = try MemoryBudget(capBytes: 4 << 20, prefault: false)
            pool = try FramePool(budget: budget, format: .i420, maxWidth: width, maxHeight: height, count: 2)
        }

        deinit {
            buffer.deallocate()
            encoded.deallocate()
        }

        /// Encodes frame `index` (marker counter = index, capture time = now) and sends its
        /// packets, each at most 200 bytes so a frame spans several; with `dropMiddle` its
        /// middle packet is kept but not sent, and its sequence number returned.
        @discardableResult
        func sendFrame(_ index: Int, dropMiddle: Bool = false) throws -> UInt16? {
            var slot = try pool.acquire(format: .i420, width: width, height: height)
            slot.ptsMicroseconds = Int64(index) * 33_333
            let now = MonotonicClock.now().microseconds
            slot.withMutablePixels { px in
                let y = px.plane(0)
                // A moving bar so frames differ, and the marker.
                y.fill(90)
                for r in 0..<y.rows {
                    let row = y.row(r)
                    for x in 0..<16 { row[(index * 8 + x) % y.rowBytes] = 200 }
                }
                // Texture that changes every frame (below the marker), so delta frames are
                // large enough to span several packets.
                var h = UInt32(truncatingIfNeeded: index &* 2_654_435_761)
                for r in 64..<128 {
                    let row = y.row(r)
                    for x in 32..<96 {
                        h = h &* 1_103_515_245 &+ 12_345
                        row[x] = UInt8(truncatingIfNeeded: h >> 24)
                    }
                }
                px.plane(1).fill(128)
                px.plane(2).fill(128)
                FrameMarker.stamp(counter: UInt32(index), captureMicros: UInt64(now), luma: y.row(0).baseAddress!,
                                  stride: y.stride, width: y.rowBytes, rows: y.rows)
            }
            guard let info = try encoder.encode(slot, into: encoded) else { return nil }
            let frame = UnsafeRawBufferPointer(rebasing: encoded[0..<info.byteCount])
            let plan = try packetizer.beginFrame(byteCount: info.byteCount, maxPayloadSize: 200)
            let payload = UnsafeMutableRawBufferPointer.allocate(byteCount: 400, alignment: 16)
            defer { payload.deallocate() }
            #expect(!dropMiddle || plan.packetCount >= 3, "the frame to lose a packet of should span several")
            var dropped: UInt16? = nil
            for i in 0..<plan.packetCount {
                let p = try plan.writePayload(ofPacket: i, frame: frame, into: payload)
                let seq = stream.nextSequenceNumber
                let n = try stream.writePacket(into: buffer, timestamp: UInt32(index * 3000), marker: plan.isLast(i),
                                               payload: UnsafeRawBufferPointer(rebasing: payload[0..<p]))
                plain[seq] = Array(buffer[0..<n])
                let m = insecure ? n : try protect.protectRTP(buffer, length: n)
                sent[seq] = Array(buffer[0..<m])
                if dropMiddle && i == plan.packetCount / 2 {
                    dropped = seq
                } else {
                    _ = socket.send(UnsafeRawBufferPointer(rebasing: buffer[0..<m]), to: receiver)
                }
            }
            return dropped
        }

        /// Sends the saved SRTP bytes of `seq` again.
        func resend(_ seq: UInt16) {
            guard let bytes = sent[seq] else { return }
            _ = bytes.withUnsafeBytes { socket.send($0, to: receiver) }
        }

        /// Sends `seq` again on the RTX stream (RFC 4588): OSN + original payload, new SSRC.
        func resendAsRTX(_ seq: UInt16) throws {
            guard let original = plain[seq] else { return }
            let n = try original.withUnsafeBytes { try rtx.write(original: $0, into: buffer) }
            let m = try protect.protectRTP(buffer, length: n)
            _ = socket.send(UnsafeRawBufferPointer(rebasing: buffer[0..<m]), to: receiver)
        }

        /// Reads the receiver's RTCP for up to `wait` µs; calls `onNack` per NACKed number.
        func readFeedback(wait: Int64, onNack: (UInt16) -> Void = { _ in }) throws {
            let end = MonotonicClock.now().microseconds + wait
            while true {
                let left = end - MonotonicClock.now().microseconds
                guard left > 0 else { return }
                guard socket.waitReadable(timeoutMicroseconds: left) else { continue }
                while case .datagram(let count, _) = socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<2048])) {
                    #expect((192...223).contains(buffer[1]), "the receiver sends only RTCP")
                    let n = try unprotect.unprotectRTCP(buffer, length: count)
                    let items = try RTCPParser.items(Array(buffer[0..<n]))
                    for item in items {
                        switch item {
                        case .nack(_, let media, let entry):
                            #expect(media == stream.ssrc)
                            entry.forEachLost { seq in
                                nacked.append(seq)
                                onNack(seq)
                            }
                        case .pictureLoss(_, let media):
                            #expect(media == stream.ssrc)
                            plis += 1
                            _ = encoder.requestKeyframe(nowMicroseconds: MonotonicClock.now().microseconds)
                        case .receiverReport:
                            receiverReports += 1
                        default:
                            break
                        }
                    }
                }
            }
        }
    }

    /// Runs the session's loop on its own thread; `finish` stops it and returns the report.
    final class Running: @unchecked Sendable {
        let session: ReceiveSession
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<ReceiveReport, ShareError>?

        init(_ session: ReceiveSession) {
            self.session = session
            let thread = Thread { [self] in
                do throws(ShareError) { result = .success(try session.run()) } catch { result = .failure(error) }
                done.signal()
            }
            thread.start()
        }

        func finish() throws -> ReceiveReport {
            session.stop()
            done.wait()
            return try result!.get()
        }
    }

    static func makeSession(insecure: Bool = false, rtx: Bool = false) throws -> (ReceiveSession, SRTPMasterKey) {
        let key = SRTPMasterKey.generate(profile: .aesCM128HmacSHA1_80)
        var c = ReceiveConfiguration(videoListen: try SocketAddress(parsing: "127.0.0.1:1").with(port: 0),
                                     protection: insecure ? nil : key)
        if rtx {
            c.rtxPayloadType = 97
            c.videoSSRC = 0x1234_5678
            c.rtxSSRC = 0x0BAD_F00D
        }
        c.audioListen = nil
        c.durationMicroseconds = 10_000_000
        c.reportIntervalMicroseconds = 200_000
        return (try ReceiveSession(configuration: c), key)
    }

    @Test func lostPacketIsNackedAndTheFrameRecoveredWhenResent() throws {
        let (session, key) = try Self.makeSession()
        let running = Running(session)
        let sender = try TestSender(key: key, receiver: session.videoAddress)
        var dropped: UInt16? = nil
        for i in 0..<10 {
            // Lose the middle packet of frame 4 (a delta frame).
            if i == 4 {
                dropped = try sender.sendFrame(i, dropMiddle: true)
            } else {
                try sender.sendFrame(i)
            }
            try sender.readFeedback(wait: 33_000) { seq in
                if seq == dropped { sender.resend(seq) }
            }
        }
        try sender.readFeedback(wait: 300_000)
        let report = try running.finish()
        #expect(sender.nacked.first == dropped)
        #expect(report.packetsNacked == 1)
        #expect(report.packetsRecovered == 1)
        #expect(report.packetsLost == 0)
        #expect(report.frames == 10)
        #expect(report.framesLost == 0)
        #expect(report.plis == 0 && sender.plis == 0)
        #expect(report.markersUnreadable == 0)
        #expect(report.latencyP50Microseconds != nil)
        #expect(sender.receiverReports >= 1)
        #expect(report.summaryLine.hasPrefix("rtcshare receive: frames 10 lost 0 skipped 0 repeated 0 out-of-order 0 freezes 0"))
    }

    @Test func lostPacketResentOnTheRTXStreamIsUnwrappedAndRecovered() throws {
        let (session, key) = try Self.makeSession(rtx: true)
        let running = Running(session)
        let sender = try TestSender(key: key, receiver: session.videoAddress)
        var dropped: UInt16? = nil
        for i in 0..<8 {
            if i == 3 {
                dropped = try sender.sendFrame(i, dropMiddle: true)
            } else {
                try sender.sendFrame(i)
            }
            try sender.readFeedback(wait: 33_000) { seq in
                if seq == dropped { try? sender.resendAsRTX(seq) }
            }
        }
        try sender.readFeedback(wait: 300_000)
        let report = try running.finish()
        #expect(sender.nacked.first == dropped)
        #expect(report.packetsRecovered == 1)
        #expect(report.packetsLost == 0)
        #expect(report.frames == 8 && report.framesLost == 0 && report.plis == 0)
    }

    @Test func packetNeverResentEndsInAPictureLossIndication() throws {
        let (session, key) = try Self.makeSession()
        let running = Running(session)
        let sender = try TestSender(key: key, receiver: session.videoAddress)
        var dropped: UInt16? = nil
        // 24 frames (0.8 s): before any round trip is known the hole is waited for up to the
        // maximum wait (320 ms), then the PLI's keyframe must still come before the end.
        for i in 0..<24 {
            if i == 4 {
                dropped = try sender.sendFrame(i, dropMiddle: true)
            } else {
                try sender.sendFrame(i)
            }
            try sender.readFeedback(wait: 33_000)
        }
        try sender.readFeedback(wait: 300_000)
        let report = try running.finish()
        #expect(sender.nacked.contains(dropped!))
        #expect(sender.plis >= 1)
        #expect(report.plis >= 1)
        #expect(report.packetsLost == 1)
        #expect(report.packetsRecovered == 0)
        #expect(report.framesIncomplete >= 1)
        // The keyframe the PLI asked for restarts decoding: the last frames decode again.
        #expect(report.keyframes >= 2)
        #expect(report.frames >= 6 && report.frames < 24)
        // Every frame sent is either decoded or counted lost (given up, or undecodable until the
        // keyframe).
        #expect(report.framesLost >= 1)
        #expect(report.frames + report.framesLost == 24)
    }

    /// Untrusted datagrams: random bytes, RTCP-looking bytes and mutated copies of real VP8
    /// packets, to a receiver without SRTP (so they reach the RTP, RTCP and VP8 parsers and
    /// libvpx): nothing traps, the bad ones are counted, and real frames still decode.
    @Test func mutatedAndRandomDatagramsAreCountedNeverFatal() throws {
        let (session, key) = try Self.makeSession(insecure: true)
        let running = Running(session)
        let sender = try TestSender(key: key, receiver: session.videoAddress)
        sender.insecure = true
        var random = SeededRandom(seed: 0x5EED)
        func next() -> UInt64 { random.next() >> 33 }
        for i in 0..<20 {
            try sender.sendFrame(i)
            for _ in 0..<20 {
                var bytes: [UInt8]
                switch next() % 3 {
                case 0:
                    bytes = (0..<Int(next() % 300)).map { _ in UInt8(truncatingIfNeeded: next()) }
                case 1:
                    bytes = (0..<Int(4 + next() % 60)).map { _ in UInt8(truncatingIfNeeded: next()) }
                    bytes[0] = 0x80 | UInt8(next() % 32)
                    bytes[1] = UInt8(192 + next() % 32)
                default:
                    let all = Array(sender.sent.values)
                    bytes = all[Int(next() % UInt64(all.count))]
                    for _ in 0..<(1 + next() % 4) where !bytes.isEmpty {
                        bytes[Int(next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: next())
                    }
                    if next() % 4 == 0 { bytes.removeLast(Int(next() % UInt64(bytes.count + 1))) }
                }
                _ = bytes.withUnsafeBytes { sender.socket.send($0, to: session.videoAddress) }
            }
            // Drain whatever the receiver sent back (plain RTCP here).
            while case .datagram = sender.socket.receive(into: sender.buffer) {}
            // Paced on purpose, 400 datagrams a second: a sender the receiver keeps up with, so
            // the socket's buffer never overflows and every datagram reaches the parsers.
            usleep(5_000)
        }
        // Stopped once the receiver has read everything sent (its socket's queue is empty).
        #expect(waitUntil(timeout: 5) { Tools.udpReceiveQueueBytes(port: session.videoAddress.port) == 0 })
        let report = try running.finish()
        #expect(report.malformed + report.framesIncomplete + report.framesUndecodable + report.packetsDuplicate > 0)
        #expect(report.frames >= 1)
    }
}
