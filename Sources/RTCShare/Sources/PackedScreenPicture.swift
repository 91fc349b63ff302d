import RTCShareCore
import RTCShareMedia

/// A compositor's picture in 32-bit pixels (Wayland's screencopy buffer, a PipeWire buffer of
/// the portal), turned into a delivered frame: converted, oriented and shrunk in one CCore pass,
/// the fitted picture placed in the frame with black around it; where the compositor says which
/// rows were drawn, only those are converted (`LastPicture`). Shared by the sources that get
/// their whole picture handed over, as opposed to X11's strips.
enum PackedScreenPicture {
    /// The fused conversion's scratch, reserved from the share's budget once before the first
    /// capture and kept for the whole share (a size change must fit in it: `fits`). A class so
    /// the source can hold it as an optional (an optional noncopyable stored property cannot be
    /// borrowed through on Swift 6.0).
    final class Scratch {
        private let block: BudgetBlock
        var base: UnsafeMutableRawPointer { block.base }
        var bytes: Int { block.byteCount }

        /// `bytes` of the budget; a budget that cannot give them is `source`'s error.
        init(budget: MemoryBudget, bytes: Int, source: String) throws(SourceError) {
            let reserved: BudgetBlock
            do {
                reserved = try BudgetBlock(budget: budget, byteCount: bytes)
            } catch {
                throw SourceError("\(source): reserving the conversion scratch: \(error)")
            }
            block = reserved
        }

        /// Whether converting a `width` x `height` picture stored as `orientation` into `size` fits.
        func fits(width: Int, height: Int, into size: PictureSize, orientation: Orientation) -> Bool {
            PackedScreenPicture.scratchBytes(width: width, height: height, into: size, orientation: orientation) <= bytes
        }
    }

    /// The frame of `delivered` size holding the picture at `base`, or nil when every slot is busy
    /// downstream (that capture is skipped; the source is alive, and the damage noted in `last`
    /// stays for the next). Only the band of rows `last` says were drawn is converted, over a
    /// copy of the last frame, where that band maps exactly; else (and once a second, see
    /// `LastPicture`) the whole picture. `time` is the capture's. A picture
    /// stored red first (XBGR, RGBx) has its converted rows swapped in place first. A conversion
    /// CCore refuses is the source's error, `what` naming it.
    static func convert(_ base: UnsafeMutablePointer<UInt8>, width: Int, height: Int, stride: Int, redFirst: Bool,
                        orientation: Orientation, delivered: PictureSize, fitted: PictureSize,
                        placement: (x: Int, y: Int), scratch: Scratch, last: LastPicture, at time: MediaTime,
                        pool: FramePool, what: String) throws(SourceError) -> FrameSlot? {
        var frame: FrameSlot
        do {
            frame = try pool.acquire(format: .i420, width: delivered.width, height: delivered.height)
        } catch {
            return nil
        }
        let band = last.band(plan: bandPlan(width: width, height: height, orientation: orientation, fitted: fitted), at: time)
        let rows = band.map { $0.screenY..<($0.screenY + $0.screenRows) } ?? 0..<height
        if redFirst { swapRedAndBlue(base + rows.lowerBound * stride, width: width, height: rows.count, stride: stride) }
        let source = FramePixels(packed: .bgrx, width: width, height: rows.count, base: base + rows.lowerBound * stride,
                                 stride: stride)
        let failure: CoreError? = frame.withMutablePixels { pixels -> CoreError? in
            let target: FramePixels
            if let band {
                let scaledHeight = orientation.swapsAxes ? fitted.width : fitted.height
                var rect = uprightRect(frameY: band.frameY, frameRows: band.frameRows, scaledHeight: scaledHeight,
                                       fitted: fitted, orientation: orientation)
                rect.x += placement.x
                rect.y += placement.y
                last.copy(into: pixels, except: rect)
                target = pixels.region(x: rect.x, y: rect.y, width: rect.width, height: rect.height)
            } else {
                if fitted != delivered { paintBlack(pixels) }
                target = pixels.region(x: placement.x, y: placement.y, width: fitted.width, height: fitted.height)
            }
            do throws(CoreError) {
                try PixelConversion.transform(source, into: target, orientation: orientation,
                                              scratch: scratch.base, scratchBytes: scratch.bytes)
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            last.forget()
            throw SourceError("\(what) failed (\(failure))")
        }
        last.delivered(frame, rows: rows.count, whole: band == nil, at: time)
        return frame
    }

    /// Bytes of one picture of `width` x `height` 32-bit pixels as compositors lay it out (rows
    /// to 256 bytes, the whole to pages).
    static func bufferBytes(width: Int, height: Int) -> Int {
        (((width * 4 + 255) & ~255) * height + 4095) & ~4095
    }

    /// The scratch to reserve for a `width` x `height` picture stored as `orientation`, delivered
    /// fitted into `delivered`: for either way round, so a screen that turns mid-share needs no
    /// more than was reserved.
    static func reservedScratchBytes(width: Int, height: Int, orientation: Orientation, fitted: PictureSize,
                                     delivered: PictureSize) -> Int {
        let turned: Orientation = orientation.swapsAxes ? .up : .right
        let fittedTurned = X11StripPlan.fittedSize(screenWidth: height & ~1, screenHeight: width & ~1, into: delivered)
        return max(scratchBytes(width: width, height: height, into: fitted, orientation: orientation),
                   scratchBytes(width: width, height: height, into: fittedTurned, orientation: turned), 64)
    }

    /// The fused transform's scratch for a `width` x `height` picture shrunk into `size`.
    static func scratchBytes(width: Int, height: Int, into size: PictureSize, orientation: Orientation) -> Int {
        PixelConversion.transformScratchBytes(from: .bgrx, width: width, height: height,
                                              toWidth: size.width, height: size.height, orientation: orientation)
    }

    /// XBGR/ABGR (RGBx/RGBA) hold R G B X in memory; the converter reads B G R X.
    static func swapRedAndBlue(_ base: UnsafeMutablePointer<UInt8>, width: Int, height: Int, stride: Int) {
        for y in 0..<height {
            let row = base + y * stride
            for x in 0..<width {
                let p = row + x * 4
                let r = p[0]
                p[0] = p[2]
                p[2] = r
            }
        }
    }

    /// Black (limited range) over the whole frame, before a picture smaller than it goes in.
    static func paintBlack(_ pixels: FramePixels) {
        for index in 0..<3 {
            let plane = pixels.plane(index)
            for y in 0..<plane.rows { plane.row(y).update(repeating: index == 0 ? 16 : 128) }
        }
    }
}
