import CXCB
import Glibc

/// The pointer, for `--cursor`: the X server never draws it into the screen GetImage reads, so
/// its picture and place are asked of XFIXES (GetCursorImage, one round trip a capture) and
/// blended into each strip as it arrives, before conversion. A pointer that moved or changed
/// shape counts as drawing (DAMAGE does not report it).
struct X11Cursor {
    /// Top-left corner on the screen (the hot spot subtracted) and size.
    private(set) var x = 0, y = 0, width = 0, height = 0
    /// Premultiplied ARGB, `width` x `height`; replaced only when the shape changes.
    private var pixels: [UInt32] = []
    private var serial: UInt32 = 0
    private var known = false

    /// Whether the server has XFIXES 4 (cursor images); asks for the version, which the
    /// extension needs before any other request.
    static func available(_ c: OpaquePointer) -> Bool {
        guard let reply = xcb_xfixes_query_version_reply(c, xcb_xfixes_query_version(c, 4, 0), nil) else { return false }
        defer { free(reply) }
        return reply.pointee.major_version >= 1
    }

    /// Reads the pointer's place and shape; true when either changed since the last read.
    /// Sizes come from the server: an image larger than 256x256 is not drawn (no cursor is).
    mutating func refresh(_ c: OpaquePointer) -> Bool {
        guard let reply = xcb_xfixes_get_cursor_image_reply(c, xcb_xfixes_get_cursor_image(c), nil) else { return false }
        defer { free(reply) }
        let r = reply.pointee
        let w = Int(r.width), h = Int(r.height)
        let nx = Int(r.x) - Int(r.xhot), ny = Int(r.y) - Int(r.yhot)
        let shapeChanged = !known || r.cursor_serial != serial
        let moved = !known || nx != x || ny != y
        guard shapeChanged || moved else { return false }
        known = true
        (x, y) = (nx, ny)
        if shapeChanged {
            serial = r.cursor_serial
            let count = Int(xcb_xfixes_get_cursor_image_cursor_image_length(reply))
            if w > 0, h > 0, w <= 256, h <= 256, count >= w * h, let image = xcb_xfixes_get_cursor_image_cursor_image(reply) {
                pixels = Array(UnsafeBufferPointer(start: image, count: w * h))
                (width, height) = (w, h)
            } else {
                pixels = []
                (width, height) = (0, 0)
            }
        }
        return true
    }

    /// Blends the pointer over screen rows [rowY, rowY + rows) held as BGRX at `base`, `stride`
    /// bytes apart, `screenWidth` pixels wide (source-over, premultiplied).
    func draw(into base: UnsafeMutablePointer<UInt8>, rowY: Int, rows: Int, screenWidth: Int, stride: Int) {
        guard width > 0 else { return }
        let top = max(y, rowY), bottom = min(y + height, rowY + rows)
        let left = max(x, 0), right = min(x + width, screenWidth)
        guard top < bottom, left < right else { return }
        for sy in top..<bottom {
            let row = base + (sy - rowY) * stride
            for sx in left..<right {
                let argb = pixels[(sy - y) * width + (sx - x)]
                let alpha = argb >> 24
                guard alpha != 0 else { continue }
                let p = row + sx * 4
                let keep = 255 - alpha
                p[0] = UInt8(min(255, (argb & 0xff) + (UInt32(p[0]) * keep + 127) / 255))
                p[1] = UInt8(min(255, (argb >> 8 & 0xff) + (UInt32(p[1]) * keep + 127) / 255))
                p[2] = UInt8(min(255, (argb >> 16 & 0xff) + (UInt32(p[2]) * keep + 127) / 255))
            }
        }
    }
}
