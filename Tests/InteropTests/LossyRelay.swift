import Foundation
import RTCShareIO
import Synchronization

/// A UDP relay on loopback that loses packets on the way, as a congested link would: media
/// from the sender arrives at `front`, goes on from `back` to the receiver; what the receiver
/// sends back to `back` (its RTCP) goes to the sender's address. RTP packets towards the
/// receiver are dropped in an even pattern, `dropped` of every `outOf` (so a run is repeatable);
/// RTCP is never dropped, so the reports that describe the loss get through.
final class LossyRelay: @unchecked Sendable {
    let front: UDPSocket
    private let back: UDPSocket
    private let receiver: SocketAddress
    private let dropPattern: (dropped: Int, outOf: Int)
    private let stopFlag = Atomic<Bool>(false)
    private let counts = Mutex<(forwarded: Int, dropped: Int, feedback: Int)>((0, 0, 0))
    /// Left by the relay's thread as it leaves its loop, so `stop` (any number of times) waits
    /// for exactly that.
    private let running = DispatchGroup()
    private var thread: Thread?

    init(listenPort: Int, backPort: Int, receiver: SocketAddress, drop: (dropped: Int, outOf: Int)) throws {
        front = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: listenPort))
        back = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: backPort))
        self.receiver = receiver
        dropPattern = drop
        running.enter()
        let thread = Thread { [unowned self] in
            self.loop()
            self.running.leave()
        }
        self.thread = thread
        thread.start()
    }

    var forwarded: Int { counts.withLock { $0.forwarded } }
    var dropped: Int { counts.withLock { $0.dropped } }
    var feedback: Int { counts.withLock { $0.feedback } }

    func stop() {
        stopFlag.store(true, ordering: .releasing)
        running.wait()
    }

    deinit { stopFlag.store(true, ordering: .releasing) }

    private func loop() {
        var rtpPackets = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        var sender: SocketAddress?
        while !stopFlag.load(ordering: .acquiring) {
            var idle = true
            while case .datagram(let n, let from) = front.receive(into: buffer) {
                idle = false
                sender = from
                // RFC 5761 §4: RTCP packet types are 192...223 in the second byte.
                let isRTCP = n >= 2 && (192...223).contains(buffer[1])
                if !isRTCP {
                    rtpPackets += 1
                }
                if !isRTCP && rtpPackets % dropPattern.outOf < dropPattern.dropped {
                    counts.withLock { $0.dropped += 1 }
                    continue
                }
                _ = back.send(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), to: receiver)
                counts.withLock { $0.forwarded += 1 }
            }
            while case .datagram(let n, _) = back.receive(into: buffer) {
                idle = false
                guard let sender else { continue }
                _ = front.send(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), to: sender)
                counts.withLock { $0.feedback += 1 }
            }
            if idle { _ = front.waitReadable(timeoutMicroseconds: 1_000) }
        }
    }
}
