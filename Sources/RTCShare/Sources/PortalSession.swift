import CPortal
import Glibc
import RTCShareCore

/// One ScreenCast portal session with its PipeWire stream open (CPortal): the session on the
/// bus, the stream on the fd the portal opened, and the one buffer held between a take and its
/// release. `deinit` lets go of all of it. A class, like `WaylandConnection`: the source drops
/// and replaces it when the portal or PipeWire goes and comes back.
final class PortalSession {
    private let portal: OpaquePointer
    private let stream: OpaquePointer
    /// The screen's size as the portal announced it (0 when it did not), and the token the
    /// portal gave for the next session ("" when it gave none).
    let announcedWidth: Int
    let announcedHeight: Int
    let restoreToken: String
    let node: UInt32

    /// How many PipeWire buffers the stream accepts: one being written, one held.
    static let maxBuffers = 2
    /// How long Start may wait for a user's choice in the portal's dialog.
    static let startTimeoutMilliseconds: Int32 = 60_000

    /// Opens the session (reusing `restoreToken` when not empty) and connects the stream.
    init(restoreToken token: String, cursor: Bool) throws(SourceError) {
        var error = [CChar](repeating: 0, count: 512)
        var info = rtcs_portal_stream()
        var fd: Int32 = -1
        guard let p = rtcs_portal_open(token, cursor ? 1 : 0, Self.startTimeoutMilliseconds, &info, &fd,
                                       &error, error.count) else {
            throw SourceError(Self.text(error))
        }
        guard let s = rtcs_pw_open(fd, info.node, info.width, info.height, UInt32(Self.maxBuffers), &error, error.count) else {
            rtcs_portal_close(p)
            throw SourceError(Self.text(error))
        }
        portal = p
        stream = s
        node = info.node
        (announcedWidth, announcedHeight) = (Int(info.width), Int(info.height))
        restoreToken = withUnsafeBytes(of: info.restore_token) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    deinit {
        rtcs_pw_close(stream)
        rtcs_portal_close(portal)
    }

    /// A C error buffer's text, up to its terminator.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Handles what PipeWire sent within `milliseconds`; throws the stream's line once it failed.
    @discardableResult
    func iterate(milliseconds: Int) throws(SourceError) -> rtcs_pw_state {
        let state = rtcs_pw_iterate(stream, Int32(clamping: milliseconds))
        if state == RTCS_PW_FAILED { throw SourceError(String(cString: rtcs_pw_error(stream))) }
        return state
    }

    /// Whether the portal still holds the session (reads the bus without waiting).
    var portalAlive: Bool { rtcs_portal_alive(portal) != 0 }

    /// The size PipeWire agreed on (0 x 0 before).
    var negotiatedSize: (width: Int, height: Int) {
        var w: UInt32 = 0, h: UInt32 = 0
        rtcs_pw_size(stream, &w, &h)
        return (Int(w), Int(h))
    }

    var buffersSeen: UInt64 { rtcs_pw_buffers_seen(stream) }

    /// The newest buffer, checked; nil when none waits. Throws the line of an unusable one.
    func take() throws(SourceError) -> rtcs_pw_frame? {
        var frame = rtcs_pw_frame()
        switch rtcs_pw_frame_take(stream, &frame) {
        case 1: return frame
        case 0: return nil
        default: throw SourceError(String(cString: rtcs_pw_error(stream)))
        }
    }

    /// Gives the taken buffer back to the producer.
    func release() { rtcs_pw_frame_release(stream) }
}
