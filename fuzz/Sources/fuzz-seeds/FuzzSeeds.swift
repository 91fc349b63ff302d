// Writes the generated part of the seed corpora, corpus/<harness>/gen-*.bin, with the code's own
// writers (RTPHeader, RTPExtensionValues, VP8FramePlan, RTCP writers, IPCMessage, STUNMessage,
// ICECandidate), so the seeds are well formed by construction and follow the code when the
// formats change. The RFC 5769 STUN vectors are read from the ICE tests' Vectors/*.hex. Deterministic:
// running it again rewrites the same bytes.
//
//   fuzz/.build/debug/fuzz-seeds fuzz/corpus        (run.sh --seeds does this)
//
// The files named cap-* were captured from the real binary instead (see README.md).
// Linked like the harnesses (the build passes -sanitize=fuzzer to every target), so it exports a
// do-nothing LLVMFuzzerTestOneInput; libFuzzer never runs.

import FuzzSupport
import RTCShareCore
import RTCShareICE
import RTCShareMedia
import RTCShareRTP
#if canImport(Glibc)
import Glibc
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func unused(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { 0 }

@main
enum FuzzSeeds {
    static func main() {
        let args = CommandLine.arguments
        guard args.count == 2 else {
            print("usage: fuzz-seeds CORPUS_DIR")
            exit(2)
        }
        let root = args[1]
        var written = 0
        func put(_ harness: String, _ name: String, _ bytes: [UInt8]) {
            let dir = "\(root)/\(harness)"
            mkdir(root, 0o755)
            mkdir(dir, 0o755)
            let path = "\(dir)/gen-\(name).bin"
            guard let f = fopen(path, "wb") else {
                print("fuzz-seeds: cannot write \(path)")
                exit(1)
            }
            _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) }
            fclose(f)
            written += 1
        }
        do {
            for (name, bytes) in try rtpSeeds() { put("fuzz-rtp", name, bytes) }
            for (name, bytes) in try vp8Seeds() { put("fuzz-vp8", name, bytes) }
            for (name, bytes) in try rtcpSeeds() { put("fuzz-rtcp", name, bytes) }
            for (name, bytes) in try stunSeeds() { put("fuzz-stun", name, bytes) }
            for (name, text) in try candidateSeeds() { put("fuzz-candidate", name, Array(text.utf8)) }
        } catch {
            print("fuzz-seeds: \(error)")
            exit(1)
        }
        for (name, bytes) in ipcSeeds() { put("fuzz-ipc", name, bytes) }
        for (name, bytes) in rxSeeds() { put("fuzz-rx", name, bytes) }
        for (name, bytes) in receiverSeeds() { put("fuzz-receiver", name, bytes) }
        for (name, bytes) in captureSeeds() { put("fuzz-capture", name, bytes) }
        for (name, text) in y4mSeeds() { put("fuzz-y4m", name, Array(text.utf8)) }
        for (name, text) in addrSeeds() { put("fuzz-addr", name, Array(text.utf8)) }
        print("fuzz-seeds: \(written) files under \(root)")
    }
}

// MARK: - RTP

/// rtcshare's extension IDs (its SDP's a=extmap lines).
let extensionMap = try! RTPExtensionMap(absSendTime: 2, transportSequenceNumber: 3, videoOrientation: 4)

/// One RTP packet: header, optional extension block, payload, optional padding.
func rtpPacket(_ header: RTPHeader, extensions: RTPExtensionValues? = nil, payload: [UInt8],
               padding: Int = 0) throws -> [UInt8] {
    var h = header
    let extSize = extensions.map { $0.size(map: extensionMap) } ?? 0
    h.hasExtension = extSize > 0
    h.hasPadding = padding > 0
    var out = [UInt8](repeating: 0, count: h.size + extSize + payload.count + padding)
    try out.withUnsafeMutableBytes { (b: UnsafeMutableRawBufferPointer) throws in
        var o = try h.write(into: b)
        if let extensions, extSize > 0 {
            o += try extensions.write(into: UnsafeMutableRawBufferPointer(rebasing: b[o...]), map: extensionMap)
        }
        for (i, byte) in payload.enumerated() { b[o + i] = byte }
        if padding > 0 { b[b.count - 1] = UInt8(padding) }
    }
    return out
}

/// A made-up VP8 frame: the first byte's P bit says key (0) or delta (1); the rest a pattern.
func fakeFrame(bytes: Int, key: Bool) -> [UInt8] {
    (0..<bytes).map { i in i == 0 ? (key ? 0x10 : 0x11) : UInt8(truncatingIfNeeded: i &* 7) }
}

