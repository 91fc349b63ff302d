import CCore

/// One reference to a frame in a `FramePool` slot. Non-copyable: each value is exactly one
/// reference, given back when the value ends. `share()` makes a second reference to the same
/// pixels (no copy), which is how one frame is kept as "last frame" while also being encoded.
public struct FrameSlot: ~Copyable, @unchecked Sendable {
    // Both stored properties are trivial so that `intoRaw()` can `discard self`; the pool is
    // retained by hand for as long as this reference lives.
    let frame: OpaquePointer
    let pool: Unmanaged<FramePool>

    /// Takes over one reference to `frame`, which must belong to `pool`.
    init(adopting frame: OpaquePointer, pool: FramePool) {
        self.frame = frame
        self.pool = Unmanaged.passRetained(pool)
    }

    deinit {
        ccore_frame_release(frame)
        pool.release()
    }

    /// Hands the reference over to C (a ring), keeping nothing on the Swift side.
    consuming func intoRaw() -> OpaquePointer {
        let frame = self.frame
        pool.release()
        discard self
        return frame
    }

    /// Another reference to the same frame.
    public func share() -> FrameSlot {
        ccore_frame_retain(frame)
        return FrameSlot(adopting: frame, pool: pool.takeUnretainedValue())
    }

    /// References to this frame alive now (this one included).
    public var referenceCount: Int { Int(ccore_frame_refcount(frame)) }

    public var format: PixelFormat { PixelFormat(raw: ccore_frame_image(frame).format) ?? .i420 }
    public var width: Int { Int(ccore_frame_image(frame).width) }
    public var height: Int { Int(ccore_frame_image(frame).height) }

    /// Capture time in microseconds on the source's clock.
    public var ptsMicroseconds: Int64 {
        get { ccore_frame_pts_us(frame) }
        set { ccore_frame_set_pts_us(frame, newValue) }
    }

    /// Orientation of the pixels as stored.
    public var orientation: Orientation {
        get { Orientation(rawValue: Int(ccore_frame_orientation(frame))) ?? .up }
        set { _ = ccore_frame_set_orientation(frame, Int32(newValue.rawValue)) }
    }

    /// Reads the pixels. The view is valid only inside `body`.
    public func withPixels<R, E: Error>(_ body: (FramePixels) throws(E) -> R) throws(E) -> R {
        try body(FramePixels(image: ccore_frame_image(frame)))
    }

    /// Writes the pixels. Only the holder of the only reference should write (a producer
    /// filling a fresh slot); the view is valid only inside `body`.
    public mutating func withMutablePixels<R, E: Error>(
        _ body: (FramePixels) throws(E) -> R
    ) throws(E) -> R {
        try body(FramePixels(image: ccore_frame_image(frame)))
    }

    /// The C view, for transforms inside this module.
    var image: ccore_image { ccore_frame_image(frame) }
}

/// The planes of a frame, borrowed for the duration of a `withPixels` call.
public struct FramePixels {
    let image: ccore_image

    public var format: PixelFormat { PixelFormat(raw: image.format) ?? .i420 }
    public var width: Int { Int(image.width) }
    public var height: Int { Int(image.height) }
    public var planeCount: Int { format.planeCount }

    /// Plane `index` (0 ..< planeCount): Y/U/V for I420, Y/UV for NV12, the packed plane for BGRA.
    public func plane(_ index: Int) -> PixelPlane {
        precondition(index >= 0 && index < planeCount, "plane index out of range")
        let w = Int(image.width), h = Int(image.height)
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        let (rowBytes, rows): (Int, Int) =
            switch (format, index) {
            case (.i420, 0), (.nv12, 0): (w, h)
            case (.i420, _): (cw, ch)
            case (.nv12, _): (cw * 2, ch)
            case (.bgra, _), (.bgrx, _): (w * 4, h)
            }
        let (base, stride): (UnsafeMutablePointer<UInt8>?, Int32) =
            switch index {
            case 0: (image.plane.0, image.stride.0)
            case 1: (image.plane.1, image.stride.1)
            default: (image.plane.2, image.stride.2)
            }
        return PixelPlane(base: base!, stride: Int(stride), rowBytes: rowBytes, rows: rows)
    }
}

/// One plane: `rows` rows of `rowBytes` bytes, `stride` bytes apart.
public struct PixelPlane {
    let base: UnsafeMutablePointer<UInt8>
    public let stride: Int
    public let rowBytes: Int
    public let rows: Int

    /// Row `y`, bounds-checked.
    public func row(_ y: Int) -> UnsafeMutableBufferPointer<UInt8> {
        precondition(y >= 0 && y < rows, "row out of range")
        return UnsafeMutableBufferPointer(start: base + y * stride, count: rowBytes)
    }

    /// Sets every byte of the plane's rows to `value`.
    public func fill(_ value: UInt8) {
        for y in 0..<rows { row(y).update(repeating: value) }
    }
}
