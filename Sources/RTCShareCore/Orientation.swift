import CCore

/// EXIF orientation of pixels as stored: what must be done to them to show them upright.
/// Phones and mobile capture APIs hand out buffers in sensor or portrait orientation with such a
/// tag; the transform applies the correction.
public enum Orientation: Int, Sendable, CaseIterable {
    /// Upright already.
    case up = 1
    /// Mirrored left-right.
    case upMirrored = 2
    /// Turned 180 degrees.
    case down = 3
    /// Mirrored top-bottom.
    case downMirrored = 4
    /// Transposed (mirrored, then turned 90 degrees counter-clockwise).
    case leftMirrored = 5
    /// Needs a 90 degree clockwise turn to be upright.
    case right = 6
    /// Transversed (mirrored, then turned 90 degrees clockwise).
    case rightMirrored = 7
    /// Needs a 90 degree counter-clockwise turn to be upright.
    case left = 8

    /// Whether correcting it swaps width and height.
    public var swapsAxes: Bool { ccore_orientation_swaps_axes(Int32(rawValue)) == 1 }

    /// The upright size of a stored `width` x `height` picture with this tag.
    public func uprightSize(width: Int, height: Int) -> (width: Int, height: Int) {
        swapsAxes ? (height, width) : (width, height)
    }
}

extension Orientation {
    /// The tag whose correction undoes this one's: turning upright pixels by it gives pixels
    /// that this tag describes.
    public var inverse: Orientation {
        switch self {
        case .right: .left
        case .left: .right
        default: self
        }
    }
}