/// The packets rtcshare's VP8 path would send for `frame` (RFC 7741, its 4-byte descriptor).
func vp8Packets(_ frame: [UInt8], packetizer: inout VP8Packetizer, maxPayload: Int, seq: inout UInt16,
                timestamp: UInt32, ssrc: UInt32, extensions: RTPExtensionValues?) throws -> [[UInt8]] {
    let plan = try packetizer.beginFrame(byteCount: frame.count, maxPayloadSize: maxPayload)
    var packets: [[UInt8]] = []
    for i in 0..<plan.packetCount {
        var payload = [UInt8](repeating: 0, count: plan.payloadSize(ofPacket: i))
        try frame.withUnsafeBytes { (f: UnsafeRawBufferPointer) throws in
            try payload.withUnsafeMutableBytes { (p: UnsafeMutableRawBufferPointer) throws in
                _ = try plan.writePayload(ofPacket: i, frame: f, into: p)
            }
        }
        let header = RTPHeader(marker: plan.isLast(i), payloadType: 96, sequenceNumber: seq, timestamp: timestamp,
                               ssrc: ssrc)
        packets.append(try rtpPacket(header, extensions: i == 0 ? extensions : nil, payload: payload))
        seq &+= 1
    }
    return packets
}

func descriptor(_ d: VP8PayloadDescriptor) throws -> [UInt8] {
    var out = [UInt8](repeating: 0, count: d.size)
    _ = try out.withUnsafeMutableBytes { (b: UnsafeMutableRawBufferPointer) throws in try d.write(into: b) }
    return out
}

func rtpSeeds() throws -> [(String, [UInt8])] {
    let ssrc: UInt32 = 0x1122_3344
    let all = RTPExtensionValues(absSendTime: AbsSendTime.value(microseconds: 1_234_567),
                                 transportSequenceNumber: 4711,
                                 videoOrientation: RTPVideoOrientation(orientation: .right))
    var packetizer = VP8Packetizer(initialPictureID: 0x1234)
    var seq: UInt16 = 1000
    let key = try vp8Packets(fakeFrame(bytes: 300, key: true), packetizer: &packetizer, maxPayload: 1200, seq: &seq,
                             timestamp: 90_000, ssrc: ssrc, extensions: all)
    // Every optional descriptor field, short PictureID; two CSRCs; 4 bytes of padding.
    let full = try descriptor(VP8PayloadDescriptor(nonReference: true, startOfPartition: true, partitionIndex: 0,
                                                   pictureID: 0x55, longPictureID: false, tl0PicIndex: 9,
                                                   temporalLayer: 2, layerSync: true, keyIndex: 17))
    let csrcPadded = try rtpPacket(RTPHeader(marker: true, payloadType: 96, sequenceNumber: 65_535, timestamp: 0xFFFF_FFF0,
                                             ssrc: ssrc, csrcs: RTPCSRCList([7, 8])),
                                   extensions: RTPExtensionValues(transportSequenceNumber: 65_535),
                                   payload: full + [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A], padding: 4)
    // An Opus packet (TOC 0x78: CELT FB 20 ms, one frame) and a code-3 one (3 frames).
    let opus = try rtpPacket(RTPHeader(marker: true, payloadType: 111, sequenceNumber: 20, timestamp: 960, ssrc: 0x99),
                             extensions: RTPExtensionValues(absSendTime: 77), payload: [0x78] + fakeFrame(bytes: 40, key: true))
    let opus3 = try rtpPacket(RTPHeader(payloadType: 111, sequenceNumber: 21, timestamp: 1920, ssrc: 0x99),
                              payload: [0x7B, 0x03, 1, 2, 3, 4, 5])
    // A two-byte-header extension block (profile 0x1000): read as "no values".
    var twoByte = try rtpPacket(RTPHeader(payloadType: 96, sequenceNumber: 5, timestamp: 5, ssrc: ssrc),
                                payload: [0, 0, 0, 0, 0x90, 0x10, 0x01])
    twoByte[0] |= 0x10
    twoByte.replaceSubrange(12..<16, with: [0x10, 0x00, 0x00, 0x01, 0x02, 0x02, 0xAB, 0xCD])
    // An RTX packet (PT 97): OSN then the original payload.
    let rtx = try rtpPacket(RTPHeader(marker: true, payloadType: 97, sequenceNumber: 300, timestamp: 90_000, ssrc: 0x5566),
                            payload: [0x03, 0xE8] + Array(key[0][16...]))
    return [("vp8-key-ext", key[0]), ("vp8-full-descriptor-csrc-padding", csrcPadded), ("opus", opus),
            ("opus-code3", opus3), ("two-byte-extension", twoByte), ("rtx", rtx)]
}

