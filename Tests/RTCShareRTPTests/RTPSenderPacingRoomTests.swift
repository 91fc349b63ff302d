import RTCShareCore
@testable import RTCShareRTP
import Testing

/// How much the sender's pacer may hold: a packet waits only while the packet history still
/// holds it (it is sent from there). One rule bounds the queue — the next store would evict the
/// oldest queued packet, by the history's bytes or by its index — and the packets it sends go
/// ahead of their turn, oldest first, each once. Real SRTP, the receive core, fake time.
@Suite struct RTPSenderPacingRoomTests {
    typealias Simulation = RTPSenderSimulationTests.Simulation

    /// The video RTP sequence numbers put on the wire (first sends and resends alike), read from
    /// the clear header of each SRTP datagram, in order; the datagrams go on to the link.
    final class Wire {
        var videoSequences: [UInt16] = []
        let sim: Simulation
        init(_ sim: Simulation) { self.sim = sim }

        func transmit(_ bytes: UnsafeRawBufferPointer, _ route: RTPRoute) {
            if route == .videoRTP, bytes.count >= 12 {
                let ssrc = UInt32(bytes[8]) << 24 | UInt32(bytes[9]) << 16 | UInt32(bytes[10]) << 8 | UInt32(bytes[11])
                if ssrc == sim.sender.video.ssrc { videoSequences.append(UInt16(bytes[2]) << 8 | UInt16(bytes[3])) }
            }
            sim.transmit(bytes, route)
        }
    }

    /// Hands in `count` frames at one instant (no time for the pacer to let any go), each of
    /// `frameBytes` (a VP8 payload header, then the frame's index); returns what the wire got.
    func burst(_ sim: Simulation, wire: Wire, count: Int, frameBytes: Int) throws {
        let first = sim.frameIndex
        for i in first..<first + count {
            let frame = [UInt8(0x01)] + [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: frameBytes - 1)
            try frame.withUnsafeBytes { bytes in
                try sim.sender.sendVideo(bytes, mediaTimestamp: UInt32(i * 4500), orientation: .up, at: sim.now,
                                         transmit: wire.transmit)
            }
        }
        sim.frameIndex = first + count
    }

    /// Polls the sender and the receiver in 5 ms steps until the pacer is empty (at most `limit`).
    func drain(_ sim: Simulation, wire: Wire, limit: MediaDuration = .seconds(5)) {
        let end = sim.now + limit
        while sim.now < end {
            sim.sender.poll(at: sim.now, transmit: wire.transmit)
            sim.forward.release(until: sim.now) { _ = sim.receiver.receive($0, at: sim.now) }
            sim.receiver.core.poll(at: sim.now, output: sim.receiver)
            if sim.sender.pacerState.queuedPackets == 0 { break }
            sim.now = sim.now + .milliseconds(5)
        }
    }

    /// Sequence numbers `count` on from `start`, wrapping.
    func run(from start: UInt16, count: Int) -> [UInt16] { (0..<count).map { start &+ UInt16($0) } }

    /// A share 300 ms in, then 100 ms of quiet (the pacer empty, the history still full), paced
    /// at 2.5 × 100 kbit/s from now: the simulation, its wire, and the next video sequence number.
    func pacedAfterQuiet(historyBytes: Int, seed: UInt64) throws -> (Simulation, Wire, UInt16) {
        let sim = try Simulation(loss: 0, historyBytes: historyBytes, seed: seed)
        try sim.run(for: .milliseconds(300))
        sim.now = sim.now + .milliseconds(100)
        let wire = Wire(sim)
        sim.sender.setTargetBitrate(kbps: 100, maximumKbps: 2500, at: sim.now)
        return (sim, wire, sim.sender.video.nextSequenceNumber)
    }

