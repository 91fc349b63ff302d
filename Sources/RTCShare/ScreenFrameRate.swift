/// The frame rate a share runs at for a bitrate: screen content keeps its resolution (text must
/// stay legible) and gives up frames first when the bitrate is short, down to a floor, and gets
/// them back as the bitrate recovers.
///
/// The rule, kept simple: the picture at the configured frame rate needs `reference` kbit/s —
/// the configured bitrate, or less when the size needs less (about `bitsPerPixel` per pixel per
/// frame keeps screen content sharp: 1280x720 at 20 fps wants ~1.5 Mbit/s). While the target
/// stays above 3/4 of that, the configured rate holds (the encoder absorbs small cuts); below it
/// the frame rate falls in proportion, to `floorFramesPerSecond` (5) at the least, so each frame
/// keeps the bits it had. Below the floor, quality gives way instead (the encoder's rate
/// control).
public enum ScreenFrameRate {
    public static let bitsPerPixel = 0.08
    public static let floorFramesPerSecond = 5

    /// Frames per second for `targetKbps` at `width`x`height`, with the share configured for
    /// `configured` frames per second at `configuredKbps`.
    public static func framesPerSecond(targetKbps: Int, configuredKbps: Int, width: Int, height: Int,
                                       configured: Int) -> Int {
        let needed = Double(max(width * height, 1)) * bitsPerPixel * Double(configured) / 1000
        let reference = min(Double(max(configuredKbps, 1)), needed) * 0.75
        let affordable = Int((Double(configured) * Double(max(targetKbps, 0)) / reference).rounded())
        return min(configured, max(min(floorFramesPerSecond, configured), affordable))
    }
}
