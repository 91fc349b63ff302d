import Glibc
import RTCShareCore
import RTCShareImpairment
import RTCShareIO
import Synchronization

/// The relay's sockets and run loop: for each stream a front socket (where the sender sends)
/// and a back socket (from which the receiver is sent to, and which it answers), one
/// `ImpairedPath` per direction, an event loop that wakes for a readable socket, the next
/// datagram due out, or `stop()`.
final class Relay: Sendable {
    struct Stream {
        let front: UDPSocket
        let back: UDPSocket
        let receiver: SocketAddress
    }

    /// A datagram in flight: the stream and the direction it belongs to, and its bytes.
    struct Datagram {
        var stream: Int
        var bytes: [UInt8]
    }

    private let streams: [Stream]
    private let profiles: (toReceiver: ImpairmentProfile, toSender: ImpairmentProfile)
    private let seed: UInt64
    private let settleAfter: MediaDuration?
    private let stopRequested = Atomic<Bool>(false)
    private let waker = Mutex<EventLoopWaker?>(nil)

    init(pairs: [(listen: SocketAddress, forward: SocketAddress)], toReceiver: ImpairmentProfile,
         toSender: ImpairmentProfile, seed: UInt64, settleAfter: MediaDuration? = nil) throws(SocketError) {
        var s: [Stream] = []
        for pair in pairs {
            let front = try UDPSocket(bindingTo: pair.listen, sendBufferBytes: 4 << 20)
            // From the receiver's own address: a receiver bound to one address answers from it.
            let back = try UDPSocket(bindingTo: SocketAddress(parsingBindAddress: "\(pair.forward.host):0"), sendBufferBytes: 4 << 20)
            s.append(Stream(front: front, back: back, receiver: pair.forward))
        }
        streams = s
        profiles = (toReceiver, toSender)
        self.seed = seed
        self.settleAfter = settleAfter
    }

    func stop() {
        stopRequested.store(true, ordering: .releasing)
        waker.withLock { $0?.wake() }
    }

    /// One direction's figures: the whole run's, and those after the settling time if given.
    typealias Figures = (whole: ImpairmentStatistics, settled: ImpairmentStatistics?)

    /// Relays until `stop()` or the duration; returns each direction's figures.
    func run(durationMicroseconds: Int64?) -> (toReceiver: Figures, toSender: Figures) {
        var toReceiver = ImpairedPath<Datagram, SplitMix64>(profile: profiles.toReceiver, random: SplitMix64(seed: seed),
                                                            settleAfter: settleAfter)
        var toSender = ImpairedPath<Datagram, SplitMix64>(profile: profiles.toSender,
                                                          random: SplitMix64(seed: seed &+ 0x5EED), settleAfter: settleAfter)
        func figures() -> (toReceiver: Figures, toSender: Figures) {
            ((toReceiver.statistics, toReceiver.settledStatistics), (toSender.statistics, toSender.settledStatistics))
        }
        guard let events = try? EventLoop() else { return figures() }
        for (i, s) in streams.enumerated() {
            try? events.watch(s.front.descriptor, token: 2 * i)
            try? events.watch(s.back.descriptor, token: 2 * i + 1)
        }
        waker.withLock { $0 = events.waker }
        defer { waker.withLock { $0 = nil } }
        var senders = [SocketAddress?](repeating: nil, count: streams.count)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { buffer.deallocate() }
        let end = durationMicroseconds.map { MonotonicClock.now().microseconds + $0 }

        while !stopRequested.load(ordering: .acquiring) {
            let now = MonotonicClock.now()
            if let end, now.microseconds >= end { break }
            toReceiver.release(until: now) { d in
                d.bytes.withUnsafeBytes { _ = streams[d.stream].back.send($0, to: streams[d.stream].receiver) }
            }
            toSender.release(until: now) { d in
                guard let to = senders[d.stream] else { return }
                d.bytes.withUnsafeBytes { _ = streams[d.stream].front.send($0, to: to) }
            }
            var wake = [toReceiver.nextRelease, toSender.nextRelease].compactMap { $0 }.min()
            if let end { wake = min(wake ?? MediaTime(microseconds: end), MediaTime(microseconds: end)) }
            events.wait(until: wake)
            for (i, s) in streams.enumerated() {
                while case .datagram(let n, let from) = s.front.receive(into: buffer) {
                    senders[i] = from
                    toReceiver.submit(Datagram(stream: i, bytes: Array(buffer[0..<n])), bytes: n, at: MonotonicClock.now())
                }
                while case .datagram(let n, _) = s.back.receive(into: buffer) {
                    toSender.submit(Datagram(stream: i, bytes: Array(buffer[0..<n])), bytes: n, at: MonotonicClock.now())
                }
            }
        }
        return figures()
    }
}
