import COpus
import CShims
import RTCShareCore

/// A libopus encoder at 48 kHz producing 20 ms frames, its state placed inside the session's
/// `MemoryBudget` (libopus lets the caller hand in the memory: `opus_encoder_get_size` +
/// `opus_encoder_init`), so audio costs a known, fixed number of bytes and never allocates.
public struct OpusEncoder: ~Copyable {
    /// libopus runs at this rate here; other input rates are resampled before.
    public static let sampleRate = 48_000
    /// Samples per channel in one 20 ms frame.
    public static let frameSamples = 960
    /// Largest Opus packet this encoder writes (RFC 6716 allows 1275 per frame).
    public static let maximumPacketBytes = 1275

    private let state: BudgetBlock
    public let channels: Int
    public private(set) var bitrate: Int

    /// What the audio is, which steers libopus's mode choices.
    public enum Application: Sendable {
        /// Speech and mixed content at low delay (VoIP mode).
        case voice
        /// Music and app audio.
        case audio
    }

    /// Bytes of libopus state an encoder for `channels` (1 or 2) takes from the budget.
    public static func stateBytes(channels: Int) -> Int {
        Int(opus_encoder_get_size(Int32(channels == 1 ? 1 : 2)))
    }

    /// Opens an encoder for 1 or 2 channels at `bitrate` bit/s with in-band FEC on.
    public init(budget: MemoryBudget, channels: Int, bitrate: Int = 64_000,
                application: Application = .audio) throws(MediaError) {
        guard channels == 1 || channels == 2 else {
            throw .invalidConfiguration("opus channels must be 1 or 2, not \(channels)")
        }
        guard (6_000...510_000).contains(bitrate) else {
            throw .invalidConfiguration("opus bitrate must be 6000..510000 bit/s, not \(bitrate)")
        }
        let size = Int(opus_encoder_get_size(Int32(channels)))
        let block: BudgetBlock
        do {
            block = try BudgetBlock(budget: budget, byteCount: size, alignment: 16)
        } catch {
            throw .invalidConfiguration("no room in the memory budget for the opus encoder (\(size) bytes)")
        }
        let encoder = OpaquePointer(block.base)
        let app = application == .voice ? OPUS_APPLICATION_VOIP : OPUS_APPLICATION_AUDIO
        try Self.check(opus_encoder_init(encoder, Int32(Self.sampleRate), Int32(channels), app), "init")
        try Self.check(rtcs_opus_set_bitrate(encoder, Int32(bitrate)), "bitrate")
        try Self.check(rtcs_opus_set_inband_fec(encoder, 1), "inband fec")
        try Self.check(rtcs_opus_set_packet_loss_perc(encoder, Int32(OpusLossProtection.initialPercent)), "packet loss")
        try Self.check(rtcs_opus_set_complexity(encoder, 5), "complexity")
        self.state = block
        self.channels = channels
        self.bitrate = bitrate
    }

    private static func check(_ code: Int32, _ what: String) throws(MediaError) {
        guard code == OPUS_OK else {
            throw .invalidConfiguration("opus \(what): \(String(cString: opus_strerror(code)))")
        }
    }

    private var encoder: OpaquePointer { OpaquePointer(state.base) }

    /// Changes the bitrate from the next frame on.
    public mutating func setBitrate(_ bitsPerSecond: Int) throws(MediaError) {
        guard (6_000...510_000).contains(bitsPerSecond) else {
            throw .invalidConfiguration("opus bitrate must be 6000..510000 bit/s, not \(bitsPerSecond)")
        }
        try Self.check(rtcs_opus_set_bitrate(encoder, Int32(bitsPerSecond)), "bitrate")
        bitrate = bitsPerSecond
    }

    /// Prepares for `percent` packet loss from the next frame on (in-band FEC in proportion; none at 0).
    public mutating func setExpectedLoss(percent: Int) throws(MediaError) {
        guard (0...100).contains(percent) else {
            throw .invalidConfiguration("opus expected loss must be 0..100 %, not \(percent)")
        }
        try Self.check(rtcs_opus_set_packet_loss_perc(encoder, Int32(percent)), "packet loss")
    }

    /// The packet loss the encoder prepares for, percent.
    public var expectedLossPercent: Int {
        var value: Int32 = 0
        return rtcs_opus_get_packet_loss_perc(encoder, &value) == OPUS_OK ? Int(value) : -1
    }

    /// Samples of look-ahead (the pre-skip a decoder discards).
    public var lookahead: Int {
        var value: Int32 = 0
        return rtcs_opus_get_lookahead(encoder, &value) == OPUS_OK ? Int(value) : 0
    }

    /// Encodes one 20 ms frame of interleaved native-endian samples (`frameSamples * channels`)
    /// into `packet`; returns the packet's length.
    public func encode(_ pcm: UnsafeBufferPointer<Int16>,
                       into packet: UnsafeMutableRawBufferPointer) throws(MediaError) -> Int {
        guard pcm.count == Self.frameSamples * channels, let samples = pcm.baseAddress else {
            throw .invalidConfiguration("opus frame must be \(Self.frameSamples * channels) samples, not \(pcm.count)")
        }
        guard let out = packet.baseAddress, packet.count >= 3 else {
            throw .bufferTooSmall(needed: Self.maximumPacketBytes, available: packet.count)
        }
        let n = opus_encode(encoder, samples, Int32(Self.frameSamples),
                            out.assumingMemoryBound(to: UInt8.self),
                            Int32(min(packet.count, Self.maximumPacketBytes)))
        guard n > 0 else {
            throw .invalidConfiguration("opus encode: \(String(cString: opus_strerror(n)))")
        }
        return Int(n)
    }
}
