import RTCShareCore

/// How a screencopy buffer is stored relative to the upright picture, as the EXIF orientation
/// CCore's transform corrects: the output's wl_output transform (a turned or mirrored panel
/// is drawn turned into its buffer) and the frame's y_invert flag (rows bottom to top).
///
/// Each correction is a signed 2x2 matrix taking stored axes to upright ones; y_invert is
/// undone first, then the output's transform, and the product is looked up again as a tag.
enum WaylandOutputTransform {
    /// The correction of wl_output transform 0...7 (normal, 90, 180, 270, flipped, flipped-90,
    /// flipped-180, flipped-270): a buffer of an output at 90 needs a clockwise quarter turn
    /// (checked against sway); a flipped one is mirrored left-right, then turned as its unflipped
    /// twin, which for flipped-90 is a transpose and for flipped-270 a transverse (each checked
    /// against sway, WaylandCaptureTests).
    static func orientation(transform: Int, yInverted: Bool) -> Orientation {
        let table: [Orientation] = [.up, .right, .down, .left, .upMirrored, .leftMirrored, .downMirrored, .rightMirrored]
        let output = table[(0...7).contains(transform) ? transform : 0]
        guard yInverted else { return output }
        let m = multiply(matrix(output), matrix(.downMirrored))
        return Orientation.allCases.first { matrix($0) == m } ?? output
    }

    /// The correction's linear part: (upright x, upright y) = (a·x + b·y, c·x + d·y).
    static func matrix(_ o: Orientation) -> [Int] {
        switch o {
        case .up: [1, 0, 0, 1]
        case .upMirrored: [-1, 0, 0, 1]
        case .down: [-1, 0, 0, -1]
        case .downMirrored: [1, 0, 0, -1]
        case .leftMirrored: [0, 1, 1, 0]
        case .right: [0, -1, 1, 0]
        case .rightMirrored: [0, -1, -1, 0]
        case .left: [0, 1, -1, 0]
        }
    }

    private static func multiply(_ p: [Int], _ q: [Int]) -> [Int] {
        [p[0] * q[0] + p[1] * q[2], p[0] * q[1] + p[1] * q[3], p[2] * q[0] + p[3] * q[2], p[2] * q[1] + p[3] * q[3]]
    }
}
