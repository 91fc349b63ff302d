// The IPC producer protocol (docs/ipc.md): IPCMessage.parse on each datagram, then the
// connection's IPCProducerStateMachine, as IPCSource drives them — a sequence of messages with
// what the socket layer saw beside each (attached descriptors, the attached file's size).
//
// Input layout, repeated (FuzzInput: reads past the end give zeros):
//   length (2 bytes BE), attached files (1 byte, & 3), file size (4 bytes BE; 0xFFFFFFFF: not a
//   regular file), then `length` bytes: one datagram.
//
// Oracles (documented in IPCMessage.swift / IPCProducerStateMachine.swift):
// - What parses writes back byte for byte ("the oracle of the fuzz test").
// - A FRAME the state machine lets through (`copyFrame`) has every plane inside its buffer and
//   the buffer inside the shared file as BUFFERS described it — the bytes IPCSource then
//   copies from shared memory.
// - `close` leaves the machine closed, and a closed machine answers only `close`.
// After a close the harness starts a new connection (a fresh machine), as IPCSource does.

import FuzzSupport
import RTCShareMedia

@main
enum FuzzIPC {
    static func main() { runLibFuzzer(fuzzIPC) }
}

/// rtcshare's default `--ipc-max-size`.
private let limits = IPCProducerStateMachine.Limits(maxWidth: 1280, maxHeight: 720)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIPC(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(fuzzBytes(data, size))
    var machine = IPCProducerStateMachine(limits: limits)
    while !input.isAtEnd {
        let length = Int(input.u16())
        let files = Int(input.u8() & 3)
        let rawFileBytes = input.u32()
        let fileBytes: Int? = rawFileBytes == UInt32.max ? nil : Int(rawFileBytes)
        let datagram = input.take(length)

        let action: IPCProducerStateMachine.Action
        do {
            let message = try IPCMessage.parse(datagram)
            checkWriteBack(message, datagram)
            action = machine.received(message, attachedFiles: files, fileBytes: fileBytes)
        } catch {
            consume(error.description)
            action = machine.receivedMalformed(error)
        }
        check(action, machine)
        if case .close = action {
            fuzzCheck(machine.state == .closed, "close returned, state \(machine.state)")
            if case .close = machine.received(.unchanged(IPCUnchanged(ptsMicroseconds: 0))) {} else {
                fuzzCheck(false, "a closed connection accepted a message")
            }
            machine = IPCProducerStateMachine(limits: limits)
        }
    }
    return 0
}

private func checkWriteBack(_ message: IPCMessage, _ datagram: UnsafeRawBufferPointer) {
    fuzzCheck(message.size == datagram.count, "\(message.type.name) of \(datagram.count) bytes has size \(message.size)")
    let out = UnsafeMutableRawBufferPointer.allocate(byteCount: max(message.size, 1), alignment: 8)
    defer { out.deallocate() }
    var pcm: UnsafeRawBufferPointer? = nil
    if case .audio(let a) = message {
        fuzzCheck(IPCAudio.pcmOffset + a.pcmBytes == datagram.count, "AUDIO samples do not fill the datagram")
        pcm = UnsafeRawBufferPointer(rebasing: datagram[IPCAudio.pcmOffset...])
    }
    do {
        let n = try message.write(into: out, pcm: pcm)
        fuzzCheck(n == datagram.count, "\(message.type.name) wrote \(n) bytes, parsed from \(datagram.count)")
        fuzzCheck(UnsafeRawBufferPointer(rebasing: out[..<n]).elementsEqual(datagram),
                  "\(message.type.name) does not write back byte for byte")
    } catch {
        fuzzCheck(false, "a parsed \(message.type.name) does not write: \(error)")
    }
}

private func check(_ action: IPCProducerStateMachine.Action, _ machine: IPCProducerStateMachine) {
    switch action {
    case .reply(let m):
        consume(m.size)
    case .adoptBuffers(let b):
        fuzzCheck(machine.state == .streaming(b), "adopted buffers but state \(machine.state)")
        fuzzCheck((1...IPCProtocol.maxBuffers).contains(b.entries.count), "\(b.entries.count) buffers adopted")
    case .copyFrame(let layout):
        guard case .streaming(let buffers) = machine.state else {
            fuzzCheck(false, "copyFrame while \(machine.state)")
            return
        }
        checkInside(layout, buffers)
    case .deliverAudio(let a):
        fuzzCheck((1...IPCProtocol.maxAudioFrames).contains(Int(a.frames)) && (a.channels == 1 || a.channels == 2),
                  "AUDIO of \(a.frames) frames x \(a.channels) channels delivered")
        consume(a.pcmBytes)
    case .alive:
        consume(1)
    case .close(let bye, let why):
        consume(why)
        if let bye { consume(bye.text) }
    }
}

/// The reads IPCSource makes for `layout` stay inside the buffer, and the buffer inside the file.
private func checkInside(_ layout: IPCFrameLayout, _ buffers: IPCBuffers) {
    let id = Int(layout.bufferID)
    fuzzCheck(id < buffers.entries.count, "frame in buffer \(id) of \(buffers.entries.count)")
    let e = buffers.entries[id]
    fuzzCheck(e.length >= 1 && e.offset <= buffers.fileBytes && e.length <= buffers.fileBytes - e.offset,
              "buffer \(id) \(e) outside \(buffers.fileBytes) bytes")
    fuzzCheck(layout.width >= IPCFrameLayout.minSide && layout.height >= IPCFrameLayout.minSide
                  && limits.fits(width: layout.width, height: layout.height),
              "frame \(layout.width)x\(layout.height) let through")
    for p in 0..<layout.planeCount {
        let plane = layout.plane(p)
        let (rowBytes, rows) = IPCFrameLayout.geometry(layout.format, plane: p, width: layout.width, height: layout.height)
        fuzzCheck(plane.rowBytes == rowBytes && plane.rows == rows && rows >= 1, "plane \(p) geometry")
        fuzzCheck(plane.stride >= plane.rowBytes, "plane \(p) stride \(plane.stride) < row \(plane.rowBytes)")
        let small = 0..<(1 << 40)
        fuzzCheck(small.contains(plane.fileOffset) && small.contains(plane.stride) && small.contains(plane.rowBytes),
                  "plane \(p) offset \(plane.fileOffset) stride \(plane.stride) row \(plane.rowBytes)")
        // Every term is below 2^40 now, so none of this overflows 64 bits.
        let start = UInt64(plane.fileOffset)
        let end = start + UInt64(plane.stride) * UInt64(rows - 1) + UInt64(plane.rowBytes)
        fuzzCheck(start >= e.offset && end <= e.offset + e.length,
                  "plane \(p) bytes \(start)..<\(end) outside buffer \(e.offset)..<\(e.offset + e.length)")
    }
}
