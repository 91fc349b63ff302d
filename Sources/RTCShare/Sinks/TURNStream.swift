import RTCShareICE
import RTCShareIO

/// The stream to a TURN server reached over TCP (RFC 8656 §3.1, RFC 6062 framing): whole STUN
/// messages and ChannelData frames go out, whole frames come back. Bounded both ways: a frame
/// that does not fit the outbox is dropped (as a full UDP send buffer drops a datagram; the
/// frames already in it are never cut); arriving bytes are cut into frames by
/// `TURNStreamReassembly` (an oversized frame skipped, a stream out of step broken).
final class TURNStream {
    /// Largest frame taken from the server (a relayed datagram with its framing); longer ones
    /// are skipped.
    static let maximumFrame = 4096
    /// Bytes waiting to go out at most.
    static let outboxBytes = 64 << 10
    static let inboxBytes = 16 << 10

    let connection: TCPConnection
    /// The server's address as the TURN client and the transport know it.
    let server: ICEAddress
    private(set) var connected = false
    /// Frames dropped because the outbox was full.
    private(set) var droppedFrames = 0
    private var inbox = TURNStreamReassembly(capacity: TURNStream.inboxBytes, maximumFrame: TURNStream.maximumFrame)
    private let outbox: UnsafeMutableRawBufferPointer
    private var outStart = 0
    private var outCount = 0

    init(server: ICEAddress, address: SocketAddress) throws(SocketError) {
        connection = try TCPConnection(connectingTo: address)
        self.server = server
        outbox = .allocate(byteCount: Self.outboxBytes, alignment: 16)
    }

    deinit { outbox.deallocate() }

    var descriptor: Int32 { connection.descriptor }
    var hasPendingOutput: Bool { outCount > 0 }

    /// Once the socket is writable: the connect's outcome (nil: connected).
    func finishConnect() -> String? {
        if let error = connection.finishConnect() { return error.description }
        connected = true
        return nil
    }

    /// Queues one frame (whole or not at all) and writes what the socket takes.
    @discardableResult
    func send(_ frame: UnsafeRawBufferPointer) -> Bool {
        compactOutbox()
        guard connected, outStart + outCount + frame.count <= outbox.count else {
            droppedFrames += 1
            return false
        }
        (outbox.baseAddress! + outStart + outCount).copyMemory(from: frame.baseAddress!, byteCount: frame.count)
        outCount += frame.count
        return flush() == nil
    }

    /// Writes what waits; the error when the stream broke.
    @discardableResult
    func flush() -> String? {
        while outCount > 0 {
            switch connection.send(UnsafeRawBufferPointer(rebasing: outbox[outStart..<(outStart + outCount)])) {
            case .bytes(let n):
                outStart += n
                outCount -= n
            case .wouldBlock:
                return nil
            case .closed:
                return "closed by the server"
            case .failed(let error):
                return error.description
            }
        }
        outStart = 0
        return nil
    }

    private func compactOutbox() {
        guard outStart > 0 else { return }
        if outCount > 0 {
            (outbox.baseAddress!).copyMemory(from: outbox.baseAddress! + outStart, byteCount: outCount)
        }
        outStart = 0
    }

    /// Reads what arrived and hands each whole frame to `frame` (the bytes valid during the
    /// call, with room after them); the reason when the stream closed or broke.
    func receiveFrames(_ frame: (UnsafeMutableRawBufferPointer, Int) -> Void) -> String? {
        for _ in 0..<16 {
            switch connection.receive(into: inbox.freeSpace()) {
            case .bytes(let n):
                inbox.appended(n)
            case .wouldBlock:
                return nil
            case .closed:
                return "closed by the server"
            case .failed(let error):
                return error.description
            }
            frames: while true {
                switch inbox.nextFrame() {
                case .frame(let bytes, let length): frame(bytes, length)
                case .needMore: break frames
                case .broken(let byte): return "the server's stream is out of step (byte 0x\(String(byte, radix: 16)))"
                }
            }
        }
        return nil
    }
}