// MARK: - VP8 sequences (fuzz-vp8 layout: size byte, then [flags, length BE, bytes]...)

func vp8Sequence(sizeByte: UInt8, _ packets: [[UInt8]], fieldsForm: Set<Int> = []) -> [UInt8] {
    var out: [UInt8] = [sizeByte]
    for (i, p) in packets.enumerated() {
        var chunk = p
        var flags: UInt8 = 0
        if fieldsForm.contains(i), let parsed = try? p.withUnsafeBytes({ try RTPHeader.parse($0) }) {
            // The header-fields form: seq, timestamp, marker, then the payload.
            flags = 1
            let h = parsed.header
            chunk = [UInt8(h.sequenceNumber >> 8), UInt8(h.sequenceNumber & 0xFF),
                     UInt8(h.timestamp >> 24), UInt8((h.timestamp >> 16) & 0xFF),
                     UInt8((h.timestamp >> 8) & 0xFF), UInt8(h.timestamp & 0xFF), h.marker ? 1 : 0]
                + Array(p[parsed.payloadRange])
        }
        out += [flags, UInt8(chunk.count >> 8), UInt8(chunk.count & 0xFF)] + chunk
    }
    return out
}

func vp8Seeds() throws -> [(String, [UInt8])] {
    var packetizer = VP8Packetizer(initialPictureID: 0x7FFE)
    var seq: UInt16 = 65_533  // wraps inside the second frame
    let ext = RTPExtensionValues(transportSequenceNumber: 1)
    let key = try vp8Packets(fakeFrame(bytes: 250, key: true), packetizer: &packetizer, maxPayload: 100, seq: &seq,
                             timestamp: 3000, ssrc: 1, extensions: ext)
    let delta = try vp8Packets(fakeFrame(bytes: 150, key: false), packetizer: &packetizer, maxPayload: 100, seq: &seq,
                               timestamp: 6000, ssrc: 1, extensions: ext)
    let delta2 = try vp8Packets(fakeFrame(bytes: 90, key: false), packetizer: &packetizer, maxPayload: 100, seq: &seq,
                                timestamp: 9000, ssrc: 1, extensions: nil)
    return [
        ("two-frames", vp8Sequence(sizeByte: 15, key + delta)),
        ("fields-form", vp8Sequence(sizeByte: 15, key + delta, fieldsForm: [1, 3])),
        ("lost-middle", vp8Sequence(sizeByte: 15, [key[0], key[2]] + delta + delta2)),
        ("lost-marker", vp8Sequence(sizeByte: 15, Array(key[0..<2]) + delta)),
        ("too-large", vp8Sequence(sizeByte: 1, key + delta2)),
    ]
}

// MARK: - RTCP

func serialized(_ packets: [any RTCPWritable]) throws -> [UInt8] {
    var out: [UInt8] = []
    for p in packets { out += try p.serialized() }
    return out
}

