import RTCShareDTLS
import RTCShareICE
import RTCShareIO

/// The stream to a TURN server reached over TCP, or TLS over TCP (RFC 8656 §3.1, RFC 6062
/// framing): whole STUN messages and ChannelData frames go out, whole frames come back. Bounded
/// both ways: a frame that does not fit the outbox is dropped (as a full UDP send buffer drops a
/// datagram; the bytes already in it are never cut), and arriving bytes are cut into frames by
/// `TURNStreamReassembly` (an oversized frame skipped, a stream out of step broken).
final class TURNStream {
    /// Largest frame taken from the server (a relayed datagram with its framing); longer ones
    /// are skipped.
    static let maximumFrame = 4096
    /// Bytes waiting to go out at most.
    static let outboxBytes = 64 << 10
    static let inboxBytes = 16 << 10
    /// What TLS adds to a frame at most (record header, tag, padding).
    static let recordOverhead = 64

    enum Phase: Equatable {
        case connecting
        /// TCP is up; the TLS handshake runs.
        case handshaking
        case ready
        case broken(String)
    }

    let connection: TCPConnection
    /// The server's address as the TURN client and the transport know it.
    let server: ICEAddress
    private(set) var phase = Phase.connecting
    /// The handshake found the certificate wanting.
    private(set) var certificateRefused = false
    /// Frames dropped because the outbox was full.
    private(set) var droppedFrames = 0
    private let tls: TLSClientSession?
    private var inbox = TURNStreamReassembly(capacity: TURNStream.inboxBytes, maximumFrame: TURNStream.maximumFrame)
    /// Ciphertext read from the socket before TLS takes it.
    private let raw: UnsafeMutableRawBufferPointer?
    private let outbox: UnsafeMutableRawBufferPointer
    private var outStart = 0
    private var outCount = 0

    /// Connects to `address`; with `tlsHost`, TLS toward that host (its certificate checked
    /// against `caFile` or the system's store).
    init(server: ICEAddress, address: SocketAddress, tlsHost: String? = nil, caFile: String? = nil) throws(SocketError) {
        if let tlsHost {
            do { tls = try TLSClientSession(host: tlsHost, caFile: caFile) } catch { throw SocketError("TLS: \(error)") }
            raw = .allocate(byteCount: 4096, alignment: 16)
        } else {
            tls = nil
            raw = nil
        }
        connection = try TCPConnection(connectingTo: address)
        self.server = server
        outbox = .allocate(byteCount: Self.outboxBytes, alignment: 16)
    }

    deinit {
        outbox.deallocate()
        raw?.deallocate()
    }

    var descriptor: Int32 { connection.descriptor }
    var connected: Bool { phase == .ready }
    var hasPendingOutput: Bool { outCount > 0 }
    /// What the loop should wait for: writable while connecting or with output waiting.
    var wantsWrite: Bool { phase == .connecting || outCount > 0 }

    /// Once the socket is writable while connecting: the TCP connect's outcome, then the TLS
    /// handshake's first flight. The reason when it failed.
    func finishConnect() -> String? {
        if let error = connection.finishConnect() { return fail(error.description) }
        guard tls != nil else {
            phase = .ready
            return nil
        }
        phase = .handshaking
        return advanceHandshake()
    }

    private func fail(_ why: String) -> String {
        phase = .broken(why)
        return why
    }

    private func advanceHandshake() -> String? {
        guard let tls else { return nil }
        switch tls.handshake() {
        case .inProgress: break
        case .established: phase = .ready
        case .certificateRefused(let why):
            certificateRefused = true
            return fail(why)
        case .failed(let why): return fail(why)
        }
        moveCiphertext()
        return flush()
    }

