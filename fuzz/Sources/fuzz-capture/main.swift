// What a compositor hands the wayland and portal sources: a buffer's size, stride and format,
// the output's transform, and damage rectangles saying which part was drawn. The sources convert
// only the rows the damage covers, over the last frame (`PackedScreenPicture.LastPicture`,
// `X11StripPlan.exact` / `band(covering:)`); all of it is the compositor's word. The internal
// pieces are reached with @testable (debug builds are built for testing).
//
// Input: 7 bytes, then events (see `Event`). Four describe the buffer: width and height
// 1...96, a stride of width*4 padded by 0...60 bytes, one of the four packed formats (XRGB,
// ARGB, XBGR, ABGR: the last two red first), one of the eight wl_output transforms, y-inverted
// or not. Two give the box the share's output is fitted into (2...192 a side), as
// `deliver(fitting:)` does. The last seeds the pixels; its top bit makes the output change
// before the first picture to a second geometry (4 more bytes): the delivered size stays and the
// new picture is fitted into it, centred, as `follow` does. An event does the same mid-share.
//
// The screen is a picture of pseudo-random pixels; each damage event draws into the screen only
// inside its rectangle (clipped to the buffer) and reports the rectangle's rows unclipped: any
// Int32 values, negative, huge, empty, overlapping. Before each conversion the screen is copied
// into the buffer, as a compositor copies its whole picture every time (a red-first picture is
// swapped in place in the rows converted, so the buffer must be fresh).
//
// Oracle: every frame converted with damage over the last frame is byte for byte the frame a
// whole conversion of the same buffer gives; rows converted never exceed the picture's; and
// nothing traps or reads out of bounds (ASan, and debug bounds checks on buffer pointers). The
// bytes a conversion must not read (stride padding; rows outside the band) are filled with a
// different pattern for each of the two conversions, so reading them shows as a difference.

import FuzzSupport
import RTCShareCore
import RTCShareMedia
@testable import RTCShare
#if canImport(Glibc)
import Glibc
#endif

@main
enum FuzzCapture {
    static func main() { runLibFuzzer(fuzzCapture) }
}

/// One buffer geometry as the compositor describes it.
struct Geometry {
    var width: Int, height: Int, stride: Int, redFirst: Bool, orientation: Orientation, yInverted: Bool

    init(_ input: inout FuzzInput) {
        width = Int(input.u8()) % 96 + 1
        height = Int(input.u8()) % 96 + 1
        let bits = input.u8()
        stride = width * 4 + Int(bits & 0x0F) * 4
        redFirst = bits & 0x10 != 0  // XBGR/ABGR; bit 5 (alpha or not) changes nothing read
        let more = input.u8()
        yInverted = more & 0x08 != 0
        orientation = WaylandOutputTransform.orientation(transform: Int(more & 0x07), yInverted: yInverted)
    }
}

/// The screen: what the compositor would copy into the buffer.
final class Screen {
    let geometry: Geometry
    let pixels: UnsafeMutablePointer<UInt8>
    let buffer: UnsafeMutablePointer<UInt8>
    var bytes: Int { geometry.stride * geometry.height }
    private var seed: UInt32

    init(_ g: Geometry, seed: UInt32) {
        geometry = g
        self.seed = seed | 1  // xorshift never leaves 0
        pixels = .allocate(capacity: g.stride * g.height)
        buffer = .allocate(capacity: g.stride * g.height)
        // Padding bytes too: the conversion must never read them into the picture.
        let raw = UnsafeMutableRawPointer(pixels)
        for i in 0..<(g.stride * g.height / 4) { raw.storeBytes(of: next(), toByteOffset: i * 4, as: UInt32.self) }
    }

    deinit {
        pixels.deallocate()
        buffer.deallocate()
    }

    /// A pixel's worth of noise (xorshift32: every byte varies, unlike an LCG's low bits).
    private func next() -> UInt32 {
        seed ^= seed << 13
        seed ^= seed >> 17
        seed ^= seed << 5
        return seed
    }

    /// Draws into the rectangle (clipped to the picture), as a client drawing on the output.
    func draw(x: Int, y: Int, width: Int, height: Int) {
        let x0 = max(x, 0), y0 = max(y, 0)
        let x1 = min(x + max(width, 0), geometry.width), y1 = min(y + max(height, 0), geometry.height)
        guard x0 < x1, y0 < y1 else { return }
        let raw = UnsafeMutableRawPointer(pixels)
        for row in y0..<y1 {
            for x in x0..<x1 { raw.storeBytes(of: next(), toByteOffset: row * geometry.stride + x * 4, as: UInt32.self) }
        }
    }