func rtcpSeeds() throws -> [(String, [UInt8])] {
    let me: UInt32 = 0xAABB_CCDD, media: UInt32 = 0x1122_3344
    let block = RTCPReportBlock(ssrc: media, fractionLost: 12, cumulativeLost: -3, extendedHighestSequence: 0x1_0005,
                                jitter: 90, lastSenderReport: 0x1234_5678, delaySinceLastSenderReport: 0x8000)
    let rr = RTCPReceiverReport(ssrc: me, reportBlocks: [block, block])
    let sdes = RTCPSourceDescription(ssrc: me, cname: "receiver@example")
    let nack = RTCPGenericNack(sender: me, media: media,
                               entries: [RTCPNackEntry(pid: 100, blp: 0x8001), RTCPNackEntry(pid: 65_530, blp: 0)])
    let pli = RTCPPictureLossIndication(sender: me, media: media)
    let fir = RTCPFullIntraRequest(sender: me, entries: [RTCPFIREntry(ssrc: media, sequenceNumber: 3)])
    let remb = RTCPREMB(sender: me, bitrate: 1_500_000, ssrcs: [media, 0x5566])
    let bye = RTCPGoodbye(ssrcs: [me], reason: "done")
    var sr = [UInt8](repeating: 0, count: 256)
    let srInfo = RTCPSenderInfo(ssrc: media, ntpTime: NTPTime(unixMicroseconds: 1_700_000_000_000_000),
                                rtpTimestamp: 90_000, packetCount: 10, octetCount: 12_000, reportCount: 1)
    let n = try sr.withUnsafeMutableBytes { (b: UnsafeMutableRawBufferPointer) throws in
        try RTCPCompoundBuilder.write(RTCPSenderReport(info: srInfo, reportBlocks: [block]), cname: "sender",
                                      byeReason: .some("bye"), into: b)
    }
    // transport-cc (RTPFB FMT 15): base 7, 2 statuses, reference time -2 (24 bits), count 5,
    // one run-length chunk; and APP (204), which is read as unknown.
    let tcc: [UInt8] = [0x8F, 205, 0x00, 0x05] + be32(me) + be32(media)
        + [0x00, 0x07, 0x00, 0x02, 0xFF, 0xFF, 0xFE, 0x05, 0x20, 0x02, 0x00, 0x00]
    let app: [UInt8] = [0x81, 204, 0x00, 0x02] + be32(me) + Array("name".utf8)
    // A padded last packet (P bit, 4 bytes of padding ending in its count).
    var padded = try pli.serialized() + [0, 0, 0, 4]
    padded[0] |= 0x20
    padded[3] += 1
    return [
        ("sr-sdes-bye", Array(sr[..<n])),
        ("rr-sdes", try serialized([rr, sdes])),
        ("rr-nack", try serialized([RTCPReceiverReport(ssrc: me), nack])),
        ("rr-pli", try serialized([RTCPReceiverReport(ssrc: me), pli])),
        ("rr-fir", try serialized([RTCPReceiverReport(ssrc: me), fir])),
        ("rr-remb", try serialized([rr, remb])),
        ("rr-remb-nack-pli-bye", try serialized([rr, sdes, remb, nack, pli, bye])),
        ("transport-cc-app", try serialized([RTCPReceiverReport(ssrc: me)]) + tcc + app),
        // As the receive core writes it: a run, a one-bit and a two-bit vector, a large delta.
        ("rr-transport-cc-chunks", try serialized([RTCPReceiverReport(ssrc: me), RTCPTransportFeedback(
            sender: me, media: media, baseSequence: 65_530, referenceTime: 1_000, feedbackCount: 3,
            statuses: [TransportPacketStatus](repeating: .received(deltaTicks: 4), count: 16)
                + [.notReceived, .received(deltaTicks: 1), .notReceived, .received(deltaTicks: 300),
                   .received(deltaTicks: -20), .notReceived, .received(deltaTicks: 0)])])),
        ("pli-padded", padded),
    ]
}

func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

// MARK: - IPC (fuzz-ipc layout: [length BE16, files, file size BE32 or FFFFFFFF, datagram]...)

func ipcFrame(_ message: IPCMessage, files: UInt8 = 0, fileBytes: UInt32? = nil, pcm: [UInt8] = []) -> [UInt8] {
    let bytes = message.serialized(pcm: pcm)
    return [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF), files] + be32(fileBytes ?? UInt32.max) + bytes
}

