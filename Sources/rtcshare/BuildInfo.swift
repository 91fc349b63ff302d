import COpus
import CSRTP
import CVPX
import RTCShare

/// What this binary is and what it runs on, for `--version` and `--build-info`.
enum BuildInfo {
    static var version: String { RTCShareVersion.current }

    static var versionLine: String { "rtcshare \(version)" }

    static var report: String {
        let vpx = String(cString: vpx_codec_version_str())
        let opus = String(cString: opus_get_version_string())
        let srtp = String(cString: srtp_get_version_string())
        let cpu = CPUFeatures.current.names.joined(separator: " ")
        return """
            rtcshare \(version)
            libvpx \(vpx)
            \(opus)
            \(srtp)
            pixel kernels: \(cpu.isEmpty ? "scalar" : "scalar \(cpu)")
            """
    }
}
