/// A screen source (X11, Wayland) that delivers its picture shrunk, aspect kept, to fit a box,
/// and so decides the share's output size the same way whatever the screen comes from.
public protocol ScreenFitting: SharedMemorySource {
    /// The screen's size as a viewer sees it upright.
    var uprightScreenSize: PictureSize { get }
    /// Makes the source deliver the screen shrunk to fit `box`. Before the start.
    func deliver(fitting box: PictureSize)
}

extension ScreenFitting {
    /// Sizes the delivered frames for a share with `configuration` and returns the configuration
    /// with its output size decided: the asked size as the configuration lays it out, or for an
    /// automatic size the screen's own or the largest standard size below it whose plan fits
    /// the memory cap (a configuration nothing fits is returned as it was; planning says why).
    public func fit(_ configuration: ShareConfiguration) -> ShareConfiguration {
        let upright = uprightScreenSize
        func laidOut(_ size: PictureSize) -> PictureSize {
            let long = max(size.width, size.height), short = min(size.width, size.height)
            let portrait = configuration.outputOrientation == .portrait
                || (configuration.outputOrientation == .source && upright.height > upright.width)
            return portrait ? PictureSize(width: short, height: long) : PictureSize(width: long, height: short)
        }
        if let asked = configuration.outputSize {
            deliver(fitting: laidOut(asked))
            return configuration
        }
        let own = laidOut(PictureSize(width: max(upright.width & ~1, 16), height: max(upright.height & ~1, 16)))
        var candidates = [own]
        for size in MemoryPlanner.standardSizes where laidOut(size).pixels < own.pixels {
            candidates.append(laidOut(size))
        }
        for size in candidates {
            var trial = configuration
            trial.outputSize = size
            deliver(fitting: size)
            if let plan = try? MemoryPlanner.resolve(trial, for: self), plan.fits { return trial }
        }
        deliver(fitting: own)
        return configuration
    }
}
