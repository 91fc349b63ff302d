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
}
