// Micro benchmark of the send path's per-packet work: real VP8 frames (an IVF file, e.g. from
// `rtcshare --output x.ivf`) packetized into RTP (RFC 7741) and protected with SRTP
// AES_CM_128_HMAC_SHA1_80 by the project's `RTPSender`, against raw libsrtp2 `srtp_protect` of
// the very same RTP packets alone (the reference: the least any SRTP sender must do). Prints one
// JSON line in the form of yuv-bench's.
//
//   packetize-bench FILE.ivf...     (one line per file)
//
// The packets for the reference are the RTP packets an `RTPSender` with the same seed and key
// protects (its datagrams unprotected again): byte for byte what the measured sender protects.
// Each pass runs ours and the reference back to back, in an order that alternates every pass
// (whoever runs second finds the frames in cache); a pass starts from fresh SRTP sessions on
// both sides, made before the clock starts, so both pay libsrtp's first-packet stream setup
// alike. The figure is the median pass after a warm-up.
import CSRTP
import Glibc
import RTCShareCore
import RTCShareRTP

let warmupPasses = 5
let passes = 201

/// SplitMix64: with the same seed, every sender made here draws the same SSRC, sequence numbers
/// and timestamps, so each pass sends the packets the reference protects.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func fail(_ message: String) -> Never {
    let line = Array("packetize-bench: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

/// The frames of an IVF file (32-byte file header, then a 12-byte header before each frame).
func readIVF(_ path: String) -> (frames: [[UInt8]], width: Int, height: Int) {
    guard let file = fopen(path, "rb") else { fail("cannot open \(path)") }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        if n == 0 { break }
        bytes += chunk[0..<n]
    }
    func le(_ at: Int, _ count: Int) -> Int {
        (0..<count).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
    }
    guard bytes.count >= 32, bytes[0..<4].elementsEqual("DKIF".utf8), bytes[8..<12].elementsEqual("VP80".utf8) else {
        fail("\(path) is not a VP8 IVF file")
    }
    var frames: [[UInt8]] = []
    var at = le(6, 2)
    while at + 12 <= bytes.count {
        let size = le(at, 4)
        guard size > 0, at + 12 + size <= bytes.count else { fail("\(path): frame \(frames.count) is cut short") }
        frames.append(Array(bytes[(at + 12)..<(at + 12 + size)]))
        at += 12 + size
    }
    guard !frames.isEmpty else { fail("\(path) holds no frame") }
    return (frames, le(12, 2), le(14, 2))
}

func nowNanoseconds() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}

let seed: UInt64 = 0x5EED

func makeSender(protection: RTPProtection) throws -> RTPSender {
    var configuration = RTPSenderConfiguration()
    configuration.protection = protection
    // Its own budget each time: the packet history is carved from it and never handed back.
    let budget = try MemoryBudget(capBytes: RTPSender.budgetBytes(historyBytes: configuration.historyBytes) + (1 << 20))
    return try RTPSender(configuration: configuration, budget: budget, random: SplitMix64(state: seed))
}

/// Sends every frame through `sender` (30 fps media time); `transmit` sees each datagram.
func sendAll(_ frames: [[UInt8]], through sender: RTPSender,
             transmit: (UnsafeRawBufferPointer, RTPRoute) -> Void) throws {
    for (index, frame) in frames.enumerated() {
        try frame.withUnsafeBytes { bytes in
            try sender.sendVideo(bytes, mediaTimestamp: UInt32(index * 3000), orientation: .up,
                                 at: .microseconds(Int64(index) * 33_333), transmit: transmit)
        }
    }
}

/// A libsrtp2 sender session as `SRTPContext` makes one: the profile's default policy, any
/// outbound SSRC, repeated transmissions allowed.
func makeRawSession(key: [UInt8]) -> srtp_t {
    var policy = srtp_policy_t()
    srtp_crypto_policy_set_rtp_default(&policy.rtp)
    srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
    policy.ssrc.type = ssrc_any_outbound
    policy.window_size = 1024
    policy.allow_repeat_tx = 1
    var material = key
    var session: srtp_t? = nil
    let status = material.withUnsafeMutableBufferPointer { bytes in
        policy.key = bytes.baseAddress
        return srtp_create(&session, &policy)
    }
    guard status == srtp_err_status_ok, let session else { fail("srtp_create failed: \(status.rawValue)") }
    return session
}

