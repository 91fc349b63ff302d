import Foundation
import TestSupport
import Testing

/// A WHIP share into aiortc (`Tests/Peers/whip_server.py`, side b of a `NetworkLab`) that
/// outlives what the field does to it: a 45 s outage (everything dropped both ways, longer than
/// consent) and the host's address replaced. aiortc takes no ICE restart (PATCH: 405), so the
/// share publishes a new session each time; what counts is how soon the server decodes media
/// again, and that no session is left behind.
@Suite(.serialized) struct ReconnectLabTests {
    static let unavailable = NetworkLab.unavailable.map { "ReconnectLabTests skipped: \($0)" }
    typealias Server = OutageTests.LabWHIPServer

    /// The low 32 bits of CLOCK_MONOTONIC µs: the clock the test source stamps its markers with.
    static func monotonic32() -> UInt32 { UInt32(truncatingIfNeeded: Tools.monotonicMicroseconds()) }

    /// Capture times (marker row 2) of the frames session `id` decoded so far.
    static func captures(_ summary: [String: Any]?, _ id: String) -> [UInt32] {
        let own = (summary?["by_session"] as? [String: Any])?[id] as? [String: Any]
        return (own?["markers"] as? [[Int]] ?? []).compactMap { $0.count == 2 ? UInt32(truncatingIfNeeded: $0[1]) : nil }
    }

    /// Polls the server until it has decoded a frame of `id` captured after `since`; how long
    /// that took (s), or nil after `timeout`.
    static func decodedAfter(_ since: UInt32, _ server: Server, _ id: String, timeout: TimeInterval) throws -> Double? {
        let start = Date()
        var found = false
        try waitUntil(timeout: timeout, interval: 0.1) {
            found = Self.captures(try server.summary(), id).contains { Int32(bitPattern: $0 &- since) > 0 }
            return found
        }
        return found ? Date().timeIntervalSince(start) : nil
    }

    /// Everything dropped for 45 s, with the default 30 s consent: consent is lost, an ICE
    /// restart is asked for (aiortc: 405, or no answer while the path is down) and new POSTs
    /// are tried with back-off; the server decodes media captured after the path's return
    /// within 5 s of it, and every session made is DELETEd (the one the outage cut off once
    /// the path is back).
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func afterAFortyFiveSecondOutageTheShareIsPublishedAgainWithinFiveSeconds() throws {
        let whipLab = try OutageTests.WHIPLab(name: "rclong", net: 95)
        let (lab, server) = (whipLab.lab, whipLab.server)
        let share = try whipLab.share([
            "--size", "640x360", "--whip", server.base + "/whip/long", "--whip-bind", "\(lab.a.address):0",
            "--duration", "120",
        ])
        defer { share.kill() }
        try #require(share.waitForOutput(containing: "WHIP: connected", timeout: 20), "\(share.stderr)")
        usleep(3_000_000)
        try lab.cut()
        usleep(45_000_000)
        try lab.restore()
        let back = Self.monotonic32()
        let took = try Self.decodedAfter(back, server, "long", timeout: 30)
        print("45 s outage (aiortc): media captured after the path came back decoded "
              + "\(took.map { String(format: "%.1f", $0) } ?? "never") s after it")
        #expect(took.map { $0 <= 5 } == true, "\(share.stderr)")
        #expect(share.stderr.contains("rtcshare: reconnecting"), "\(share.stderr)")
        usleep(2_000_000)  // the DELETE the outage kept back goes once the connection has held 1 s
        #expect(share.stop(SIGINT, timeout: 10) == 0, "\(share.stderr)")
        let summary = try server.summary(finished: "long")
        let made = (summary["offers"] as? [String] ?? []).count
        let deleted = summary["deleted_resources"] as? [String] ?? []
        #expect(deleted.contains("long"), "the session the outage cut off is DELETEd: \(deleted)")
        #expect(Set(deleted).count == made, "\(made) sessions made, DELETEd: \(deleted)")
    }

    /// The host's address replaced while media flows (10.94.0.1 → 10.94.0.3, the old one gone
    /// at once, as with a new lease): rtcshare hears it from the kernel (netlink), finds its
    /// path's address gone, and publishes again from the new one; the server decodes media
    /// captured after the change within 3 s, and the new offer names the new address.
    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func afterTheHostsAddressChangesMediaFromTheNewOneIsDecodedWithinThreeSeconds() throws {
        let whipLab = try OutageTests.WHIPLab(name: "rcaddr", net: 94)
        let (lab, server) = (whipLab.lab, whipLab.server)
        // No --whip-bind: the socket takes every address the host has, now and later.
        let share = try whipLab.share(["--size", "640x360", "--whip", server.base + "/whip/addr", "--duration", "60"])
        defer { share.kill() }
        try #require(share.waitForOutput(containing: "WHIP: connected", timeout: 20), "\(share.stderr)")
        usleep(2_000_000)
        try lab.replaceAddress(of: lab.a, with: "10.94.0.3")
        let changed = Self.monotonic32()
        let took = try Self.decodedAfter(changed, server, "addr", timeout: 30)
        print("address change (aiortc): media captured after the change decoded "
              + "\(took.map { String(format: "%.1f", $0) } ?? "never") s after it")
        #expect(took.map { $0 <= 3 } == true, "\(share.stderr)")
        #expect(share.stderr.contains("went away"), "\(share.stderr)")
        #expect(share.stop(SIGINT, timeout: 10) == 0, "\(share.stderr)")
        let summary = try server.summary(finished: "addr")
        let offers = summary["offers"] as? [String] ?? []
        #expect(offers.count >= 2 && offers.last!.contains("10.94.0.3") && !offers.last!.contains("10.94.0.1 "),
                "the new offer's candidates: \(offers.last ?? "")")
    }
}
