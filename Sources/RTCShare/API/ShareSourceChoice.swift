import RTCShareCore
import RTCShareMedia

/// Where a share's pictures come from, as an embedder or the CLI names it.
public enum ShareSourceChoice: Sendable, Equatable {
    /// The screen-like test pattern with its frame marker, at the output size (1280x720 when
    /// the size is auto). A simulated orientation hands the pixels out turned, as a phone would;
    /// a simulated stall makes it answer nothing for a while.
    case testPattern(framesPerSecond: Int = 30, orientation: Orientation = .up,
                     stallAfter: MediaDuration? = nil, stallFor: MediaDuration = .zero)
    /// A YUV4MPEG2 file (or "-" for standard input), at its own frame rate.
    case y4m(path: String)
    /// The X11 screen through MIT-SHM (nil: $DISPLAY); `cursor`: the pointer drawn in (XFIXES).
    case x11(display: String?, cursor: Bool = false)
    /// An output of a wlroots compositor through screencopy (nil: the first output), on the
    /// compositor in $WAYLAND_DISPLAY; `cursor`: the pointer drawn into the picture.
    case wayland(output: String?, cursor: Bool = false)
    /// The screen the ScreenCast portal hands out over PipeWire (GNOME, KDE, wlroots with
    /// xdg-desktop-portal-wlr), on the session bus in $DBUS_SESSION_BUS_ADDRESS; `cursor`: the
    /// pointer drawn in by the portal; the restore token kept in `tokenFile` (nil: the default
    /// under $XDG_STATE_HOME, `PortalRestoreToken.defaultPath`).
    case portal(cursor: Bool = false, tokenFile: String? = nil)
    /// A producer process over a Unix socket (docs/ipc.md), pictures up to `maxSize`.
    case ipc(path: String, maxSize: PictureSize)
    /// Frames the embedder pushes (`ShareAgent.pushVideo`), up to `maxSize` in either
    /// orientation.
    case pushed(maxSize: PictureSize)

    /// The test pattern's size when none is asked for.
    public static let defaultTestPatternSize = PictureSize(width: 1280, height: 720)
}