func ipcSeeds() -> [(String, [UInt8])] {
    let hello = IPCMessage.hello(IPCHello(name: "fuzz-producer"))
    let buffers = IPCBuffers.uniform(count: 3, length: 640 * 360 * 4)
    let fileBytes = UInt32(buffers.fileBytes)
    let i420 = IPCMessage.frame(IPCFrame(bufferID: 1, format: .i420, orientation: .right, width: 640, height: 360,
                                         ptsMicroseconds: 1_000_000, strides: SIMD3(640, 320, 320),
                                         offsets: SIMD3(0, 640 * 360, 640 * 360 + 320 * 180)))
    let nv12 = IPCMessage.frame(IPCFrame(bufferID: 0, format: .nv12, orientation: .up, width: 640, height: 360,
                                         ptsMicroseconds: 1_033_333, strides: SIMD3(640, 640, 0),
                                         offsets: SIMD3(0, 640 * 360, 0)))
    let bgra = IPCMessage.frame(IPCFrame(bufferID: 2, format: .bgra, orientation: .leftMirrored, width: 360,
                                         height: 640, ptsMicroseconds: 1_066_666, strides: SIMD3(360 * 4, 0, 0),
                                         offsets: SIMD3(0, 0, 0)))
    let audio = IPCMessage.audio(IPCAudio(sampleRate: 48_000, channels: 2, bigEndian: false, frames: 16,
                                          ptsMicroseconds: 1_000_000))
    let pcm = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37) }
    let unchanged = IPCMessage.unchanged(IPCUnchanged(ptsMicroseconds: 1_100_000))
    let bye = IPCMessage.bye(IPCBye(reason: .done, text: "bye"))
    let session = ipcFrame(hello) + ipcFrame(.buffers(buffers), files: 1, fileBytes: fileBytes)
        + ipcFrame(i420) + ipcFrame(nv12) + ipcFrame(bgra) + ipcFrame(audio, pcm: pcm) + ipcFrame(unchanged)
        + ipcFrame(bye)
    return [
        ("session", session),
        ("hello-audio", ipcFrame(hello) + ipcFrame(audio, pcm: pcm)),
        ("hello-frame-before-buffers", ipcFrame(hello) + ipcFrame(i420)),
        ("welcome", ipcFrame(.welcome(IPCWelcome(maxWidth: 1280, maxHeight: 720)))),
        ("release", ipcFrame(.release(IPCRelease(bufferID: 3)))),
        ("hello-version-2", ipcFrame(.hello(IPCHello(name: "v2", version: 2)))),
    ]
}

// MARK: - receive state machines (fuzz-rx layout: 2 config bytes, then [op, a, b, arg]...)

func rxSeeds() -> [(String, [UInt8])] {
    /// A packet numbered `seq` (absolute form, op 2).
    func at(_ seq: UInt16, _ length: UInt8, retransmission: Bool = false) -> [UInt8] {
        [retransmission ? 0x12 : 0x02, UInt8(seq >> 8), UInt8(seq & 0xFF), length]
    }
    /// The next packet (relative form, op 0: previous + 1).
    func next(_ length: UInt8) -> [UInt8] { [0x00, 1, 0, length] }
    func ev(_ op: UInt8, _ arg: UInt8) -> [UInt8] { [op, 0, 0, arg] }
    let time: UInt8 = 3, pop: UInt8 = 4, nack: UInt8 = 5, report: UInt8 = 6, wait: UInt8 = 7
    var inOrder: [UInt8] = [0x05, 100] + at(65_530, 20) + ev(pop, 0)
    for _ in 0..<11 { inOrder += next(20) + ev(time, 20) + ev(pop, 0) }
    inOrder += ev(report, 0)
    // Loss, NACKs, a late retransmission, reordering.
    var loss: [UInt8] = [0x15, 100]
    loss += at(10, 30) + at(11, 30) + at(14, 30) + at(13, 30)
    loss += ev(time, 10) + ev(nack, 40) + ev(time, 30) + ev(nack, 40)
    loss += at(12, 30, retransmission: true) + ev(pop, 0) + ev(time, 100) + at(16, 1) + ev(pop, 0)
    loss += ev(time | 0x08, 20) + ev(pop, 0) + ev(nack, 0) + ev(report, 0)
    // A sender restart: a far jump backwards (more than the capacity), twice in a row.
    var restart: [UInt8] = [0x2A, 50] + at(40_000, 12)
    for _ in 0..<10 { restart += next(12) }
    restart += ev(pop, 0) + at(39_000, 12) + next(12) + ev(pop, 0) + ev(report, 0)
    // A burst ahead of the window (overflow, forced hand-out) and a long wait.
    var burst: [UInt8] = [0x00, 20]
    burst += at(0, 5) + at(200, 5) + at(16, 5) + ev(wait, 0) + ev(pop, 0)
    burst += ev(time | 0x08, 255) + ev(nack, 1) + ev(pop, 0)
    return [("in-order-wrap", inOrder), ("loss-nack", loss), ("restart", restart), ("burst", burst)]
}

// MARK: - the receive core (fuzz-receiver layout: 1 flag byte, then events)