    /// The compositor's copy into the shared buffer; then every byte the conversion must not
    /// read (the stride's padding, and the rows outside `rows`, the band being converted) is
    /// overwritten with a pattern of `salt`, so a conversion reading any of them no longer gives
    /// the bytes of another conversion made with another salt.
    func copy(rows: Range<Int>, salt: UInt8) -> UnsafeMutablePointer<UInt8> {
        buffer.update(from: pixels, count: bytes)
        let g = geometry
        for row in 0..<g.height {
            let line = buffer + row * g.stride
            if rows.contains(row) {
                (line + g.width * 4).update(repeating: salt, count: g.stride - g.width * 4)
            } else {
                line.update(repeating: salt &+ UInt8(truncatingIfNeeded: row), count: g.stride)
            }
        }
        return buffer
    }
}

enum Event: UInt8 {
    case damageSmall = 0  // x y w h as signed bytes: rectangles near and across the edges
    case damageWide = 1   // x y w h as Int32: anything at all
    case convert = 2      // time passes (u8 x 10 ms), then a conversion, checked against a whole one
    case undamaged = 3    // a picture with no damage (screencopy v1, the portal without the meta)
    case follow = 4       // the output changes to a new geometry (4 bytes), as above
}

func rowsDiffering(_ a: borrowing FrameSlot, _ b: borrowing FrameSlot) -> Int {
    var differing = 0
    a.withPixels { pa in
        b.withPixels { pb in
            for plane in 0..<3 {
                let x = pa.plane(plane), y = pb.plane(plane)
                for row in 0..<min(x.rows, y.rows) {
                    let a = x.row(row), b = y.row(row)
                    if a.count != b.count || memcmp(a.baseAddress!, b.baseAddress!, a.count) != 0 { differing += 1 }
                }
                if x.rows != y.rows { differing += 1 }
            }
        }
    }
    return differing
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCapture(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(fuzzBytes(data, size))
    let first = Geometry(&input)
    let box = PictureSize(width: (Int(input.u8()) % 96 + 1) * 2, height: (Int(input.u8()) % 96 + 1) * 2)
    let flags = input.u8()
    let seed = UInt32(flags) &* 2_654_435_761

    // The delivered size as `deliver(fitting:)` decides it for the first geometry.
    let upright = first.orientation.uprightSize(width: first.width, height: first.height)
    let delivered = X11StripPlan.fittedSize(screenWidth: upright.width & ~1, screenHeight: upright.height & ~1, into: box)
    // A one-pixel side rounds to nothing to deliver: no share of it starts (the pool refuses it).
    guard delivered.width >= 2, delivered.height >= 2 else { return 0 }
    var fitted = delivered
    var placement = (x: 0, y: 0)
    let reserved = PackedScreenPicture.reservedScratchBytes(width: first.width, height: first.height,
                                                             orientation: first.orientation, fitted: fitted,
                                                             delivered: delivered)

    // An output that changes size or turns after the start, followed as `follow` does: the
    // delivered size stays, the new picture is fitted into it and centred; one the scratch
    // reserved at the start does not fit ends the share (false).
    var geometry = first
    func follow(_ next: Geometry) -> Bool {
        let turned = next.orientation.uprightSize(width: next.width, height: next.height)
        let nextFitted = X11StripPlan.fittedSize(screenWidth: max(turned.width & ~1, 2),
                                                 screenHeight: max(turned.height & ~1, 2), into: delivered)
        let needs = PackedScreenPicture.scratchBytes(width: next.width, height: next.height, into: nextFitted,
                                                     orientation: next.orientation)
        guard needs <= reserved else { return false }
        geometry = next
        fitted = nextFitted
        placement = (((delivered.width - fitted.width) / 2) & ~1, ((delivered.height - fitted.height) / 2) & ~1)
        return true
    }
    if flags & 0x80 != 0, !follow(Geometry(&input)) { return 0 }

    let budget: MemoryBudget
    let scratch: PackedScreenPicture.Scratch
    let pool: FramePool
    do {
        budget = try MemoryBudget(capBytes: 4 << 20, prefault: false)
        scratch = try PackedScreenPicture.Scratch(budget: budget, bytes: reserved, source: "fuzz")
        // One slot kept as the last frame, one banded, one whole.
        pool = try FramePool(budget: budget, format: .i420, maxWidth: delivered.width, maxHeight: delivered.height, count: 3)
    } catch {
        fuzzCheck(false, "a \(delivered.width)x\(delivered.height) share does not fit 4 MiB: \(error)")
        return 0
    }
    fuzzCheck(scratch.fits(width: geometry.width, height: geometry.height, into: fitted, orientation: geometry.orientation),
              "the scratch reserved does not fit the picture")

    var screen = Screen(geometry, seed: seed)
    let last = PackedScreenPicture.LastPicture()
    var time = MediaTime.zero

    /// The conversion as the source makes it; only the rows it converts hold the picture.
    func convert(_ kept: PackedScreenPicture.LastPicture, salt: UInt8) -> FrameSlot? {
        let plan = PackedScreenPicture.bandPlan(width: geometry.width, height: geometry.height,
                                                orientation: geometry.orientation, fitted: fitted)
        let rows = kept.band(plan: plan, at: time).map { $0.screenY..<($0.screenY + $0.screenRows) } ?? 0..<geometry.height
        do {
            return try PackedScreenPicture.convert(
                screen.copy(rows: rows, salt: salt), width: geometry.width, height: geometry.height, stride: geometry.stride,
                redFirst: geometry.redFirst, orientation: geometry.orientation, delivered: delivered, fitted: fitted,
                placement: placement, scratch: scratch, last: kept, at: time, pool: pool, what: "fuzz")
        } catch {
            fuzzCheck(false, "a conversion failed: \(error)")
            return nil
        }
    }

    func checkedConversion() {
        let before = last.rowsConverted.load(ordering: .relaxed)
        guard let banded = convert(last, salt: 0x00) else {
            fuzzCheck(false, "no free slot for the banded conversion")
            return
        }
        let rows = last.rowsConverted.load(ordering: .relaxed) - before
        fuzzCheck(rows >= 0 && rows <= geometry.height, "\(rows) rows converted of \(geometry.height)")
        guard let whole = convert(PackedScreenPicture.LastPicture(), salt: 0xFF) else {
            fuzzCheck(false, "no free slot for the whole conversion")
            return
        }
        let differing = rowsDiffering(banded, whole)
        fuzzCheck(differing == 0,
                  "\(differing) plane rows differ from the whole conversion (\(geometry.width)x\(geometry.height) "
                  + "stride \(geometry.stride) \(geometry.orientation) fitted \(fitted.width)x\(fitted.height) "
                  + "at \(placement) in \(delivered.width)x\(delivered.height), \(rows) rows converted)")
    }

    /// Drawing inside the rectangle, reported as the source reports it: its rows, unclipped
    /// (the source's C side clips, but LastPicture must not rely on it); a y-inverted buffer's
    /// damage is not in stored rows, so the source reports none.
    func damage(x: Int, y: Int, width: Int, height: Int) {
        screen.draw(x: x, y: y, width: width, height: height)
        last.noteDamage(rows: geometry.yInverted ? nil : y..<(y + max(height, 0)))
    }

    // The first picture is whole (nothing to draw over).
    checkedConversion()
    var conversions = 1, unconverted = false
    while !input.isAtEnd && conversions < 48 {
        switch Event(rawValue: input.u8() % 5)! {
        case .damageSmall:
            let (x, y, w, h) = (Int(Int8(bitPattern: input.u8())), Int(Int8(bitPattern: input.u8())),
                                Int(Int8(bitPattern: input.u8())), Int(Int8(bitPattern: input.u8())))
            damage(x: x, y: y, width: w, height: h)
            unconverted = true
        case .damageWide:
            let (x, y, w, h) = (Int(Int32(bitPattern: input.u32())), Int(Int32(bitPattern: input.u32())),
                                Int(Int32(bitPattern: input.u32())), Int(Int32(bitPattern: input.u32())))
            damage(x: x, y: y, width: w, height: h)
            unconverted = true
        case .convert:
            time = time + MediaDuration.milliseconds(Int64(input.u8()) * 10)
            checkedConversion()
            conversions += 1
            unconverted = false
        case .undamaged:
            let (x, y) = (Int(input.u8()) % geometry.width, Int(input.u8()) % geometry.height)
            screen.draw(x: x, y: y, width: 3, height: 3)
            last.noteDamage(rows: nil)
            unconverted = true
        case .follow:
            guard follow(Geometry(&input)) else { return 0 }
            screen = Screen(geometry, seed: seed &+ UInt32(conversions))
            last.forget()
            unconverted = true
        }
    }
    if unconverted { checkedConversion() }
    return 0
}
