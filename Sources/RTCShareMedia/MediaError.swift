import CVPX
import Glibc
import RTCShareCore

/// Why a media operation failed: codec calls, encoder input, encoded-file output. The one place
/// libvpx's `vpx_codec_err_t` becomes a Swift error.
public enum MediaError: Error, Equatable, CustomStringConvertible {
    /// A configuration value is out of range; the string names it and its allowed range.
    case invalidConfiguration(String)
    /// A frame that is not what the encoder was made for (it takes I420 at its fixed size).
    case frameMismatch(format: PixelFormat, width: Int, height: Int)
    /// A caller-given output buffer cannot hold the result.
    case bufferTooSmall(needed: Int, available: Int)
    /// libvpx refused a call; `detail` is libvpx's own explanation when it gave one.
    case vpx(VPXStatus, detail: String?)
    /// A file system call failed on `path`; `errno` is the C error number.
    case file(path: String, operation: FileOperation, errno: Int32)
    /// Untrusted input (a WAV file, producer PCM) is not what it claims to be; the string says
    /// what was wrong, for one line to the user.
    case malformedInput(String)
    /// openh264 refused a call: its return code and what was being done.
    case openh264(Int32, String)
    /// A library call other than libvpx's failed (libspeexdsp, libogg); the string names it.
    case library(String)

    /// libvpx's error kinds (`vpx_codec_err_t` other than OK).
    public enum VPXStatus: Equatable, Sendable {
        case unspecified
        case memoryError
        case abiMismatch
        case incapable
        case unsupportedBitstream
        case unsupportedFeature
        case corruptFrame
        case invalidParameter
        case unknown(Int32)
    }

    /// The file system call that failed.
    public enum FileOperation: String, Sendable {
        case open, read, write, seek, close
    }

    /// The error for a libvpx status, or nil for `VPX_CODEC_OK`. `context` (the codec the call
    /// was made on, if it is open) supplies libvpx's detail string.
    init?(vpx status: vpx_codec_err_t, context: UnsafeMutablePointer<vpx_codec_ctx_t>? = nil) {
        let kind: VPXStatus
        switch status {
        case VPX_CODEC_OK: return nil
        case VPX_CODEC_ERROR: kind = .unspecified
        case VPX_CODEC_MEM_ERROR: kind = .memoryError
        case VPX_CODEC_ABI_MISMATCH: kind = .abiMismatch
        case VPX_CODEC_INCAPABLE: kind = .incapable
        case VPX_CODEC_UNSUP_BITSTREAM: kind = .unsupportedBitstream
        case VPX_CODEC_UNSUP_FEATURE: kind = .unsupportedFeature
        case VPX_CODEC_CORRUPT_FRAME: kind = .corruptFrame
        case VPX_CODEC_INVALID_PARAM: kind = .invalidParameter
        default: kind = .unknown(Int32(bitPattern: status.rawValue))
        }
        var detail: String?
        if let context, context.pointee.priv != nil, let text = vpx_codec_error_detail(context) {
            detail = String(cString: text)
        }
        self = .vpx(kind, detail: detail)
    }

    /// Throws the error for a failing libvpx status.
    static func check(vpx status: vpx_codec_err_t,
                      context: UnsafeMutablePointer<vpx_codec_ctx_t>? = nil) throws(MediaError) {
        if let error = MediaError(vpx: status, context: context) { throw error }
    }

    public var description: String {
        switch self {
        case .invalidConfiguration(let what):
            "invalid encoder configuration: \(what)"
        case .frameMismatch(let format, let width, let height):
            "frame is \(format) \(width)x\(height), not what the encoder was made for"
        case .bufferTooSmall(let needed, let available):
            "output buffer too small: \(needed) bytes needed, \(available) available"
        case .vpx(let kind, let detail):
            "libvpx: \(kind)" + (detail.map { " (\($0))" } ?? "")
        case .file(let path, let operation, let errno):
            "\(operation.rawValue) \(path): \(String(cString: strerror(errno)))"
        case .openh264(let code, let what):
            "openh264: \(what) failed (code \(code))"
        case .malformedInput(let what):
            what
        case .library(let what):
            what
        }
    }
}
