import COpus
import RTCShareCore

/// A libopus decoder at 48 kHz, its state inside the `MemoryBudget` like the encoder's.
public struct OpusDecoder: ~Copyable {
    private let state: BudgetBlock
    public let channels: Int
    /// Most samples per channel one packet decodes to (120 ms at 48 kHz).
    public static let maximumFrameSamples = 5760

    public init(budget: MemoryBudget, channels: Int) throws(MediaError) {
        guard channels == 1 || channels == 2 else {
            throw .invalidConfiguration("opus channels must be 1 or 2, not \(channels)")
        }
        let size = Int(opus_decoder_get_size(Int32(channels)))
        let block: BudgetBlock
        do {
            block = try BudgetBlock(budget: budget, byteCount: size, alignment: 16)
        } catch {
            throw .invalidConfiguration("no room in the memory budget for the opus decoder (\(size) bytes)")
        }
        let code = opus_decoder_init(OpaquePointer(block.base), Int32(OpusEncoder.sampleRate), Int32(channels))
        guard code == OPUS_OK else {
            throw .invalidConfiguration("opus decoder init: \(String(cString: opus_strerror(code)))")
        }
        state = block
        self.channels = channels
    }

    /// Decodes one packet (nil: a lost packet, concealed) into interleaved samples; returns the
    /// samples per channel written. A malformed packet throws.
    public func decode(_ packet: UnsafeRawBufferPointer?, into pcm: UnsafeMutableBufferPointer<Int16>,
                       concealedSamples: Int = 960) throws(MediaError) -> Int {
        let capacity = pcm.count / channels
        guard let out = pcm.baseAddress, capacity > 0 else {
            throw .bufferTooSmall(needed: Self.maximumFrameSamples * channels, available: pcm.count)
        }
        let n: Int32
        if let packet, let base = packet.baseAddress, !packet.isEmpty {
            n = opus_decode(OpaquePointer(state.base), base.assumingMemoryBound(to: UInt8.self),
                            Int32(packet.count), out, Int32(capacity), 0)
        } else {
            n = opus_decode(OpaquePointer(state.base), nil, 0, out, Int32(min(capacity, concealedSamples)), 0)
        }
        guard n >= 0 else { throw .invalidConfiguration("opus decode: \(String(cString: opus_strerror(n)))") }
        return Int(n)
    }

    /// Rebuilds the packet before `next` from the in-band FEC (LBRR) data `next` carries
    /// (RFC 6716 §2.1.7), `samples` per channel (the lost packet's duration); returns the
    /// samples written, or nil when `next` carries none (then conceal instead). Call it before
    /// decoding `next` itself.
    public func decodeRedundancy(in next: UnsafeRawBufferPointer, samples: Int,
                                 into pcm: UnsafeMutableBufferPointer<Int16>) -> Int? {
        guard let out = pcm.baseAddress, let base = next.baseAddress, !next.isEmpty,
              samples > 0, samples <= pcm.count / channels else { return nil }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        // No LBRR in the packet (CELT-only, or FEC off): opus_decode would only conceal.
        guard Self.carriesRedundancy(bytes, count: next.count) else { return nil }
        let n = opus_decode(OpaquePointer(state.base), bytes, Int32(next.count), out, Int32(samples), 1)
        return n > 0 ? Int(n) : nil
    }

    /// Whether an Opus packet's first frame carries LBRR (in-band FEC) data, as libopus 1.4's
    /// opus_packet_has_lbrr reads it (1.3, Debian 12's, lacks it): only SILK and hybrid frames
    /// (TOC config < 16) can; the SILK header's first bits are the VAD flags, one per 20 ms
    /// SILK frame, then the LBRR flag (RFC 6716 §4.2.3), and for stereo the side channel's pair
    /// follows. The range coder codes these equiprobable bits as the first byte's top bits.
    public static func carriesRedundancy(_ packet: UnsafePointer<UInt8>, count: Int) -> Bool {
        guard count > 1 else { return false }
        let toc = packet[0]
        let config = toc >> 3
        guard config < 16 else { return false }
        var frames: (UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?) = (nil, nil, nil, nil)
        var sizes: (Int16, Int16, Int16, Int16) = (0, 0, 0, 0)
        var tocOut: UInt8 = 0
        // Up to 48 frames are allowed; a first frame is all this reads, so parse into a small
        // table only when the packet has at most 4 (a 20 ms RTP packet has one).
        guard toc & 3 != 3 || (count > 1 && packet[1] & 0x3F <= 4) else { return false }
        let parsed = withUnsafeMutableBytes(of: &frames) { f in
            withUnsafeMutableBytes(of: &sizes) { z in
                opus_packet_parse(packet, Int32(count), &tocOut,
                                  f.baseAddress!.assumingMemoryBound(to: UnsafePointer<UInt8>?.self),
                                  z.baseAddress!.assumingMemoryBound(to: Int16.self), nil)
            }
        }
        guard parsed > 0, sizes.0 > 0, let first = frames.0 else { return false }
        // SILK frames of 20 ms in one Opus frame: 1 for 10 or 20 ms, 2 for 40, 3 for 60.
        let silkFrames: UInt8
        switch config < 12 ? config & 3 : 1 {
        case 2: silkFrames = 2
        case 3: silkFrames = 3
        default: silkFrames = 1
        }
        let byte = first[0]
        var lbrr = (byte >> (7 - silkFrames)) & 1 == 1
        if toc & 0x04 != 0 { lbrr = lbrr || (byte >> (6 - 2 * silkFrames)) & 1 == 1 }
        return lbrr
    }
}
