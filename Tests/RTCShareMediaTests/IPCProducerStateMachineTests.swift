import RTCShareCore
import TestSupport
import Testing
@testable import RTCShareMedia

/// The per-connection protocol rules and the frame layout checks, without sockets.
@Suite struct IPCProducerStateMachineTests {
    let limits = IPCProducerStateMachine.Limits(maxWidth: 1280, maxHeight: 720)

    private func connected() -> IPCProducerStateMachine {
        var machine = IPCProducerStateMachine(limits: limits)
        _ = machine.received(.hello(IPCHello(name: "phone")))
        return machine
    }

    private func streaming(_ buffers: IPCBuffers = .uniform(count: 4, length: 1 << 20)) -> IPCProducerStateMachine {
        var machine = connected()
        _ = machine.received(.buffers(buffers), attachedFiles: 1, fileBytes: Int(buffers.fileBytes))
        return machine
    }

    private func isMalformed(_ action: IPCProducerStateMachine.Action) -> Bool {
        if case .close(let bye?, _) = action { return bye.reason == .malformed }
        return false
    }

    private func bgra(_ w: UInt32, _ h: UInt32, buffer: UInt32 = 0, stride: UInt32? = nil, offset: UInt32 = 0) -> IPCMessage {
        .frame(IPCFrame(bufferID: buffer, format: .bgra, orientation: .right, width: w, height: h, ptsMicroseconds: 5,
                        strides: SIMD3(stride ?? w * 4, 0, 0), offsets: SIMD3(offset, 0, 0)))
    }

    @Test func helloIsAnsweredWithTheLimits() {
        var machine = IPCProducerStateMachine(limits: limits)
        let action = machine.received(.hello(IPCHello(name: "phone")))
        #expect(action == .reply(.welcome(IPCWelcome(maxWidth: 1280, maxHeight: 720))))
        #expect(machine.state == .connected)
        #expect(machine.producerName == "phone")
    }

    @Test func anotherVersionIsToldWhichOneRtcshareSpeaks() {
        var machine = IPCProducerStateMachine(limits: limits)
        let action = machine.received(.hello(IPCHello(name: "future", version: 2)))
        guard case .close(let bye?, let why) = action else { Issue.record("\(action)"); return }
        #expect(bye.reason == .unsupportedVersion)
        #expect(why.contains("version 2"))
        #expect(machine.state == .closed)
    }

    @Test(arguments: [
        IPCMessage.unchanged(IPCUnchanged(ptsMicroseconds: 0)),
        .buffers(.uniform(count: 1, length: 64)),
        .audio(IPCAudio(sampleRate: 48_000, channels: 1, bigEndian: false, frames: 1, ptsMicroseconds: 0)),
        .bye(IPCBye(reason: .done, text: "")),
    ])
    func nothingIsAcceptedBeforeHello(message: IPCMessage) {
        var machine = IPCProducerStateMachine(limits: limits)
        #expect(isMalformed(machine.received(message, attachedFiles: message.type == .buffers ? 1 : 0, fileBytes: 64)))
        #expect(machine.state == .closed)
    }

    @Test func protocolOrderViolationsAreMalformed() {
        var a = connected()
        #expect(isMalformed(a.received(.hello(IPCHello(name: "again")))))
        var b = connected()
        #expect(isMalformed(b.received(bgra(64, 64))))  // FRAME before BUFFERS
        var c = connected()
        #expect(isMalformed(c.received(.welcome(IPCWelcome(maxWidth: 1, maxHeight: 1)))))
        var d = streaming()
        #expect(isMalformed(d.received(.release(IPCRelease(bufferID: 0)))))
        var e = streaming()
        #expect(isMalformed(e.received(.unchanged(IPCUnchanged(ptsMicroseconds: 0)), attachedFiles: 1, fileBytes: 10)))
    }

    @Test func buffersNeedOneRegularFileLongEnoughAndEntriesInsideIt() {
        let table = IPCBuffers.uniform(count: 2, length: 4096)
        var noFile = connected()
        #expect(isMalformed(noFile.received(.buffers(table), attachedFiles: 0, fileBytes: nil)))
        var twoFiles = connected()
        #expect(isMalformed(twoFiles.received(.buffers(table), attachedFiles: 2, fileBytes: 8192)))
        var notRegular = connected()
        #expect(isMalformed(notRegular.received(.buffers(table), attachedFiles: 1, fileBytes: nil)))
        var shortFile = connected()
        #expect(isMalformed(shortFile.received(.buffers(table), attachedFiles: 1, fileBytes: 8191)))
        var outside = connected()
        let bad = IPCBuffers(fileBytes: 8192, entries: [.init(offset: 4097, length: 4096)])
        #expect(isMalformed(outside.received(.buffers(bad), attachedFiles: 1, fileBytes: 8192)))
        var overflow = connected()
        let wrap = IPCBuffers(fileBytes: 8192, entries: [.init(offset: 8, length: .max)])
        #expect(isMalformed(overflow.received(.buffers(wrap), attachedFiles: 1, fileBytes: 8192)))
        var huge = connected()
        let big = IPCBuffers(fileBytes: IPCProtocol.maxSharedBytes + 1, entries: [.init(offset: 0, length: 1)])
        #expect(isMalformed(huge.received(.buffers(big), attachedFiles: 1, fileBytes: .max)))
        var good = connected()
        #expect(good.received(.buffers(table), attachedFiles: 1, fileBytes: 10_000) == .adoptBuffers(table))
        #expect(good.state == .streaming(table))
    }

