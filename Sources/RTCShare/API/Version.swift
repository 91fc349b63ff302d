/// rtcshare's version: the one number `rtcshare --version` prints and the C ABI's
/// `rtcshare_version()` returns (with its ABI number beside it), so a gateway's log and the
/// CLI never disagree about what was built. 0.x: nothing has been released yet and the Swift
/// API still changes; what C callers may rely on is `RTCSHARE_ABI_VERSION`, not this.
public enum RTCShareVersion {
    public static let current = "0.1.0"
}
