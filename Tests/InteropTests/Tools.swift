import Foundation
import RTCShareMedia
import Testing
import TestSupport

/// What only the interop tests ask of their tools: the built `rtcshare`, and decoding what it
/// sent with ffmpeg down to frame markers.
extension Tools {
    /// The `rtcshare` binary built beside this test bundle (RTCSHARE_BIN overrides).
    static var rtcshare: String {
        if let path = ProcessInfo.processInfo.environment["RTCSHARE_BIN"] { return path }
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return here.appendingPathComponent("rtcshare").path
    }

    /// Decodes a video file with ffmpeg to 8-bit luma frames of `width` x `height`, one per
    /// frame in the file (no frame-rate conversion).
    static func decodeLuma(_ path: String, width: Int, height: Int) throws -> [Data] {
        let ffmpeg = try #require(which("ffmpeg"), "ffmpeg is not installed (scripts/setup installs it)")
        let result = try run(ffmpeg, ["-v", "error", "-i", path, "-fps_mode", "passthrough",
                                      "-f", "rawvideo", "-pix_fmt", "gray", "-"])
        guard result.status == 0 else { throw DecodeError(message: result.stderr) }
        let size = width * height
        return stride(from: 0, to: result.stdout.count - size + 1, by: size).map {
            result.stdout.subdata(in: $0..<$0 + size)
        }
    }

    /// Frame markers of 8-bit luma frames of `width` x `height`; nil where one does not read.
    static func markers(_ frames: [Data], width: Int, height: Int) -> [UInt32?] {
        frames.map { frame in
            frame.withUnsafeBytes { raw in
                FrameMarker.read(luma: raw.bindMemory(to: UInt8.self).baseAddress!, stride: width,
                                 width: width, rows: height)?.counter
            }
        }
    }

    /// Splits raw 8-bit luma (`width` x `height` a frame) into frames.
    static func lumaFrames(_ data: Data, width: Int, height: Int) -> [Data] {
        let size = width * height
        return stride(from: 0, to: data.count - size + 1, by: size).map { data.subdata(in: $0..<$0 + size) }
    }

    /// CLOCK_MONOTONIC in µs: the clock of rtcshare's capture times (the frame marker's row 2
    /// holds their low 32 bits) and of the test peers' time.monotonic().
    static func monotonicMicroseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }

    struct DecodeError: Error { let message: String }
}
