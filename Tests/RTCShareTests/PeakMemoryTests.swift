import Foundation
import Testing
@testable import RTCShareIO

/// Reading this process's peak from /proc/self/status (see PeakMemoryReportTests for why not
/// getrusage).
@Suite struct PeakMemoryTests {
    static func parse(_ text: String) -> Int? {
        Array(text.utf8).withUnsafeBufferPointer { PeakMemory.highWaterKilobytes(in: $0) }
    }

    @Test func theVmHWMLineIsRead() {
        #expect(Self.parse("Name:\trtcshare\nVmPeak:\t  99 kB\nVmHWM:\t   23456 kB\nVmRSS:\t 20000 kB\n") == 23456)
    }

    @Test func aStatusWithoutItOrCutShortIsNil() {
        #expect(Self.parse("Name:\trtcshare\nVmRSS:\t 20000 kB\n") == nil)
        #expect(Self.parse("Name:\trtcshare\nVmHWM:\t") == nil)
        #expect(Self.parse("") == nil)
        #expect(Self.parse("VmHWM:\t 5 kB\n") == nil, "only at a line's start after the first")
    }

    @Test func thisProcessPeakIsTheKernelsMark() throws {
        let hwm = try #require(PeakMemory.highWaterBytes())
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try #require(Int(line.split(separator: " ").dropFirst().first { !$0.isEmpty } ?? ""))
        #expect(hwm / 1024 <= kilobytes, "read \(hwm / 1024) kB, the kernel says \(kilobytes) kB now")
    }
}
