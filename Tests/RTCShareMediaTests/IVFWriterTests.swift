import Foundation
import Glibc
import RTCShareCore
import TestSupport
import Testing

@testable import RTCShareMedia

@Suite struct IVFWriterTests {
    private static func temporaryPath(_ name: String) -> String {
        "\(NSTemporaryDirectory())rtcshare-\(getpid())-\(UUID().uuidString.prefix(8))-\(name).ivf"
    }

    private static func le16(_ b: [UInt8], _ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 }
    private static func le32(_ b: [UInt8], _ at: Int) -> Int { le16(b, at) | le16(b, at + 2) << 16 }
    private static func le64(_ b: [UInt8], _ at: Int) -> Int64 {
        Int64(le32(b, at)) | Int64(le32(b, at + 4)) << 32
    }

    @Test func tenEncodedFramesReadBackFieldByField() throws {
        let path = Self.temporaryPath("vp8")
        defer { unlink(path) }
        let rig = try EncodeRig(width: 640, height: 360)
        var encoder = try VP8Encoder(.init(width: 640, height: 360, bitrateKbps: 800))
        var writer = try IVFWriter(path: path, width: 640, height: 360)
        var written: [(pts: Int64, bytes: [UInt8])] = []
        for i in 0..<10 {
            let slot = try rig.frame(i)
            var failure: MediaError?
            try encoder.encode(slot) { frame in
                do throws(MediaError) {
                    try writer.write(frame: frame.bytes, pts: frame.ptsMicroseconds)
                } catch { failure = error }
                written.append((frame.ptsMicroseconds, Array(frame.bytes)))
            }
            if let failure { throw failure }
        }
        #expect(writer.frameCount == 10)
        try writer.close()

        let file = try #require(FileManager.default.contents(atPath: path)).map { $0 }
        // File header.
        #expect(Array(file[0..<4]) == Array("DKIF".utf8))                // signature
        #expect(Self.le16(file, 4) == 0)                                   // version
        #expect(Self.le16(file, 6) == 32)                                  // header size
        #expect(Array(file[8..<12]) == Array("VP80".utf8))                // fourcc
        #expect(Self.le16(file, 12) == 640)                                // width
        #expect(Self.le16(file, 14) == 360)                                // height
        #expect(Self.le32(file, 16) == 1_000_000)                          // timebase denominator
        #expect(Self.le32(file, 20) == 1)                                  // timebase numerator
        #expect(Self.le32(file, 24) == 10)                                 // frame count, patched
        #expect(Self.le32(file, 28) == 0)                                  // unused
        // Frame headers and payloads.
        var offset = 32
        for frame in written {
            let size = Self.le32(file, offset)                             // frame size
            #expect(size == frame.bytes.count)
            #expect(Self.le64(file, offset + 4) == frame.pts)              // pts
            #expect(Array(file[(offset + 12)..<(offset + 12 + size)]) == frame.bytes)
            offset += 12 + size
        }
        #expect(offset == file.count)

        // A reader nobody here wrote agrees, where one is installed (CI installs ffmpeg).
        if let report = Self.ffprobe(path) {
            #expect(report.contains("codec_name=vp8"), "\(report)")
            #expect(report.contains("width=640") && report.contains("height=360"), "\(report)")
            #expect(report.contains("nb_read_frames=10"), "\(report)")
        }
    }

    @Test func framesLargerThanTheBufferAreWrittenIntact() throws {
        let path = Self.temporaryPath("big")
        defer { unlink(path) }
        var writer = try IVFWriter(path: path, width: 16, height: 16, timebaseNumerator: 1,
                                   timebaseDenominator: 30, bufferBytes: 64)
        let sizes = [1, 40, 52, 53, 200, 0, 3000, 7]
        for (n, size) in sizes.enumerated() {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }
            try bytes.withUnsafeBytes { try writer.write(frame: $0, pts: Int64(n)) }
        }
        try writer.close()
        let file = try #require(FileManager.default.contents(atPath: path)).map { $0 }
        #expect(Self.le32(file, 16) == 30 && Self.le32(file, 20) == 1)
        #expect(Self.le32(file, 24) == sizes.count)
        var offset = 32
        for (n, size) in sizes.enumerated() {
            #expect(Self.le32(file, offset) == size)
            #expect(Self.le64(file, offset + 4) == Int64(n))
            let expected = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }
            #expect(Array(file[(offset + 12)..<(offset + 12 + size)]) == expected)
            offset += 12 + size
        }
        #expect(offset == file.count)
    }

    @Test func droppingTheWriterStillLeavesAReadableFile() throws {
        let path = Self.temporaryPath("dropped")
        defer { unlink(path) }
        do {
            var writer = try IVFWriter(path: path, width: 8, height: 8)
            try [UInt8](repeating: 1, count: 10).withUnsafeBytes { try writer.write(frame: $0, pts: 5) }
        }
        let file = try #require(FileManager.default.contents(atPath: path)).map { $0 }
        #expect(file.count == 32 + 12 + 10)
        #expect(Self.le32(file, 24) == 1)
    }

    @Test func missingDirectoryIsReportedWithPathAndReason() {
        let path = "/nonexistent-rtcshare-dir/out.ivf"
        do {
            _ = try IVFWriter(path: path, width: 640, height: 360)
            Issue.record("opened \(path)")
        } catch {
            #expect(error == .file(path: path, operation: .open, errno: ENOENT))
            #expect(error.description == "open \(path): No such file or directory")
        }
    }

    @Test func directoryIsNotAWritableFile() {
        let path = NSTemporaryDirectory()
        #expect(throws: MediaError.file(path: path, operation: .open, errno: EISDIR)) {
            _ = try IVFWriter(path: path, width: 640, height: 360)
        }
    }

    @Test func fullDeviceFailsAtTheHeaderWithTheWriteError() {
        // /dev/full accepts the open and refuses every write with ENOSPC.
        #expect(throws: MediaError.file(path: "/dev/full", operation: .write, errno: ENOSPC)) {
            _ = try IVFWriter(path: "/dev/full", width: 640, height: 360)
        }
    }

    @Test func sizeIVFCannotHoldIsRefused() {
        #expect(throws: MediaError.self) {
            _ = try IVFWriter(path: Self.temporaryPath("never"), width: 70000, height: 360)
        }
    }

    /// `ffprobe`'s view of the stream, or nil when ffprobe is not installed.
    private static func ffprobe(_ path: String) -> String? {
        guard let tool = Tools.which("ffprobe") else {
            print("note: ffprobe not installed; IVF file not checked against ffmpeg")
            return nil
        }
        do {
            let result = try Tools.run(tool, ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                              "-show_entries", "stream=codec_name,width,height,nb_read_frames",
                                              "-of", "default=noprint_wrappers=1", path])
            return String(decoding: result.stdout, as: UTF8.self) + result.stderr
        } catch {
            return "ffprobe did not start: \(error)"
        }
    }
}
