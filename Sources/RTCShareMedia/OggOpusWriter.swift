import COgg
import Glibc

/// Writes Opus packets to an Ogg Opus file (RFC 7845), which ffmpeg, GStreamer, VLC and
/// browsers play: for recording a share's audio or checking it without a network.
///
/// ```
/// page 1 (BOS):  OpusHead   "OpusHead" 1(version) channels pre-skip(u16) input-rate(u32)
///                           output-gain(s16 = 0) mapping-family(0)        (19 bytes, LE)
/// page 2:        OpusTags   "OpusTags" vendor-length(u32) vendor comment-count(u32 = 0)
/// pages 3…:      audio, each page's granule position = pre-skip + 48 kHz samples of every
///                packet completed on it; the last page carries EOS
/// ```
///
/// libogg does the page framing (segment tables, sequence numbers, the page CRC): it is small,
/// long-lived and exactly the reference for those details. Its stream state is allocated by
/// `ogg_stream_init` when the file opens (29 KiB: 16 KiB of body and a 1024-entry lacing
/// table) and grows at most once, slightly, because pages are taken out as soon as libogg
/// forms one (every ~4 KiB of packets): measured peak 33 KiB with the largest Opus packets.
/// Budgeted by measurement in the plan (`plannedHeapBytes`, checked by OggOpusWriterTests).
///
/// One packet is held back so that the last one written can be flagged end-of-stream when the
/// file closes. Nothing is allocated per packet. Non-copyable: one value owns the file.
public struct OggOpusWriter: ~Copyable {
    /// Heap bytes the plan reserves for the writer (libogg's stream state and the held packet).
    public static let plannedHeapBytes = 48 << 10

    public let path: String
    public let channels: Int
    public let preSkip: Int
    /// Packets handed to `write` so far.
    public private(set) var packets = 0
    private var fd: Int32
    private let stream: UnsafeMutablePointer<ogg_stream_state>
    private let held: UnsafeMutableRawBufferPointer
    private var heldBytes = -1  // -1: nothing held
    private var heldSamples = 0
    /// 48 kHz samples in all packets given to libogg so far.
    private var samplesWritten: Int64 = 0
    private var packetNumber: Int64 = 0

    /// Heap bytes the writer holds now, from libogg's own record of what it allocated (its
    /// body, lacing and granule arrays) plus the stream state and the held packet: the
    /// writer's figure alone, where the allocator's statistics are the whole process's.
    public var heapBytes: Int {
        let state = stream.pointee
        let lacing = Int(state.lacing_storage) * (MemoryLayout<Int32>.size + MemoryLayout<ogg_int64_t>.size)
        return MemoryLayout<ogg_stream_state>.size + Int(state.body_storage) + lacing + held.count
    }

    /// Creates (or truncates) `path` and writes the two header pages. `preSkip` is the
    /// encoder's look-ahead at 48 kHz (samples a player drops); `inputSampleRate` is what the
    /// audio was captured at (informational; 0: unknown); `serial` names the logical stream.
    public init(path: String, channels: Int, preSkip: Int, inputSampleRate: Int,
                serial: Int32, vendor: String = "rtcshare") throws(MediaError) {
        guard channels == 1 || channels == 2 else {
            throw .invalidConfiguration("Ogg Opus channels must be 1 or 2, not \(channels)")
        }
        guard (0...Int(UInt16.max)).contains(preSkip), (0...Int(UInt32.max)).contains(inputSampleRate) else {
            throw .invalidConfiguration("Ogg Opus pre-skip \(preSkip) or input rate \(inputSampleRate)")
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .file(path: path, operation: .open, errno: errno) }
        let stream = UnsafeMutablePointer<ogg_stream_state>.allocate(capacity: 1)
        guard ogg_stream_init(stream, serial) == 0 else {
            stream.deallocate()
            _ = Glibc.close(fd)
            throw .library("libogg: cannot set up the stream (out of memory)")
        }
        var head: [UInt8] = Array("OpusHead".utf8) + [1, UInt8(channels)]
        head += [UInt8(preSkip & 0xFF), UInt8(preSkip >> 8)]
        head += (0..<4).map { UInt8((inputSampleRate >> (8 * $0)) & 0xFF) }
        head += [0, 0, 0]  // output gain 0 dB, channel mapping family 0 (mono/stereo)
        let vendorBytes = Array(vendor.utf8)
        var tags: [UInt8] = Array("OpusTags".utf8)
        tags += (0..<4).map { UInt8((vendorBytes.count >> (8 * $0)) & 0xFF) }
        tags += vendorBytes
        tags += [0, 0, 0, 0]  // no user comments
        // RFC 7845 §3: OpusHead alone on the first page, OpusTags ending the second, audio
        // starting on a fresh page — so each header packet is flushed into its own page.
        do throws(MediaError) {
            try Self.submit(head, beginning: true, number: 0, to: stream)
            try Self.flushPages(stream, fd: fd, path: path)
            try Self.submit(tags, beginning: false, number: 1, to: stream)
            try Self.flushPages(stream, fd: fd, path: path)
        } catch {
            ogg_stream_clear(stream)
            stream.deallocate()
            _ = Glibc.close(fd)
            throw error
        }
        self.path = path
        self.channels = channels
        self.preSkip = preSkip
        self.fd = fd
        self.stream = stream
        self.held = .allocate(byteCount: OpusEncoder.maximumPacketBytes, alignment: 16)
        self.packetNumber = 2
    }

