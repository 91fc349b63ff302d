import CXCB
import Foundation
import RTCShare
import RTCShareCore
import RTCShareIO
import TestSupport
import Testing

/// `--cursor` on X11: the pointer (Xvfb's root cursor, read through XFIXES) is blended into the
/// picture where the pointer is, and a pointer that moves on a still screen is a new frame.
@Suite(.serialized) struct X11CursorTests {
    /// Pixels of the 32x32 square around (x, y) whose luma is more than 30 from `background`.
    static func marked(_ frame: borrowing FrameSlot, around x: Int, _ y: Int, background: UInt8) -> Int {
        frame.withPixels { pixels in
            var count = 0
            for row in max(y - 16, 0)..<(y + 16) {
                for column in max(x - 16, 0)..<(x + 16) where abs(Int(pixels.plane(0).row(row)[column]) - Int(background)) > 30 {
                    count += 1
                }
            }
            return count
        }
    }

    static func warp(_ xvfb: Xvfb, to x: Int, _ y: Int) throws {
        var screen: Int32 = 0
        let c = try #require(xcb_connect(xvfb.display, &screen))
        defer { xcb_disconnect(c) }
        let root = try #require(xcb_setup_roots_iterator(xcb_get_setup(c)).data).pointee.root
        let error = xcb_request_check(c, xcb_warp_pointer_checked(c, 0, root, 0, 0, 0, 0, Int16(x), Int16(y)))
        #expect(error == nil)
        free(error)
    }

    /// Captures until a frame comes (or `seconds` pass); the marked pixels around each point of
    /// it, nil without a frame.
    static func nextFrame(_ source: X11Source, _ pool: FramePool, within seconds: Double,
                          marksAround points: [(Int, Int)], background: UInt8) throws -> [Int]? {
        let end = MonotonicClock.now() + .milliseconds(Int64(seconds * 1000))
        while MonotonicClock.now() < end {
            let outcome = try source.capture(from: pool, until: end)
            if case .frame(let frame) = consume outcome {
                return points.map { marked(frame, around: $0.0, $0.1, background: background) }
            }
        }
        return nil
    }

    @Test func thePointerIsDrawnWhereItIsAndItsMoveIsAFrame() throws {
        let xvfb = try Xvfb(width: 640, height: 480)
        defer { xvfb.stop() }
        try X11CaptureTests.paintScreen(xvfb)
        try Self.warp(xvfb, to: 520, 40)
        let background = UInt8(X11CaptureTests.Box(x: 0, y: 0, width: 1, height: 1, rgb: X11CaptureTests.background).luma.rounded())

        for drawn in [false, true] {
            let source = try X11Source(display: xvfb.display, framesPerSecond: 30, cursor: drawn)
            let budget = try MemoryBudget(capBytes: 16 << 20, prefault: false)
            let pool = try FramePool(budget: budget, format: .i420, maxWidth: 640, maxHeight: 480, count: 2)
            try source.prepare(budget: budget)
            let first = try Self.nextFrame(source, pool, within: 2, marksAround: [(520, 40)], background: background)
            let there = try #require(first)[0]
            if drawn {
                #expect(there >= 20, "\(there) pointer pixels at the pointer")
            } else {
                #expect(there == 0, "\(there) pointer pixels without --cursor")
            }
            guard drawn else { continue }
            // The screen stays still; only the pointer moves: that is a new frame, the pointer
            // now at its new place and gone from the old one.
            try Self.warp(xvfb, to: 540, 300)
            let moved = try Self.nextFrame(source, pool, within: 2, marksAround: [(540, 300), (520, 40)], background: background)
            let marks = try #require(moved, "no frame after the pointer moved")
            let (atNew, atOld) = (marks[0], marks[1])
            #expect(atNew >= 20, "\(atNew) pointer pixels at the new place")
            #expect(atOld == 0, "\(atOld) pointer pixels left at the old place")
        }
    }
}
