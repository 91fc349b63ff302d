@testable import RTCShareRTP
import Testing

@Suite struct UnfinishedFrameWatchTests {
    @Test func aFrameThatEndsIsNotWatched() {
        var w = UnfinishedFrameWatch()
        w.videoArrived(sequence: 1, timestamp: 900, marker: false, at: 0)
        #expect(w.deadline == UnfinishedFrameWatch.minimumWaitMicroseconds)
        w.videoArrived(sequence: 2, timestamp: 900, marker: true, at: 2_000)
        #expect(w.deadline == nil)
        let due1 = w.takeDue(at: 1_000_000)
        #expect(!due1)
    }

    @Test func aSilenceAfterAnUnfinishedPacketIsDueOnce() {
        var w = UnfinishedFrameWatch()
        w.videoArrived(sequence: 10, timestamp: 900, marker: false, at: 0)
        let due2 = w.takeDue(at: 9_999)
        #expect(!due2)
        let due3 = w.takeDue(at: 10_000)
        #expect(due3)
        let due4 = w.takeDue(at: 20_000)
        #expect(!due4, "said once")
        #expect(w.deadline == nil)
        // The next packet (the frame's tail, repaired) arms nothing: it ends the frame.
        w.videoArrived(sequence: 11, timestamp: 900, marker: true, at: 60_000)
        #expect(w.deadline == nil)
    }

    @Test func theWaitFollowsTheSpacingOfAFramesPackets() {
        var w = UnfinishedFrameWatch()
        for k in 0..<3 { w.videoArrived(sequence: UInt16(k), timestamp: 900, marker: false, at: Int64(k) * 9_000) }
        #expect(w.spacingMicroseconds == 9_000)
        #expect(w.waitMicroseconds == 27_000)
        #expect(w.deadline == Int64(18_000 + 27_000))
        // A slow pacer does not stretch it past the cap; a new frame's first packet is no sample.
        var slow = UnfinishedFrameWatch()
        slow.videoArrived(sequence: 0, timestamp: 900, marker: false, at: 0)
        slow.videoArrived(sequence: 1, timestamp: 900, marker: true, at: 30_000)
        slow.videoArrived(sequence: 2, timestamp: 1800, marker: false, at: 50_000)
        #expect(slow.spacingMicroseconds == 30_000)
        #expect(slow.waitMicroseconds == UnfinishedFrameWatch.maximumWaitMicroseconds)
    }

    @Test func anOlderPacketNeitherArmsNorClearsTheWatch() {
        var w = UnfinishedFrameWatch()
        w.videoArrived(sequence: 65535, timestamp: 900, marker: false, at: 0)
        w.videoArrived(sequence: 65530, timestamp: 450, marker: true, at: 3_000)  // a resend
        #expect(w.deadline == UnfinishedFrameWatch.minimumWaitMicroseconds)
        w.videoArrived(sequence: 0, timestamp: 1800, marker: false, at: 4_000)  // wraps: newer, a new frame
        #expect(w.deadline == 4_000 + UnfinishedFrameWatch.minimumWaitMicroseconds)
        w.videoArrived(sequence: 65535, timestamp: 900, marker: true, at: 5_000)  // a duplicate: older
        #expect(w.deadline == 4_000 + UnfinishedFrameWatch.minimumWaitMicroseconds)
    }
}