func receiverSeeds() -> [(String, [UInt8])] {
    /// A built VP8 packet: seq + `delta`, timestamp step, bits (1 new picture, 2 marker, 4 start,
    /// 8 keyframe), payload length; `rtx` / `audio` choose the stream.
    func packet(_ delta: Int8, step: UInt8, bits: UInt8, length: UInt8, rtx: Bool = false, audio: Bool = false) -> [UInt8] {
        [0x01 | (rtx ? 8 : 0) | (audio ? 16 : 0), UInt8(bitPattern: delta), step, bits, length]
    }
    let poll: [UInt8] = [0x03]
    func wait(_ ms: UInt8) -> [UInt8] { [0x02, ms] }
    // A keyframe in two packets, then delta frames, audio beside, polls between.
    var flow: [UInt8] = [0x03]
    flow += packet(1, step: 10, bits: 1 | 4 | 8, length: 200) + packet(1, step: 0, bits: 2 | 8, length: 100) + poll
    for _ in 0..<8 {
        flow += packet(1, step: 10, bits: 1 | 2 | 4, length: 80) + packet(1, step: 0, bits: 0, length: 60, audio: true)
        flow += wait(50) + poll
    }
    // A hole, NACK time, the packet again on the RTX stream, then a late one.
    var loss: [UInt8] = [0x03]
    loss += packet(1, step: 10, bits: 1 | 2 | 4 | 8, length: 100) + poll
    loss += packet(2, step: 10, bits: 1 | 2 | 4, length: 100) + wait(10) + poll
    loss += packet(-1, step: 246, bits: 1 | 2 | 4, length: 100, rtx: true) + wait(30) + poll
    loss += packet(3, step: 20, bits: 1 | 2 | 4, length: 90) + [0x06, 1] + poll
    // A raw datagram: an RTCP BYE (plain), and garbage.
    let bye: [UInt8] = [0x81, 203, 0, 1, 0x11, 0x11, 0x22, 0x22]
    let raw: [UInt8] = [0x00, 0, UInt8(bye.count)] + bye + [0x00, 0, 3, 0xFF, 0x00, 0x10] + poll
    return [("flow", flow), ("loss-rtx", loss), ("raw", [0x01] + packet(1, step: 1, bits: 1 | 2 | 4 | 8, length: 10) + raw)]
}

// MARK: - a compositor's picture (fuzz-capture layout: geometry, box, flags, then events)

func captureSeeds() -> [(String, [UInt8])] {
    /// Width and height 1...96, stride padding in 4-byte steps (0...15), red first (XBGR/ABGR),
    /// wl_output transform 0...7, y-inverted.
    func geometry(_ width: Int, _ height: Int, pad: UInt8 = 0, redFirst: Bool = false, transform: UInt8 = 0,
                  yInverted: Bool = false) -> [UInt8] {
        [UInt8(width - 1), UInt8(height - 1), pad | (redFirst ? 0x10 : 0), transform | (yInverted ? 0x08 : 0)]
    }
    /// The box the output is fitted into (even sides 2...192).
    func box(_ width: Int, _ height: Int) -> [UInt8] { [UInt8(width / 2 - 1), UInt8(height / 2 - 1)] }
    func small(_ x: Int8, _ y: Int8, _ w: Int8, _ h: Int8) -> [UInt8] {
        [0x00, UInt8(bitPattern: x), UInt8(bitPattern: y), UInt8(bitPattern: w), UInt8(bitPattern: h)]
    }
    func wide(_ x: Int32, _ y: Int32, _ w: Int32, _ h: Int32) -> [UInt8] {
        [0x01] + [x, y, w, h].flatMap { be32(UInt32(bitPattern: $0)) }
    }
    func convert(_ tensOfMilliseconds: UInt8 = 5) -> [UInt8] { [0x02, tensOfMilliseconds] }
    let undamaged: [UInt8] = [0x03, 40, 7]
    // 96x54 shrunk to 64x36 (3 rows to 2): two changes, one skipped capture's damage joined to the next.
    var shrunk = geometry(96, 54) + box(64, 36) + [0x01]
    shrunk += small(10, 20, 30, 5) + convert() + small(3, 50, 90, 4) + small(40, 2, 2, 2) + convert()
    shrunk += undamaged + convert() + small(0, 30, 10, 3) + convert(120) + small(0, 31, 10, 1) + convert()
    // A turned output (90), red first, rows padded: damage in stored rows lands in frame columns.
    var turned = geometry(64, 48, pad: 9, redFirst: true, transform: 1) + box(36, 48) + [0x02]
    turned += small(5, 5, 20, 6) + convert() + small(60, 40, 4, 8) + convert() + small(-3, -3, 10, 10) + convert()
    // Damage as the compositor may send it: negative, huge, empty, past the picture, overlapping.
    var wild = geometry(80, 60, pad: 3, transform: 6) + box(40, 30) + [0x03]
    wild += wide(-5, -100, 20, 110) + convert() + wide(0, 58, 80, Int32.max) + convert()
    wild += wide(Int32.min, Int32.min, -1, -1) + wide(2, 2000, 10, 10) + wide(4, 10, 0, 0) + convert()
    wild += wide(10, 10, 5, 5) + wide(12, 12, 5, 5) + wide(Int32.max, Int32.max, Int32.max, Int32.max) + convert()
    // The output changes mid-share (64x64 flipped-270 into the 96x54 share's frame): letterboxed.
    var follow = geometry(96, 54) + box(96, 54) + [0x84] + geometry(64, 64, pad: 1, transform: 7)
    follow += small(8, 8, 8, 8) + convert() + small(60, 0, 4, 64) + convert() + undamaged + convert()
    // ... then back to a wide output, then turned (90) with padded rows: each followed mid-share.
    follow += [0x04] + geometry(96, 40) + small(0, 10, 20, 4) + convert() + convert()
    follow += [0x04] + geometry(40, 96, pad: 5, transform: 3) + convert() + small(0, 80, 40, 16) + convert()
    // A y-inverted buffer (damage not in stored rows: converted whole), XBGR.
    var inverted = geometry(50, 40, redFirst: true, transform: 2, yInverted: true) + box(50, 40) + [0x05]
    inverted += small(1, 1, 4, 4) + convert() + small(10, 30, 4, 4) + convert()
    return [("shrunk", shrunk), ("turned-red-first", turned), ("wild-damage", wild), ("follow", follow),
            ("y-inverted", inverted)]
}

