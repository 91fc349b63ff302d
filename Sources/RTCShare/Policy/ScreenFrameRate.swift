/// The frame rate a share runs at for a bitrate: screen content keeps its resolution (text must
/// stay legible) and gives up frames first when the bitrate is short, down to a floor, and gets
/// them back as the bitrate recovers.
///
/// The rule, kept simple:
/// - What the target allows: the picture at the configured frame rate needs `reference` kbit/s —
///   the configured bitrate, or less when the size needs less (about `bitsPerPixel` per pixel
///   per frame keeps busy screen content sharp: 1280x720 at 20 fps wants ~1.5 Mbit/s). While the
///   target stays above 3/4 of that, every frame goes; below it the frame rate falls in
///   proportion, to `floorFramesPerSecond` (5) at the least, so each frame keeps its bits.
///   Below the floor, quality gives way instead (the encoder's rate control).
/// - Only when the content needs it, looked at once a second: frames are given up only while the
///   encoder spends most of the target (its output ≥ 85 % of it in each of the last two seconds:
///   one keyframe is not enough, and the session does not count a second made at a target 15 %
///   higher or more) — or while it drops frames to hold its rate (a fifth or more of those it was
///   given, in each of the last two seconds): it then spends all it may, though its output can
///   stay under 85 % of a target that also pays for audio, headers and resends. Measured through
///   a 1 Mbit/s path: 720p fractal zoom at ~600 kbit/s came out of libvpx at its coarsest
///   quantizer as 5.5–6.5 KB frames against a 3.7 KB budget, and it dropped one or two of every
///   three, in streaks of up to a second, while its output stayed at 60–76 % of the target.
///   Content that needs less than half the target (a still screen, simple motion) gets every
///   frame back at once. In between the rate holds, so it does not swing with each second's
///   content.
/// - A lowered rate is held at least `raiseAfterSeconds` before it rises again (lowering is at
///   once): on a congested path the encoder's output swings from second to second (a big frame,
///   then a few small ones), and a rate flipping between 20 and 5 each second is worse to watch
///   than a steady lower one.
/// - The encoder may drop a frame to hold its rate (libvpx does when a frame overshoots and its
///   buffer runs low), but never so many in a row that the picture stands still longer than
///   `longestGapMicroseconds`: the frame that would leave it still past that is coded whatever
///   it costs (`mayDrop`). Measured through the 1 Mbit/s path (`bench/run-network.sh
///   bottleneck1m`): busy 720p at libvpx's coarsest quantizer makes 13–29 KB frames, so at a
///   200–300 kbit/s ask libvpx coded one frame in 5–9 and every freeze over 500 ms after the
///   start (0.5–1.5 s, 16 of them) was such a streak of drops, not loss or the frame-rate floor.
public enum ScreenFrameRate {
    public static let bitsPerPixel = 0.08
    public static let floorFramesPerSecond = 5
    public static let raiseAfterSeconds = 3
    /// The longest the sender leaves the picture without a coded frame: under the 500 ms a
    /// viewer calls a freeze, with room for a big frame's transmission time on a thin path.
    public static let longestGapMicroseconds: Int64 = 300_000

    /// Whether the encoder may drop the frame it is given now, `sinceLastCoded` (µs) after the
    /// last frame it coded (nil: none yet), with the next frame due `frameInterval` (µs) later:
    /// not when dropping it would leave the picture still past `longestGapMicroseconds`.
    public static func mayDrop(sinceLastCoded: Int64?, frameInterval: Int64) -> Bool {
        guard let since = sinceLastCoded else { return true }
        return since + max(frameInterval, 0) < longestGapMicroseconds
    }

    /// Frames per second the target allows for `width`x`height`, with the share configured for
    /// `configured` frames per second at `configuredKbps`.
    public static func allowed(targetKbps: Int, configuredKbps: Int, width: Int, height: Int, configured: Int) -> Int {
        let needed = Double(max(width * height, 1)) * bitsPerPixel * Double(configured) / 1000
        let reference = min(Double(max(configuredKbps, 1)), needed) * 0.75
        let affordable = Int((Double(configured) * Double(max(targetKbps, 0)) / reference).rounded())
        return min(configured, max(min(floorFramesPerSecond, configured), affordable))
    }

    /// The frame rate to run at next, from the one in force (`current`) and what the encoder made
    /// in the last second (`encodedKbps`) and the one before (`encodedBeforeKbps`);
    /// `heldSeconds`: how long `current` has been in force.
    /// `encoderDropping`: the encoder dropped a fifth or more of its frames in each of the last
    /// two seconds.
    public static func next(current: Int, encodedKbps: Int, encodedBeforeKbps: Int, targetKbps: Int,
                            configuredKbps: Int, width: Int, height: Int, configured: Int,
                            heldSeconds: Int = Int.max, encoderDropping: Bool = false) -> Int {
        var wanted = current
        if encoderDropping || (encodedKbps * 100 >= targetKbps * 85 && encodedBeforeKbps * 100 >= targetKbps * 85) {
            wanted = allowed(targetKbps: targetKbps, configuredKbps: configuredKbps, width: width, height: height,
                             configured: configured)
        } else if encodedKbps * 2 < targetKbps {
            wanted = configured
        }
        if wanted > current, heldSeconds < raiseAfterSeconds { return current }
        return wanted
    }
}