    deinit {
        if fd >= 0 {
            // Dropped without close(): finish the stream, best effort.
            try? submitHeld(endOfStream: true)
            try? flushPages()
            _ = Glibc.close(fd)
        }
        ogg_stream_clear(stream)
        stream.deallocate()
        held.deallocate()
    }

    /// Appends one Opus packet holding `samples` 48 kHz samples per channel (960 for 20 ms).
    public mutating func write(packet: UnsafeRawBufferPointer, samples: Int = 960) throws(MediaError) {
        precondition(fd >= 0, "OggOpusWriter used after close")
        guard packet.count > 0, packet.count <= held.count, samples > 0, samples <= 5760 else {
            throw .invalidConfiguration("Opus packet of \(packet.count) bytes, \(samples) samples")
        }
        if heldBytes > 0 {
            try submitHeld(endOfStream: false)
            samplesWritten += Int64(heldSamples)
            packetNumber += 1
        }
        held.baseAddress!.copyMemory(from: packet.baseAddress!, byteCount: packet.count)
        heldBytes = packet.count
        heldSamples = samples
        packets += 1
    }

    /// Writes the last packet with the end-of-stream flag, flushes and closes the file. Throws
    /// the first failure; the descriptor is closed either way.
    public consuming func close() throws(MediaError) {
        var failure: MediaError?
        do {
            try submitHeld(endOfStream: true)
            heldBytes = -1
            try flushPages()
        } catch { failure = error }
        if Glibc.close(fd) != 0, failure == nil { failure = .file(path: path, operation: .close, errno: errno) }
        fd = -1
        if let failure { throw failure }
    }

    // MARK: internals

    /// Gives the held packet to libogg, its granule position counting it (RFC 7845 §4: pre-skip
    /// plus every sample so far), and writes any page that completes. The caller advances the
    /// counters.
    private func submitHeld(endOfStream: Bool) throws(MediaError) {
        guard heldBytes > 0 else { return }
        var packet = ogg_packet(packet: held.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes: heldBytes,
                                b_o_s: 0, e_o_s: endOfStream ? 1 : 0,
                                granulepos: Int64(preSkip) + samplesWritten + Int64(heldSamples),
                                packetno: packetNumber)
        guard ogg_stream_packetin(stream, &packet) == 0 else { throw .library("libogg: packetin failed") }
        var page = ogg_page()
        while ogg_stream_pageout(stream, &page) != 0 { try writePage(page) }
    }

    private static func submit(_ bytes: [UInt8], beginning: Bool, number: Int64,
                               to stream: UnsafeMutablePointer<ogg_stream_state>) throws(MediaError) {
        var copy = bytes
        let code = copy.withUnsafeMutableBufferPointer { b in
            var packet = ogg_packet(packet: b.baseAddress, bytes: b.count, b_o_s: beginning ? 1 : 0, e_o_s: 0,
                                    granulepos: 0, packetno: number)
            return ogg_stream_packetin(stream, &packet)
        }
        guard code == 0 else { throw .library("libogg: packetin failed") }
    }

    private func flushPages() throws(MediaError) { try Self.flushPages(stream, fd: fd, path: path) }

    private static func flushPages(_ stream: UnsafeMutablePointer<ogg_stream_state>, fd: Int32,
                                   path: String) throws(MediaError) {
        var page = ogg_page()
        while ogg_stream_flush(stream, &page) != 0 { try writePage(page, fd: fd, path: path) }
    }

    private func writePage(_ page: ogg_page) throws(MediaError) { try Self.writePage(page, fd: fd, path: path) }

    private static func writePage(_ page: ogg_page, fd: Int32, path: String) throws(MediaError) {
        try writeAll(UnsafeRawPointer(page.header), page.header_len, fd: fd, path: path)
        try writeAll(UnsafeRawPointer(page.body), page.body_len, fd: fd, path: path)
    }

    private static func writeAll(_ base: UnsafeRawPointer?, _ count: Int, fd: Int32, path: String) throws(MediaError) {
        guard let base else { return }
        var offset = 0
        while offset < count {
            let n = Glibc.write(fd, base + offset, count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw .file(path: path, operation: .write, errno: errno)
            }
            offset += n
        }
    }
}