    @Test func aGoodFrameBecomesItsLayoutInTheFile() {
        var machine = streaming(IPCBuffers(fileBytes: 8 << 20, entries: [.init(offset: 0, length: 1 << 20),
                                                                          .init(offset: 3 << 20, length: 1 << 20)]))
        let action = machine.received(bgra(360, 640, buffer: 1, stride: 1472, offset: 64))
        guard case .copyFrame(let layout) = action else { Issue.record("\(action)"); return }
        #expect(layout.bufferID == 1 && layout.format == .bgra && layout.orientation == .right)
        #expect(layout.width == 360 && layout.height == 640 && layout.ptsMicroseconds == 5)
        #expect(layout.plane0 == .init(fileOffset: (3 << 20) + 64, stride: 1472, rowBytes: 1440, rows: 640))
        #expect(layout.plane1 == .none && layout.planeCount == 1)
    }

    @Test func nv12AndI420PlanesHaveTheirOwnGeometry() {
        var machine = streaming()
        let nv12 = IPCMessage.frame(IPCFrame(bufferID: 0, format: .nv12, orientation: .up, width: 64, height: 32,
                                             ptsMicroseconds: 0, strides: SIMD3(64, 80, 0), offsets: SIMD3(0, 4096, 0)))
        guard case .copyFrame(let n) = machine.received(nv12) else { Issue.record("nv12 refused"); return }
        #expect(n.plane1 == .init(fileOffset: 4096, stride: 80, rowBytes: 64, rows: 16))
        let i420 = IPCMessage.frame(IPCFrame(bufferID: 0, format: .i420, orientation: .up, width: 64, height: 32,
                                             ptsMicroseconds: 0, strides: SIMD3(64, 32, 32),
                                             offsets: SIMD3(0, 2048, 2560)))
        guard case .copyFrame(let i) = machine.received(i420) else { Issue.record("i420 refused"); return }
        #expect(i.plane2 == .init(fileOffset: 2560, stride: 32, rowBytes: 32, rows: 16))
    }

    @Test func framesThatDoNotFitTheirBufferAreMalformed() {
        let buffers = IPCBuffers.uniform(count: 2, length: 360 * 4 * 640)
        var exact = streaming(buffers)
        guard case .copyFrame = exact.received(bgra(360, 640)) else { Issue.record("exact fit refused"); return }
        var unknownBuffer = streaming(buffers)
        #expect(isMalformed(unknownBuffer.received(bgra(360, 640, buffer: 2))))  // ids are 0 and 1
        var pastEnd = streaming(buffers)
        #expect(isMalformed(pastEnd.received(bgra(360, 640, offset: 4))))
        var narrowStride = streaming(buffers)
        #expect(isMalformed(narrowStride.received(bgra(360, 640, stride: 1439))))
        var hugeStride = streaming(buffers)
        #expect(isMalformed(hugeStride.received(bgra(16, 16, stride: UInt32(IPCProtocol.maxStride + 4)))))
        var odd = streaming(buffers)
        #expect(isMalformed(odd.received(bgra(361, 640))))
        var tiny = streaming(buffers)
        #expect(isMalformed(tiny.received(bgra(8, 640))))
    }

    @Test func aFrameBiggerThanTheLimitsClosesWithItsOwnReason() {
        var machine = streaming(.uniform(count: 1, length: 1 << 24))
        let action = machine.received(bgra(1920, 1080))
        guard case .close(let bye?, let why) = action else { Issue.record("\(action)"); return }
        #expect(bye.reason == .frameTooLarge)
        #expect(why.contains("1920x1080") && why.contains("1280x720"))
        // Turned on its side, the maximum still fits.
        var portrait = streaming(.uniform(count: 1, length: 1 << 24))
        guard case .copyFrame = portrait.received(bgra(720, 1280)) else { Issue.record("portrait refused"); return }
    }

    @Test func audioUnchangedAndByeNeedNoBuffers() {
        var machine = connected()
        let audio = IPCAudio(sampleRate: 44_100, channels: 2, bigEndian: true, frames: 441, ptsMicroseconds: 9)
        #expect(machine.received(.audio(audio)) == .deliverAudio(audio))
        #expect(machine.received(.unchanged(IPCUnchanged(ptsMicroseconds: 1))) == .alive)
        guard case .close(nil, let why) = machine.received(.bye(IPCBye(reason: .done, text: "stopping"))) else {
            Issue.record("bye not a close"); return
        }
        #expect(why.contains("stopping"))
        #expect(machine.state == .closed)
        guard case .close = machine.received(.unchanged(IPCUnchanged(ptsMicroseconds: 1))) else {
            Issue.record("input after close accepted"); return
        }
    }

    @Test func randomMessageSequencesNeverTrap() {
        var rng = SeededRandom(seed: 42)
        for _ in 0..<500 {
            var machine = IPCProducerStateMachine(limits: limits)
            for _ in 0..<20 {
                var message = IPCMessageTests.samples.randomElement(using: &rng)!
                if case .frame(var f) = message {
                    f.width = UInt32.random(in: 0...5000, using: &rng)
                    f.height = UInt32.random(in: 0...5000, using: &rng)
                    f.strides = SIMD3(UInt32.random(in: 0...UInt32.max, using: &rng), 0, 0)
                    f.offsets = SIMD3(UInt32.random(in: 0...UInt32.max, using: &rng), 0, 0)
                    message = .frame(f)
                }
                let files = Int.random(in: 0...2, using: &rng)
                let size = Bool.random(using: &rng) ? Int.random(in: 0...Int(Int32.max), using: &rng) : nil
                _ = machine.received(message, attachedFiles: files, fileBytes: size)
            }
        }
    }
}