    /// Queues one frame (whole or not at all) and writes what the socket takes.
    @discardableResult
    func send(_ frame: UnsafeRawBufferPointer) -> Bool {
        compactOutbox()
        guard connected, outCount + frame.count + (tls == nil ? 0 : Self.recordOverhead) <= outbox.count else {
            droppedFrames += 1
            return false
        }
        if let tls {
            guard tls.write(frame) else {
                _ = fail("TLS: \(tls.errorText)")
                return false
            }
            moveCiphertext()
            return flush() == nil
        }
        // Nothing waiting: straight to the socket; only what it does not take is queued.
        var sent = 0
        if outCount == 0 {
            let result = connection.send(frame)
            switch result {
            case .bytes(let n): sent = n
            case .wouldBlock: break
            case .closed, .failed:
                _ = broke(result)
                return false
            }
        }
        if sent < frame.count {
            (outbox.baseAddress! + outCount).copyMemory(from: frame.baseAddress! + sent, byteCount: frame.count - sent)
            outCount += frame.count - sent
        }
        return flush() == nil
    }

    /// TLS's ciphertext into the outbox.
    private func moveCiphertext() {
        guard let tls else { return }
        compactOutbox()
        while tls.pendingCiphertext > 0 {
            let n = tls.takeCiphertext(into: UnsafeMutableRawBufferPointer(rebasing: outbox[outCount...]))
            if n == 0 { break }
            outCount += n
        }
    }

    /// Writes what waits; the reason when the stream broke.
    @discardableResult
    func flush() -> String? {
        if case .broken(let why) = phase { return why }
        while outCount > 0 {
            let result = connection.send(UnsafeRawBufferPointer(rebasing: outbox[outStart..<(outStart + outCount)]))
            switch result {
            case .bytes(let n):
                outStart += n
                outCount -= n
            case .wouldBlock:
                return nil
            case .closed, .failed:
                return broke(result)
            }
        }
        outStart = 0
        return nil
    }

    /// A send or receive that closed or failed: the stream is broken, and why.
    private func broke(_ result: TCPConnection.IOResult) -> String {
        if case .failed(let error) = result { return fail(error.description) }
        return fail("closed by the server")
    }

    private func compactOutbox() {
        guard outStart > 0 else { return }
        if outCount > 0 { outbox.baseAddress!.copyMemory(from: outbox.baseAddress! + outStart, byteCount: outCount) }
        outStart = 0
    }

    /// Reads what arrived (driving the TLS handshake while it runs) and hands each whole frame
    /// to `frame` (the bytes valid during the call, with room after them); the reason when the
    /// stream closed or broke.
    func receiveFrames(_ frame: (UnsafeMutableRawBufferPointer, Int) -> Void) -> String? {
        if case .broken(let why) = phase { return why }
        guard phase != .connecting else { return nil }
        for _ in 0..<16 {
            let target = raw ?? inbox.freeSpace()
            let result = connection.receive(into: target)
            switch result {
            case .bytes(let n):
                if let why = take(n, frame) { return why }
            case .wouldBlock:
                return nil
            case .closed, .failed:
                return broke(result)
            }
        }
        return nil
    }

    /// `n` bytes just read: through TLS when there is one, then cut into frames.
    private func take(_ n: Int, _ frame: (UnsafeMutableRawBufferPointer, Int) -> Void) -> String? {
        guard let tls, let raw else {
            inbox.appended(n)
            return deliver(frame)
        }
        guard tls.feed(UnsafeRawBufferPointer(rebasing: raw[0..<n])) else { return fail("TLS: cannot take the bytes") }
        if phase == .handshaking {
            if let why = advanceHandshake() { return why }
            guard phase == .ready else { return nil }
        }
        while true {
            guard let got = tls.read(into: inbox.freeSpace()) else { return fail("TLS: \(tls.errorText)") }
            if got == 0 { break }
            inbox.appended(got)
            if let why = deliver(frame) { return why }
        }
        moveCiphertext()  // a key update or session ticket answer, if OpenSSL wrote one
        return flush()
    }

    private func deliver(_ frame: (UnsafeMutableRawBufferPointer, Int) -> Void) -> String? {
        while true {
            switch inbox.nextFrame() {
            case .frame(let bytes, let length): frame(bytes, length)
            case .needMore: return nil
            case .broken(let byte): return fail("the server's stream is out of step (byte 0x\(String(byte, radix: 16)))")
            }
        }
    }
}