// MARK: - text formats

func y4mSeeds() -> [(String, String)] {
    [
        // What Y4MFileWriter writes (rtcshare receive --y4m).
        ("writer", "YUV4MPEG2 W1280 H720 F20:1 Ip A1:1 C420jpeg\n"),
        ("ffmpeg", "YUV4MPEG2 W640 H360 F30000:1001 It A0:0 C420mpeg2 XYSCSS=420MPEG2\n"),
        ("minimal", "YUV4MPEG2 W2 H2\n"),
    ]
}

func addrSeeds() -> [(String, String)] {
    [
        ("v4", "127.0.0.1:5004"),
        ("v6", "[::1]:5004"),
        ("v6-scope", "[fe80::1%lo]:47900"),
        ("v4-short", "10.1:65535"),
        ("name", "localhost:5004"),
    ]
}

// MARK: - STUN and ICE candidates

enum SeedError: Error { case cannotRead(String), badHex(String) }

/// Tests/RTCShareICETests/Vectors/<name>.hex of this checkout: hex byte pairs, `#` comments
/// (the format the ICE tests read).
func stunVector(_ name: String) throws -> [UInt8] {
    let source = "\(#filePath)"
    guard let range = source.ranges(of: "/fuzz/Sources/fuzz-seeds/").last else {
        throw SeedError.cannotRead(source)
    }
    let path = source[..<range.lowerBound] + "/Tests/RTCShareICETests/Vectors/\(name).hex"
    guard let f = fopen(String(path), "rb") else { throw SeedError.cannotRead(String(path)) }
    defer { fclose(f) }
    var text: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
        if n == 0 { break }
        text += chunk[..<n]
    }
    var bytes: [UInt8] = []
    for line in String(decoding: text, as: UTF8.self).split(separator: "\n") {
        let data = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        for token in data.split(separator: " ") {
            guard let b = UInt8(token, radix: 16) else { throw SeedError.badHex("\(name): \(token)") }
            bytes.append(b)
        }
    }
    return bytes
}

func stunMessage(_ m: STUNMessage, key: [UInt8]? = nil, fingerprint: Bool = false) throws -> [UInt8] {
    var out = [UInt8](repeating: 0, count: m.size(integrity: key != nil, fingerprint: fingerprint))
    _ = try out.withUnsafeMutableBytes { (b: UnsafeMutableRawBufferPointer) throws in
        try m.write(into: b, integrityKey: key, fingerprint: fingerprint)
    }
    return out
}

