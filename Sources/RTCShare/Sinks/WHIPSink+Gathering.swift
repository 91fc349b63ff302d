import RTCShareCore
import RTCShareICE
import RTCShareIO
import RTCShareMedia

extension WHIPSink {
    /// Runs the ICE agent's gathering on `socket` until it completes: the agent decides what
    /// to send and when to give up (`gatheringTimeout`), this edge only moves datagrams and
    /// reads the clock. Blocks the caller (the sink is being made; no media flows yet) for at
    /// most the agent's timeout plus a margin, whatever arrives.
    static func gather(_ ice: inout ICEAgent<SystemRandomNumberGenerator>, on socket: UDPSocket) -> ServerReflexiveGathering {
        var report = ServerReflexiveGathering()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
        defer { buffer.deallocate() }
        let start = MonotonicClock.now()
        let hardStop = start + (ice.configuration.gatheringTimeout + .milliseconds(200))
        var now = start
        ice.gather(at: now)
        while true {
            while let t = ice.pollTransmit(into: buffer) {
                _ = socket.send(UnsafeRawBufferPointer(rebasing: buffer[0..<t.count]), to: socketAddress(t.destination))
            }
            while let event = ice.pollEvent() { report.note(event) }
            if ice.isGatheringComplete || now >= hardStop { break }
            let wake = ice.nextDeadline.map { min($0, hardStop) } ?? hardStop
            if socket.waitReadable(timeoutMicroseconds: (wake - now).microseconds) {
                now = MonotonicClock.now()
                for _ in 0..<64 {
                    guard case .datagram(let count, let from) = socket.receive(into: buffer) else { break }
                    guard let source = iceAddress(from),
                          ice.handle(UnsafeRawBufferPointer(rebasing: buffer[0..<min(count, buffer.count)]), from: source,
                                     at: now) else {
                        report.otherDatagrams += 1
                        continue
                    }
                }
            }
            now = MonotonicClock.now()
            ice.tick(at: now)
        }
        report.elapsedMicroseconds = (now - start).microseconds
        return report
    }
}