/// Runs the benchmark on the frames of `path` and returns its JSON line.
func benchmark(path: String) throws -> String {
    let (frames, width, height) = readIVF(path)
    var keyRandom = SplitMix64(state: 42)
    let keyBytes = (0..<30).map { _ in UInt8.random(in: 0...255, using: &keyRandom) }
    let key = try SRTPMasterKey(profile: .aesCM128HmacSHA1_80, bytes: keyBytes)
    // libsrtp2 is initialised once per process, by the project's context (srtp_init twice fails).
    _ = try SRTPContext(key: key, direction: .sender)

    // The reference packets: the RTP packets the measured sender protects (its datagrams,
    // unprotected again), laid end to end. An insecure sender would not do: it leaves no room
    // for the SRTP tag, so it cuts frames into other packets.
    var plainBytes: [UInt8] = []
    var plainOffsets: [Int] = [0]
    var unprotector = try SRTPContext(key: key, direction: .receiver, replayWindow: 0x7FFF)
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
    defer { buffer.deallocate() }
    var failure: (any Error)?
    try sendAll(frames, through: try makeSender(protection: .keys(local: key, remote: key))) { datagram, _ in
        buffer.copyMemory(from: datagram)
        do {
            let length = try unprotector.unprotectRTP(buffer, length: datagram.count)
            plainBytes += UnsafeRawBufferPointer(rebasing: buffer[0..<length])
            plainOffsets.append(plainBytes.count)
        } catch { failure = error }
    }
    if let failure { fail("cannot unprotect the sender's packets: \(failure)") }
    let packetCount = plainOffsets.count - 1
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1200 + Int(SRTP_MAX_TRAILER_LEN) + 64, alignment: 16)
    defer { scratch.deallocate() }

    func timeOurs() throws -> UInt64 {
        let sender = try makeSender(protection: .keys(local: key, remote: key))
        var sent = 0
        let start = nowNanoseconds()
        try sendAll(frames, through: sender) { datagram, _ in sent &+= datagram.count }
        let elapsed = nowNanoseconds() - start
        guard sender.stats.packetsSent == packetCount else {
            fail("the sender sent \(sender.stats.packetsSent) packets this time, \(packetCount) before")
        }
        return elapsed
    }

    func timeReference() -> UInt64 {
        let session = makeRawSession(key: keyBytes)
        defer { srtp_dealloc(session) }
        var sent = 0
        let start = nowNanoseconds()
        plainBytes.withUnsafeBytes { plain in
            for i in 0..<packetCount {
                // libsrtp protects in place: the packet is written into the send buffer first, as
                // any sender's is.
                var length = Int32(plainOffsets[i + 1] - plainOffsets[i])
                memcpy(scratch.baseAddress!, plain.baseAddress! + plainOffsets[i], Int(length))
                let status = srtp_protect(session, scratch.baseAddress!, &length)
                if status != srtp_err_status_ok { fail("srtp_protect failed: \(status.rawValue)") }
                sent &+= Int(length)
            }
        }
        return nowNanoseconds() - start
    }

    var ours: [UInt64] = []
    var reference: [UInt64] = []
    for pass in 0..<(warmupPasses + passes) {
        let o: UInt64, r: UInt64
        if pass % 2 == 0 {
            o = try timeOurs(); r = timeReference()
        } else {
            r = timeReference(); o = try timeOurs()
        }
        if pass >= warmupPasses { ours.append(o); reference.append(r) }
    }

    func median(_ values: [UInt64]) -> Double { Double(values.sorted()[values.count / 2]) }
    let oursPerPacket = median(ours) / Double(packetCount)
    let referencePerPacket = median(reference) / Double(packetCount)
    let ratio = oursPerPacket / referencePerPacket
    let target = 1.2
    let payloadBytes = frames.reduce(0) { $0 + $1.count }
    let detail = "\(frames.count) VP8 frames (\(payloadBytes) bytes) into \(packetCount) RTP packets, MTU 1200, "
        + "AES_CM_128_HMAC_SHA1_80: RTPSender.sendVideo (packetize, history, protect) vs memcpy + srtp_protect of the same packets"
    let name = path.split(separator: "/").last.map(String.init) ?? path
    return "{\"op\":\"packetize_protect\",\"input\":\"\(name)\",\"size\":\"\(width)x\(height)\",\"detail\":\"\(detail)\","
        + "\"frames\":\(frames.count),\"packets\":\(packetCount),"
        + "\"ours_ns_per_packet\":\(Int(oursPerPacket.rounded())),\"libsrtp_ns_per_packet\":\(Int(referencePerPacket.rounded())),"
        + "\"ratio_vs_libsrtp\":\(format3(ratio)),\"target\":\(target),\"met\":\(ratio <= target)}"
}

/// Three decimals without Foundation.
func format3(_ value: Double) -> String {
    let thousandths = Int((value * 1000).rounded())
    let fraction = String(thousandths % 1000)
    return "\(thousandths / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
}

guard CommandLine.arguments.count >= 2 else { fail("usage: packetize-bench FILE.ivf...") }
for path in CommandLine.arguments.dropFirst() {
    do {
        print(try benchmark(path: path))
    } catch {
        fail("\(path): \(error)")
    }
}
