import Glibc
import Testing
import RTCShare
import RTCShareCore
import RTCShareIO

/// Y4MSource reads each plane whole, straight into the frame, where its rows are back to back;
/// what it reads must be the file's bytes either way, and its frames carry their place in the
/// stream as capture time.
@Suite struct Y4MSourceReadTests {
    /// A file of `count` frames at 50 fps whose every byte depends on its frame and offset.
    private static func writeClip(_ path: String, width: Int, height: Int, count: Int) -> [[UInt8]] {
        var bytes = Array("YUV4MPEG2 W\(width) H\(height) F50:1 Ip C420jpeg\n".utf8)
        var frames: [[UInt8]] = []
        for f in 0..<count {
            let frame = (0..<(width * height * 3 / 2)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ f &* 7 &+ ($0 >> 9)) }
            frames.append(frame)
            bytes += Array("FRAME\n".utf8) + frame
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        return frames
    }

    private static func read(_ path: String, width: Int, height: Int, count: Int) throws -> ([[UInt8]], [Int64]) {
        let source = try Y4MSource(path: path)
        let budget = try MemoryBudget(capBytes: 8 << 20, prefault: false)
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: width, maxHeight: height, count: 2)
        var frames: [[UInt8]] = [], times: [Int64] = []
        while frames.count < count + 1 {
            switch try source.capture(from: pool, until: MonotonicClock.now() + .seconds(1)) {
            case .frame(let slot):
                times.append(slot.ptsMicroseconds)
                frames.append(slot.withPixels { pixels in
                    (0..<3).flatMap { p in
                        let plane = pixels.plane(p)
                        return (0..<plane.rows).flatMap { Array(plane.row($0)) }
                    }
                })
            case .ended:
                return (frames, times)
            default:
                continue
            }
        }
        return (frames, times)
    }

    @Test func framesReadAreTheFilesBytesWithTheStreamsSpacingAsCaptureTime() throws {
        // 640x480: the planes (307,200 and 76,800 bytes) are over the input's 64 KiB buffer and
        // are read straight into the frame once it is drained; 34x18 (odd chroma) goes through it.
        for (width, height) in [(640, 480), (34, 18)] {
            let path = "/tmp/rtcshare-y4mread-\(getpid())-\(width).y4m"
            let written = Self.writeClip(path, width: width, height: height, count: 4)
            defer { unlink(path) }
            let (frames, times) = try Self.read(path, width: width, height: height, count: 4)
            #expect(frames == written, "\(width)x\(height): frames differ from the file's")
            // 50 fps: 20 ms apart on the stream's schedule, however late each read was.
            #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 20_000 }, "\(times)")
        }
    }

    /// Fed through a pipe, the source has the pipe hold a whole 720p picture (1 MiB, the most
    /// the kernel gives unprivileged), so a frame crosses in two turns of writer and reader, not
    /// ~22; what it reads through it is still the fed bytes.
    @Test func aPipeIsEnlargedSoAPictureCrossesInTwoTurns() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let getPipeSize: Int32 = 1032  // F_GETPIPE_SZ
        #expect(fcntl(fds[0], getPipeSize) == 64 << 10, "a new pipe holds 64 KiB")
        let (width, height) = (64, 32)
        let frame = (0..<(width * height * 3 / 2)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let bytes = Array("YUV4MPEG2 W\(width) H\(height) F30:1 Ip C420jpeg\n".utf8) + Array("FRAME\n".utf8) + frame
        #expect(bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) } == bytes.count)
        close(fds[1])
        fds[1] = -1
        // The read end under its /dev/fd name: the source opens the same pipe.
        let source = try Y4MSource(path: "/dev/fd/\(fds[0])")
        #expect(fcntl(fds[0], getPipeSize) == 1 << 20)
        let budget = try MemoryBudget(capBytes: 1 << 20, prefault: false)
        let pool = try FramePool(budget: budget, format: .i420, maxWidth: width, maxHeight: height, count: 1)
        guard case .frame(let slot) = try source.capture(from: pool, until: MonotonicClock.now() + .seconds(1)) else {
            Issue.record("no frame read through the pipe")
            return
        }
        let read = slot.withPixels { pixels in
            (0..<3).flatMap { p in (0..<pixels.plane(p).rows).flatMap { Array(pixels.plane(p).row($0)) } }
        }
        #expect(read == frame)
    }
}
