import RTCShare
import Testing

/// Keyframes on request and periodic ones, on a fake clock: a receiver that asks stops the
/// periodic ones; under congestion requests are held to one per max(3 round trips, 1 s).
@Suite struct KeyframeScheduleTests {
    let ms: Int64 = 1_000

    @Test func periodicKeyframesGoOnlyToAReceiverThatNeverAsked() {
        var s = KeyframeSchedule(periodicMicroseconds: 3_000 * ms)
        s.keyframeSent(at: 0)
        #expect(!s.periodicDue(at: 2_999 * ms))
        #expect(s.periodicDue(at: 3_000 * ms))
        s.keyframeSent(at: 3_000 * ms)
        #expect(!s.periodicDue(at: 5_000 * ms))
        // A NACK the history could not answer is not the receiver asking.
        s.requested(fromReceiver: false)
        #expect(!s.receiverAsks && s.periodicDue(at: 6_000 * ms))
        // A PLI is: from then on it asks when it needs a keyframe, none is made on a timer.
        s.requested(fromReceiver: true)
        #expect(s.receiverAsks)
        let t1 = s.takeRequest(at: 6_000 * ms)
        #expect(t1)
        s.keyframeSent(at: 6_000 * ms)
        #expect(!s.periodicDue(at: 9_000 * ms) && !s.periodicDue(at: 60_000 * ms))
        #expect(!KeyframeSchedule(periodicMicroseconds: nil).periodicDue(at: 60_000 * ms))
    }

    @Test func noPeriodicKeyframeWhileThePathHoldsTheRateDown() {
        var s = KeyframeSchedule(periodicMicroseconds: 3_000 * ms)
        s.keyframeSent(at: 0)
        s.path(lossFraction: 0, roundTrip: 40 * ms, belowMaximum: true)
        #expect(!s.periodicDue(at: 3_000 * ms) && !s.periodicDue(at: 30_000 * ms))
        // Requests are still served.
        s.requested(fromReceiver: false)
        let served = s.takeRequest(at: 30_000 * ms)
        #expect(served)
        s.keyframeSent(at: 30_000 * ms)
        #expect(!s.periodicDue(at: 60_000 * ms))
        // Back at the maximum, the period counts from the last keyframe: one is due at once.
        s.path(lossFraction: 0, roundTrip: 40 * ms, belowMaximum: false)
        #expect(s.periodicDue(at: 60_000 * ms) && !s.periodicDue(at: 32_999 * ms))
    }

    @Test func requestsAreServedAtOnceOnACleanPath() {
        var s = KeyframeSchedule(periodicMicroseconds: nil)
        s.keyframeSent(at: 0)
        s.path(lossFraction: 0.05, roundTrip: 40 * ms, belowMaximum: false)  // random loss, not congestion
        for t in stride(from: 100 * ms, through: 1_000 * ms, by: Int64.Stride(300 * ms)) {
            s.requested(fromReceiver: true)
            #expect(s.nextDeadline == Int64.min)
            let t2 = s.takeRequest(at: t)
            #expect(t2)
        }
        let t3 = s.takeRequest(at: 2_000 * ms)
        #expect(s.requestsHeld == 0 && s.nextDeadline == nil && !t3)
    }

    @Test func underCongestionRequestsWaitForTheHoldAndAreNotLost() {
        var s = KeyframeSchedule(periodicMicroseconds: nil)
        s.path(lossFraction: 0.05, roundTrip: 40 * ms, belowMaximum: true)
        s.requested(fromReceiver: true)
        let t4 = s.takeRequest(at: 1_000 * ms)
        #expect(t4, "the first request is served at once")
        // More PLIs at 1.2 s and 1.5 s: held until 1 s after the keyframe.
        s.requested(fromReceiver: true)
        let t5 = s.takeRequest(at: 1_200 * ms)
        #expect(!t5)
        s.requested(fromReceiver: true)
        let t6 = s.takeRequest(at: 1_500 * ms)
        #expect(!t6)
        #expect(s.nextDeadline == 2_000 * ms && s.requestsHeld == 1)
        let t7 = s.takeRequest(at: 2_000 * ms)
        #expect(t7 && s.nextDeadline == nil)
        // A long round trip holds for three of them.
        s.path(lossFraction: 0.2, roundTrip: 500 * ms, belowMaximum: true)
        s.requested(fromReceiver: true)
        let t8 = s.takeRequest(at: 3_400 * ms)
        #expect(!t8 && s.nextDeadline == 3_500 * ms)
        // A keyframe made meanwhile (the share resumed, a new receiver) settles the request.
        s.keyframeSent(at: 3_450 * ms)
        let t9 = s.takeRequest(at: 5_000 * ms)
        #expect(s.nextDeadline == nil && !t9)
        // Loss gone: served at once again.
        s.path(lossFraction: 0, roundTrip: 40 * ms, belowMaximum: true)
        s.requested(fromReceiver: true)
        let t10 = s.takeRequest(at: 3_500 * ms)
        #expect(t10)
    }
}
