import CCore

// Pictures that are not frames of a pool: a capture's shared-memory segment, a bounce buffer, a
// host's buffer. Sources that convert straight into a frame's rows name them (and the rows they
// write) as FramePixels too, so PixelConversion is their one way into CCore's transforms.
extension FramePixels {
    /// A packed picture (BGRA or BGRX, four bytes a pixel) in memory the caller owns, rows
    /// `stride` bytes apart. Valid while that memory is.
    public init(packed format: PixelFormat, width: Int, height: Int, base: UnsafeMutablePointer<UInt8>, stride: Int) {
        precondition(format == .bgra || format == .bgrx, "a packed picture is BGRA or BGRX")
        var raw = ccore_image()
        raw.format = format.raw
        raw.width = Int32(width)
        raw.height = Int32(height)
        raw.plane.0 = base
        raw.stride.0 = Int32(stride)
        self.init(image: raw)
    }

    /// The rectangle (x, y, width, height) of an I420 picture, as a picture of its own sharing
    /// these pixels; x and y even, so its chroma lines up with the whole picture's.
    public func region(x: Int, y: Int, width: Int, height: Int) -> FramePixels {
        precondition(format == .i420, "regions are cut from I420 pictures")
        precondition(x >= 0 && y >= 0 && x % 2 == 0 && y % 2 == 0 && x + width <= self.width && y + height <= self.height,
                     "region outside the picture or at an odd origin")
        var sub = image
        sub.width = Int32(width)
        sub.height = Int32(height)
        sub.plane.0 = image.plane.0.map { $0 + y * Int(image.stride.0) + x }
        sub.plane.1 = image.plane.1.map { $0 + (y / 2) * Int(image.stride.1) + x / 2 }
        sub.plane.2 = image.plane.2.map { $0 + (y / 2) * Int(image.stride.2) + x / 2 }
        return FramePixels(image: sub)
    }
}
