/// The H.264 level a picture size and frame rate need (ITU-T H.264 Table A-1: macroblocks per
/// frame and per second), and how SDP says it: the encoder writes this level into its SPS and
/// the SDP (`--peer`) or the WHIP offer announce the same, so a receiver is never sent more than
/// it was told (3.1, `42e01f`, covers up to 1280x720 at 30 fps).
public enum H264Level {
    /// `level_idc` (the level times ten: 31 for 3.1).
    public static func idc(width: Int, height: Int, framesPerSecond: Int) -> Int {
        let mbs = ((width + 15) / 16) * ((height + 15) / 16)
        let rate = mbs * max(framesPerSecond, 1)
        if mbs <= 3_600 && rate <= 108_000 { return 31 }
        if mbs <= 5_120 && rate <= 216_000 { return 32 }
        if mbs <= 8_192 && rate <= 245_760 { return 40 }
        if mbs <= 8_704 && rate <= 522_240 { return 42 }
        if mbs <= 22_080 && rate <= 589_824 { return 50 }
        return 51
    }

    /// RFC 6184 §8.1's `profile-level-id` for constrained baseline at `idc`: profile_idc 0x42,
    /// constraint flags 0xe0, then the level.
    public static func profileLevelID(idc: Int) -> String {
        let hex = String(UInt8(clamping: idc), radix: 16)
        return "42e0" + (hex.count < 2 ? "0" + hex : hex)
    }

    /// The `a=fmtp` parameters rtcshare sends H.264 with: non-interleaved (packetization-mode
    /// 1), and a receiver may answer with another level.
    public static func formatParameters(idc: Int) -> String {
        "profile-level-id=\(profileLevelID(idc: idc));packetization-mode=1;level-asymmetry-allowed=1"
    }
}
