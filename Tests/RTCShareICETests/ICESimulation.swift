import RTCShareCore
@testable import RTCShareICE
import TestSupport

/// Two agents in one process over a simulated link: a fake clock, fixed one-way latency and
/// seeded loss, so a run replays exactly. Every datagram either agent sends crosses the link;
/// `blackhole` drops everything (a peer that went away).
struct ICESimulation {
    typealias Agent = ICEAgent<SeededRandom>
    struct Datagram {
        var toA: Bool
        var bytes: [UInt8]
        var from: ICEAddress
    }

    var a: Agent
    var b: Agent
    var now = ICETime.zero
    /// Both directions share one link, 10 ms each way, so a seed's draws follow the order
    /// the agents sent in.
    var link: LossyLink<Datagram>
    var eventsA: [(ICETime, ICEEvent)] = []
    var eventsB: [(ICETime, ICEEvent)] = []
    var blackhole: Bool {
        get { link.isDown }
        set { link.isDown = newValue }
    }
    /// Datagrams the link lost or could deliver nowhere.
    var dropped = 0
    static let addressA = try! ICEAddress(parsing: "10.0.0.1:5000")
    static let addressB = try! ICEAddress(parsing: "10.0.0.2:6000")

    /// A controlling A and controlled B (unless `roleB` says otherwise), each with one host
    /// candidate; B also advertises an address nobody answers on, a pair that must fail.
    init(seed: UInt64, loss: Double = 0, roleB: ICERole = .controlled, configure: (inout ICEConfiguration) -> Void = { _ in }) {
        var ca = ICEConfiguration()
        configure(&ca)
        var cb = ca
        ca.role = .controlling
        cb.role = roleB
        a = Agent(configuration: ca, random: SeededRandom(seed: seed))
        b = Agent(configuration: cb, random: SeededRandom(seed: seed &+ 1))
        link = LossyLink(delay: .milliseconds(10), loss: .probability(loss), seed: seed &+ 2)
        let hostA = a.addHostCandidate(Self.addressA)
        let hostB = b.addHostCandidate(Self.addressB)
        a.setRemoteCredentials(b.localCredentials)
        b.setRemoteCredentials(a.localCredentials)
        _ = try! a.addRemoteCandidate(sdpAttribute: "a=" + hostB.sdpAttribute)
        _ = try! a.addRemoteCandidate(sdpAttribute: "a=candidate:9 1 udp 1694498815 192.0.2.99 7000 typ srflx raddr 10.0.0.2 rport 6000")
        _ = try! b.addRemoteCandidate(sdpAttribute: hostA.sdpAttribute)
        a.start(at: now)
        b.start(at: now)
        drain()
    }

    /// Moves datagrams from the agents' outputs onto the link, and collects events.
    mutating func drain() {
        var buffer = [UInt8](repeating: 0, count: Agent.maximumMessageSize)
        for side in [true, false] {
            while true {
                let t = buffer.withUnsafeMutableBytes { side ? a.pollTransmit(into: $0) : b.pollTransmit(into: $0) }
                guard let t else { break }
                if link.losesNext() {
                    dropped += 1
                    continue
                }
                // Only A's and B's host addresses are reachable.
                guard t.destination == Self.addressA || t.destination == Self.addressB else {
                    dropped += 1
                    continue
                }
                link.carry(Datagram(toA: t.destination == Self.addressA, bytes: Array(buffer[..<t.count]), from: t.source),
                           from: now)
            }
            while let e = side ? a.pollEvent() : b.pollEvent() {
                if side { eventsA.append((now, e)) } else { eventsB.append((now, e)) }
            }
        }
    }

    /// Hands a datagram to A as if it arrived from `from`.
    mutating func inject(toA bytes: [UInt8], from: ICEAddress) {
        _ = bytes.withUnsafeBytes { a.handle($0, from: from, at: now) }
        drain()
    }

    /// Runs until `end`, always jumping to the earliest deadline or delivery.
    mutating func run(until end: ICETime) {
        while true {
            var next = end
            if let t = a.nextDeadline, t < next { next = t }
            if let t = b.nextDeadline, t < next { next = t }
            if let t = link.nextArrival, t < next { next = t }
            if next > end { break }
            now = max(now, next)
            for d in link.arrivals(until: now) {
                _ = d.bytes.withUnsafeBytes { raw in
                    d.toA ? a.handle(raw, from: d.from, at: now) : b.handle(raw, from: d.from, at: now)
                }
            }
            a.tick(at: now)
            b.tick(at: now)
            drain()
            if now >= end { break }
        }
        now = end
    }

    func connected(_ events: [(ICETime, ICEEvent)]) -> (ICETime, ICESelectedPair)? {
        for (t, e) in events { if case .connected(let p) = e { return (t, p) } }
        return nil
    }
}