func stunSeeds() throws -> [(String, [UInt8])] {
    let key = Array("VOkJxbRl1RmTxUk/WvJxBt".utf8)
    let id = STUNTransactionID(high: 0x0102_0304, low: 0x0506_0708_090A_0B0C)
    let v4 = ICEAddress(ipv4: 0xC000_0201, port: 32853)
    let v6 = ICEAddress(ipv6High: 0x2001_0DB8_1234_5678, low: 0x0011_2233_4455_6677, port: 32853)
    // A nominating check as the controlling agent sends it.
    let check = STUNMessage(type: .bindingRequest, transactionID: id,
                            attributes: [.username("remoteUfrag:localUfrag"), .priority(0x6E00_01FF),
                                         .iceControlling(0x932F_F9B1_5126_3B36), .useCandidate])
    let success = STUNMessage(type: .bindingSuccess, transactionID: id,
                              attributes: [.xorMappedAddress(v4), .mappedAddress(v6), .software("rtcshare")])
    let conflict = STUNMessage(type: .bindingError, transactionID: id,
                               attributes: [.errorCode(code: 487, reason: "Role Conflict"),
                                            .unknownAttributes([0x0015, 0x0014]), .xorMappedAddress(v6)])
    // A request with an unknown comprehension-required attribute (0x0015, 4 bytes) and an
    // unknown optional one (0xC001, 1 byte + padding), then MESSAGE-INTEGRITY: the writer
    // cannot write unknown attributes, so they are spliced in and the length patched.
    var unknown = try stunMessage(STUNMessage(type: .bindingRequest, transactionID: id,
                                              attributes: [.username("a:b"), .iceControlled(7)]))
    unknown += [0x00, 0x15, 0x00, 0x04, 1, 2, 3, 4, 0xC0, 0x01, 0x00, 0x01, 0xFF, 0, 0, 0]
    unknown += [0x00, 0x08, 0x00, 0x14] + [UInt8](repeating: 0xAB, count: 20)
    unknown[2] = UInt8((unknown.count - 20) >> 8)
    unknown[3] = UInt8((unknown.count - 20) & 0xFF)
    return [
        ("rfc5769-sample-request", try stunVector("rfc5769-sample-request")),
        ("rfc5769-ipv4-response", try stunVector("rfc5769-ipv4-response")),
        ("rfc5769-ipv6-response", try stunVector("rfc5769-ipv6-response")),
        ("rfc5769-long-term-request", try stunVector("rfc5769-long-term-request")),
        ("check-integrity-fingerprint", try stunMessage(check, key: key, fingerprint: true)),
        ("success-v4-v6-integrity", try stunMessage(success, key: key)),
        ("error-487-fingerprint", try stunMessage(conflict, fingerprint: true)),
        ("indication-fingerprint", try stunMessage(STUNMessage(type: .bindingIndication, transactionID: id),
                                                   fingerprint: true)),
        ("unknown-attributes", unknown),
    ]
}

func candidateSeeds() throws -> [(String, String)] {
    let host = ICECandidate(foundation: "1", priority: ICECandidate.priority(type: .host, localPreference: 65535),
                            address: try ICEAddress(parsing: "192.168.1.20:50000"), type: .host)
    let srflx = ICECandidate(foundation: "2", priority: ICECandidate.priority(type: .serverReflexive, localPreference: 65535),
                             address: try ICEAddress(parsing: "203.0.113.7:46154"), type: .serverReflexive,
                             relatedAddress: try ICEAddress(parsing: "192.168.1.20:50000"))
    let relay = ICECandidate(foundation: "r+/9", component: 2, priority: 254,
                             address: try ICEAddress(parsing: "[2001:db8::1:0:0:1]:3478"), type: .relayed,
                             relatedAddress: try ICEAddress(parsing: "[::ffff:198.51.100.1]:9"))
    return [
        ("host-crlf", "a=" + host.sdpAttribute + "\r\n"),  // as the line sits in an SDP body
        ("srflx", srflx.sdpAttribute),
        ("relay-v6", relay.sdpAttribute),
        // As browsers write them: extension attributes, TCP, an mDNS name.
        ("browser-srflx", "a=candidate:842163049 1 udp 1677729535 203.0.113.7 46154 typ srflx raddr 10.0.0.2 "
            + "rport 46154 generation 0 ufrag EsAw network-id 1 network-cost 10"),
        ("browser-tcp", "candidate:1 1 TCP 2128609279 10.0.0.1 9 typ host tcptype active"),
        ("browser-mdns", "candidate:3 1 udp 2122260223 3f1d5e4a-7b2c-4a8e-9d1f-0123456789ab.local 5000 typ host"),
        ("prflx-v6", "candidate:4 1 UDP 1862270975 fe80::1:2:3:4 5001 typ prflx raddr :: rport 0"),
        ("address-v4", "192.0.2.1:3478"),
        ("address-v6", "[2001:db8:0:0:1:0:0:1]:9"),
    ]
}