    @Test func aBurstLargerThanTheHistorySendsItsOldestQueuedPacketsEarlyInOrderEachOnce() throws {
        // A 16 KiB history, 6 KB frames in 1200-byte packets paced at 2.5 × 100 kbit/s: eight
        // frames at once (~48 KB) are three times what the history holds.
        let (sim, wire, start) = try pacedAfterQuiet(historyBytes: 16 << 10, seed: 41)
        let pacedBefore = sim.sender.stats.packetsPaced
        try burst(sim, wire: wire, count: 8, frameBytes: 6000)
        let made = sim.sender.stats.packetsPaced - pacedBefore
        let early = sim.sender.stats.pacedSentEarly
        let queued = sim.sender.pacerState.queuedPackets
        // Nothing could leave by the pacer's rate at that instant: what went, went early, and it
        // is exactly the oldest of the burst, in order; the rest waits, no more than the history
        // holds: their records (the packet before SRTP's tag, plus a 2-byte length) fit 16 KiB.
        #expect(made >= 40, "\(made) packets")
        #expect(early > 0 && early + queued == made, "\(early) early + \(queued) queued of \(made)")
        #expect(wire.videoSequences == run(from: start, count: early), "sent early: the oldest, in order")
        let tag = SRTPProfile.aesCM128HmacSHA1_80.rtpTrailerBytes
        #expect(sim.sender.pacerState.queuedBytes - queued * (tag - 2) <= 16 << 10)
        #expect(sim.sender.pacerState.oldestQueued == start &+ UInt16(early))
        drain(sim, wire: wire)
        #expect(sim.sender.pacerState.queuedPackets == 0)
        #expect(sim.sender.stats.pacedSentEarly == early, "counted once, and not again while draining")
        #expect(sim.sender.stats.pacedPacketsExpired == 0, "none lost")
        #expect(wire.videoSequences == run(from: start, count: made), "every packet once, in order")
        sim.now = sim.now + .milliseconds(50)
        drain(sim, wire: wire, limit: .milliseconds(5))
        for i in sim.frameIndex - 8..<sim.frameIndex { #expect(sim.receiver.holds(frame: i), "frame \(i) arrived whole") }
    }

    @Test func aBurstLargerThanTheOldFixedRingWaitsWholeInALargeHistory() throws {
        // A 2 MiB history indexes 8192 packets: 1500 small packets (one 40-byte frame each, ~120
        // KB) all fit, so all wait and are paced, none sent early (a fixed 1024-packet ring used
        // to send 476 of them at once).
        let (sim, wire, start) = try pacedAfterQuiet(historyBytes: 2 << 20, seed: 42)
        let framesBefore = sim.receiver.frames.count
        try burst(sim, wire: wire, count: 1500, frameBytes: 40)
        #expect(sim.sender.pacerState.capacity == PacketHistory.defaultMaxPackets(capacityBytes: 2 << 20))
        #expect(sim.sender.pacerState.queuedPackets == 1500)
        #expect(sim.sender.stats.pacedSentEarly == 0 && wire.videoSequences.isEmpty)
        drain(sim, wire: wire)
        #expect(sim.sender.pacerState.queuedPackets == 0)
        #expect(sim.sender.stats.pacedPacketsExpired == 0 && sim.sender.stats.pacedSentEarly == 0)
        #expect(wire.videoSequences == run(from: start, count: 1500), "every packet once, in order")
        sim.now = sim.now + .milliseconds(50)
        drain(sim, wire: wire, limit: .milliseconds(5))
        #expect(sim.receiver.frames.count - framesBefore == 1500, "every frame handed out")
    }

    @Test func manySmallPacketsAreBoundedByTheHistorysIndexThroughTheSameRule() throws {
        // A 64 KiB history indexes 256 packets; 1500 small ones (~80 bytes on the wire, ~120 KB)
        // run out of index long before bytes. The 257th would take the oldest's index slot, so
        // from there each store sends the oldest first: 1500 - 256 early, 256 paced, none lost.
        let (sim, wire, start) = try pacedAfterQuiet(historyBytes: 64 << 10, seed: 43)
        let index = PacketHistory.defaultMaxPackets(capacityBytes: 64 << 10)
        try burst(sim, wire: wire, count: 1500, frameBytes: 40)
        #expect(index == 256 && sim.sender.pacerState.capacity == index)
        #expect(sim.sender.pacerState.queuedPackets == index)
        #expect(sim.sender.stats.pacedSentEarly == 1500 - index)
        #expect(wire.videoSequences == run(from: start, count: 1500 - index), "sent early: the oldest, in order")
        drain(sim, wire: wire)
        #expect(sim.sender.stats.pacedPacketsExpired == 0, "none lost")
        #expect(sim.sender.stats.pacedSentEarly == 1500 - index, "counted once")
        #expect(wire.videoSequences == run(from: start, count: 1500), "every packet once, in order")
    }
}
