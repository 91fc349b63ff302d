import RTCShareCore
@testable import RTCShareICE
import RTCShareImpairment
import TestSupport

/// Two agents in one process over a simulated link (`ImpairedPath`, the relay's model): a fake
/// clock, fixed one-way latency and seeded loss, so a run replays exactly. Every datagram either
/// agent sends crosses the link; `blackhole` drops everything (a peer that went away).
struct ICESimulation {
    typealias Agent = ICEAgent<SeededRandom>
    struct Datagram {
        var to: ICEAddress
        var bytes: [UInt8]
        var from: ICEAddress
    }

    var a: Agent
    var b: Agent
    var now = ICETime.zero
    /// Both directions share one link, 10 ms each way, so a seed's draws follow the order
    /// the agents sent in.
    var link: ImpairedPath<Datagram, SeededRandom>
    var eventsA: [(ICETime, ICEEvent)] = []
    var eventsB: [(ICETime, ICEEvent)] = []
    /// Everything sent is lost before the link (it draws nothing for it).
    var blackhole = false
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
        var way = ImpairmentProfile()
        way.delay = .milliseconds(10)
        way.lossPercent = loss * 100
        link = ImpairedPath(profile: way, random: SeededRandom(seed: seed &+ 2))
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
                if blackhole {
                    dropped += 1
                    continue
                }
                // The link decides first (a draw for every datagram, reachable or not); only A's
                // and B's host addresses are reachable, what goes elsewhere is dropped on arrival.
                let fate = link.submit(Datagram(to: t.destination, bytes: Array(buffer[..<t.count]), from: t.source),
                                       bytes: t.count, at: now)
                if fate == .lost || !(t.destination == Self.addressA || t.destination == Self.addressB) {
                    dropped += 1
                }
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
            if let t = link.nextRelease, t < next { next = t }
            if next > end { break }
            now = max(now, next)
            var arrived: [Datagram] = []
            link.release(until: now) { arrived.append($0) }
            for d in arrived {
                _ = d.bytes.withUnsafeBytes { raw in
                    if d.to == Self.addressA {
                        _ = a.handle(raw, from: d.from, at: now)
                    } else if d.to == Self.addressB {
                        _ = b.handle(raw, from: d.from, at: now)
                    }
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
