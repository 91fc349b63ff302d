import CWayland
import Glibc
import RTCShareCore

/// One connection to a wlroots compositor set up for screencopy (CWayland), with the output to
/// capture chosen: by name, or the first one. Owns the connection, the frame in flight and the
/// shared buffer frames are copied into; `deinit` lets go of all three. A class, not a
/// `~Copyable` value: the source drops and replaces it when the compositor goes and comes back,
/// and an optional noncopyable stored property cannot be borrowed through on Swift 6.0.
final class WaylandConnection {
    private let handle: OpaquePointer
    /// The socket as given, or taken from $WAYLAND_DISPLAY, for messages.
    let display: String
    /// The captured output's name ("" when the compositor gives none) and index.
    let output: String
    private let index: Int32

    /// Connects to `display` (nil: $WAYLAND_DISPLAY) and picks output `name` (nil: the first).
    init(display name: String?, output wanted: String?) throws(SourceError) {
        let env = getenv("WAYLAND_DISPLAY").map { String(cString: $0) }
        let display = name ?? env ?? "wayland-0"
        var error = [CChar](repeating: 0, count: 256)
        guard let w = rtcs_wl_connect(display, &error, error.count) else {
            throw SourceError("wayland: \(Self.text(error))")
        }
        let count = rtcs_wl_output_count(w)
        let names = (0..<count).map { String(cString: rtcs_wl_output_name(w, $0)) }
        var chosen: Int32 = 0
        if let wanted {
            guard let found = names.firstIndex(of: wanted) else {
                rtcs_wl_disconnect(w)
                let listed = names.filter { !$0.isEmpty }
                throw SourceError("wayland: the compositor \(display) has no output \(wanted)"
                                  + (listed.isEmpty ? " (it names none)" : " (outputs: \(listed.joined(separator: ", ")))"))
            }
            chosen = Int32(found)
        }
        _ = rtcs_wl_output_select(w, chosen)
        handle = w
        self.display = display
        output = names[Int(chosen)]
        index = chosen
    }

    deinit { rtcs_wl_disconnect(handle) }

    /// A C error buffer's text, up to its terminator.
    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The output's current mode in buffer pixels and its wl_output transform (0...7).
    var mode: (width: Int, height: Int, transform: Int) {
        var width: Int32 = 0, height: Int32 = 0, transform: Int32 = 0
        rtcs_wl_output_mode(handle, index, &width, &height, &transform)
        return (Int(width), Int(height), Int(transform))
    }

    /// Whether copies wait for damage (screencopy version 2 and later).
    var copiesWithDamage: Bool { rtcs_wl_screencopy_version(handle) >= 2 }
    var outputPresent: Bool { rtcs_wl_output_present(handle) != 0 }

    /// Maps `bytes` of shared memory for the compositor to copy frames into.
    func mapBuffer(bytes: Int) throws(SourceError) {
        var error = [CChar](repeating: 0, count: 256)
        guard rtcs_wl_shm_map(handle, bytes, &error, error.count) == 0 else {
            throw SourceError("wayland: \(Self.text(error))")
        }
    }

    var bufferBase: UnsafeMutablePointer<UInt8>? { rtcs_wl_shm_base(handle) }
    var bufferBytes: Int { rtcs_wl_shm_bytes(handle) }

    var state: rtcs_wl_frame_state { rtcs_wl_frame_state_now(handle) }
    var info: rtcs_wl_frame_info { rtcs_wl_frame_info_now(handle) }

    func requestFrame(cursor: Bool) { _ = rtcs_wl_frame_request(handle, cursor ? 1 : 0) }
    /// Sends the copy of the described frame; false when the described buffer cannot be read
    /// into the mapping (checked by the caller first, so this is the last guard).
    func copy() -> Bool { rtcs_wl_frame_copy(handle) == 0 }
    func releaseFrame() { rtcs_wl_frame_release(handle) }

    func ping() { rtcs_wl_ping(handle) }
    var pongs: UInt64 { rtcs_wl_pongs(handle) }

    /// Handles what arrives within `milliseconds`; throws when the connection is gone.
    func dispatch(milliseconds: Int) throws(SourceError) {
        guard rtcs_wl_dispatch(handle, Int32(clamping: milliseconds)) == 0 else {
            throw SourceError("wayland: \(String(cString: rtcs_wl_error(handle))) \(display)")
        }
    }
}
