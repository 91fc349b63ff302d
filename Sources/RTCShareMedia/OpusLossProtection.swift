/// How much packet loss the Opus encoder prepares for (`OPUS_SET_PACKET_LOSS_PERC`), from the
/// receiver's reports on the audio stream. libopus spends part of the bitrate on in-band FEC
/// (a low-rate copy of the previous frame inside each packet) in proportion to this figure and
/// adds none at 0: on a clean path the whole bitrate goes to the sound, on a lossy one the
/// receiver can rebuild a lost frame from the next packet instead of concealing it.
///
/// Each report's fraction lost is smoothed (half the new value, half the old) and the
/// expectation moves between a few levels — 0, 1, 5, 10, 20 % — up as soon as the smoothed loss
/// reaches a level, down only once it is under 80 % of the level held, so one report does not
/// make the encoder flap. Sans-IO: reports in, a level out.
public struct OpusLossProtection: Sendable, Equatable {
    public static let levels = [0, 1, 5, 10, 20]
    /// Before any report: what a share on an unknown path prepares for.
    public static let initialPercent = 5

    public private(set) var percent = Self.initialPercent
    /// The smoothed loss, percent; nil before the first report.
    public private(set) var smoothedPercent: Double?

    public init() {}

    /// Takes one receiver report's fraction lost (lost / 256); returns the new level when it
    /// changed, nil otherwise.
    public mutating func receiverReport(fractionLost: UInt8) -> Int? {
        let loss = Double(fractionLost) * 100 / 256
        let smoothed = smoothedPercent.map { ($0 + loss) / 2 } ?? loss
        smoothedPercent = smoothed
        var next = Self.levels.last { Double($0) <= smoothed } ?? 0
        if next < percent && smoothed >= Double(percent) * 0.8 { next = percent }
        guard next != percent else { return nil }
        percent = next
        return next
    }
}
