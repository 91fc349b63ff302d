import RTCShareCore
import RTCShareMedia
import Testing
@testable import RTCShare

/// The wayland and portal sources convert only the rows the compositor says were drawn, over
/// the last frame: these check that the frame this gives is byte for byte the whole picture's
/// conversion, scaled, turned, mirrored and letterboxed, and that the band is small when the
/// damage is.
@Suite struct PackedScreenPictureDamageTests {
    struct Case: CustomStringConvertible {
        var width: Int, height: Int, orientation: Orientation, box: PictureSize
        /// Whether bands can be exact here (else every conversion is whole).
        var banded: Bool
        var description: String { "\(width)x\(height) \(orientation) into \(box.width)x\(box.height)" }
    }

    static let cases: [Case] = [
        Case(width: 1920, height: 1080, orientation: .up, box: .init(width: 1280, height: 720), banded: true),
        Case(width: 1920, height: 1080, orientation: .down, box: .init(width: 1280, height: 720), banded: true),
        Case(width: 1920, height: 1080, orientation: .upMirrored, box: .init(width: 1280, height: 720), banded: true),
        Case(width: 1920, height: 1080, orientation: .right, box: .init(width: 720, height: 1280), banded: true),
        Case(width: 1920, height: 1080, orientation: .rightMirrored, box: .init(width: 720, height: 1280), banded: true),
        Case(width: 1920, height: 1080, orientation: .left, box: .init(width: 1280, height: 720), banded: true),
        Case(width: 1280, height: 720, orientation: .up, box: .init(width: 1280, height: 720), banded: true),
        Case(width: 1280, height: 720, orientation: .leftMirrored, box: .init(width: 720, height: 1280), banded: true),
        Case(width: 1280, height: 1024, orientation: .up, box: .init(width: 1280, height: 720), banded: true),
        Case(width: 1366, height: 768, orientation: .downMirrored, box: .init(width: 1280, height: 720), banded: true),
        Case(width: 1920, height: 1081, orientation: .up, box: .init(width: 1280, height: 720), banded: false),
    ]

    /// A stored picture of random pixels, rows padded past their width (an odd stride's worth).
    final class Buffer {
        let width: Int, height: Int, stride: Int
        let base: UnsafeMutablePointer<UInt8>
        private var seed: UInt32
        init(width: Int, height: Int, seed: UInt32) {
            (self.width, self.height, stride, self.seed) = (width, height, width * 4 + 36, seed)
            base = .allocate(capacity: stride * height)
            scribble(x: 0, y: 0, width: width, height: height)
        }
        deinit { base.deallocate() }
        func scribble(x: Int, y: Int, width w: Int, height h: Int) {
            for row in y..<(y + h) {
                for byte in (x * 4)..<((x + w) * 4) {
                    seed = seed &* 1_664_525 &+ 1_013_904_223
                    base[row * stride + byte] = UInt8(truncatingIfNeeded: seed >> 24)
                }
            }
        }
    }

    struct Share {
        let c: Case
        let fitted: PictureSize, delivered: PictureSize, placement: (x: Int, y: Int)
        let scratch: PackedScreenPicture.Scratch
        let pool: FramePool
        init(_ c: Case, budget: MemoryBudget) throws {
            self.c = c
            let upright = c.orientation.uprightSize(width: c.width, height: c.height)
            delivered = c.box
            fitted = X11StripPlan.fittedSize(screenWidth: upright.width & ~1, screenHeight: upright.height & ~1, into: c.box)
            placement = (((delivered.width - fitted.width) / 2) & ~1, ((delivered.height - fitted.height) / 2) & ~1)
            scratch = try PackedScreenPicture.Scratch(
                budget: budget,
                bytes: PackedScreenPicture.reservedScratchBytes(width: c.width, height: c.height, orientation: c.orientation,
                                                                fitted: fitted, delivered: delivered),
                source: "test")
            pool = try FramePool(budget: budget, format: .i420, maxWidth: delivered.width, maxHeight: delivered.height, count: 4)
        }
        struct PoolExhausted: Error {}
        func convert(_ b: Buffer, last: PackedScreenPicture.LastPicture, redFirst: Bool = false,
                     at time: MediaTime = .zero) throws -> FrameSlot {
            guard let frame = try PackedScreenPicture.convert(
                b.base, width: b.width, height: b.height, stride: b.stride, redFirst: redFirst, orientation: c.orientation,
                delivered: delivered, fitted: fitted, placement: placement, scratch: scratch, last: last, at: time, pool: pool,
                what: "test") else { throw PoolExhausted() }
            return frame
        }
    }

    static func rowsDiffering(_ a: borrowing FrameSlot, _ b: borrowing FrameSlot) -> Int {
        var differing = 0
        a.withPixels { pa in
            b.withPixels { pb in
                for plane in 0..<3 {
                    let x = pa.plane(plane), y = pb.plane(plane)
                    for row in 0..<x.rows where !x.row(row).elementsEqual(y.row(row)) { differing += 1 }
                }
            }
        }
        return differing
    }

    /// Two changes in turn (odd rows and columns in the middle, then the last rows), each
    /// converted as a band over the frame before: every byte equals converting the changed
    /// picture whole, and the band is a few strips, not the picture.
    @Test(arguments: 0..<cases.count)
    func aBandOverTheLastFrameIsTheWholeConversion(index: Int) throws {
        let c = Self.cases[index]
        let budget = try MemoryBudget(capBytes: 96 << 20, prefault: false)
        let share = try Share(c, budget: budget)
        let buffer = Buffer(width: c.width, height: c.height, seed: 0x5eed &+ UInt32(index))
        let last = PackedScreenPicture.LastPicture()
        let first = try share.convert(buffer, last: last)
        #expect(last.rowsConverted.load(ordering: .relaxed) == c.height, "\(c): the first picture is converted whole")
        _ = consume first

        for (n, change) in [(x: 501, y: 333, width: 277, height: 17), (x: 3, y: c.height - 5, width: 91, height: 5)].enumerated() {
            buffer.scribble(x: change.x, y: change.y, width: change.width, height: change.height)
            let before = last.rowsConverted.load(ordering: .relaxed)
            last.noteDamage(rows: change.y..<(change.y + change.height))
            let banded = try share.convert(buffer, last: last)
            let rows = last.rowsConverted.load(ordering: .relaxed) - before

            let whole = try share.convert(buffer, last: PackedScreenPicture.LastPicture())
            #expect(Self.rowsDiffering(banded, whole) == 0, "\(c), change \(n): the band differs from the whole conversion")
            if c.banded {
                #expect(rows >= change.height && rows <= c.height / 2, "\(c), change \(n): \(rows) rows converted")
            } else {
                #expect(rows == c.height, "\(c), change \(n): \(rows) rows converted where no band is exact")
            }
        }
    }

    /// Damage the source did not convert (every slot busy) stays for the next conversion, and
    /// a picture that came with no damage is converted whole.
    @Test func damageIsKeptUntilConvertedAndNoDamageMeansAll() throws {
        let c = Self.cases[0]
        let budget = try MemoryBudget(capBytes: 96 << 20, prefault: false)
        let share = try Share(c, budget: budget)
        let buffer = Buffer(width: c.width, height: c.height, seed: 77)
        let last = PackedScreenPicture.LastPicture()
        _ = try share.convert(buffer, last: last)
        // Two changes, the first one's conversion skipped: the next band holds both.
        buffer.scribble(x: 10, y: 100, width: 50, height: 4)
        last.noteDamage(rows: 100..<104)
        buffer.scribble(x: 10, y: 900, width: 50, height: 4)
        last.noteDamage(rows: 900..<904)
        let banded = try share.convert(buffer, last: last)
        let whole = try share.convert(buffer, last: PackedScreenPicture.LastPicture())
        #expect(Self.rowsDiffering(banded, whole) == 0)
        _ = consume banded
        _ = consume whole
        let before = last.rowsConverted.load(ordering: .relaxed)
        last.noteDamage(rows: nil)
        _ = try share.convert(buffer, last: last)
        #expect(last.rowsConverted.load(ordering: .relaxed) - before == c.height)
        // A second after the last whole picture, the next is whole whatever the damage; then bands again.
        for (time, rows) in [(MediaTime(microseconds: 999_999), 12), (.seconds(1), c.height), (.seconds(1), 12)] {
            let start = last.rowsConverted.load(ordering: .relaxed)
            last.noteDamage(rows: 601..<610)
            _ = try share.convert(buffer, last: last, at: time)
            #expect(last.rowsConverted.load(ordering: .relaxed) - start == rows, "at \(time)")
        }
    }

    /// XBGR (red first) is swapped in place, only in the rows converted: the compositor copies
    /// its whole picture into the buffer each time, so the rows left unswapped are never read.
    @Test func aRedFirstPictureIsSwappedOnlyWhereItIsConverted() throws {
        let c = Self.cases[0]
        let budget = try MemoryBudget(capBytes: 96 << 20, prefault: false)
        let share = try Share(c, budget: budget)
        let screen = Buffer(width: c.width, height: c.height, seed: 99), buffer = Buffer(width: c.width, height: c.height, seed: 1)
        func copied() -> Buffer {
            buffer.base.update(from: screen.base, count: screen.stride * screen.height)
            return buffer
        }
        let last = PackedScreenPicture.LastPicture()
        _ = try share.convert(copied(), last: last, redFirst: true)
        screen.scribble(x: 1201, y: 601, width: 55, height: 9)
        last.noteDamage(rows: 601..<610)
        let before = last.rowsConverted.load(ordering: .relaxed)
        let banded = try share.convert(copied(), last: last, redFirst: true)
        #expect(last.rowsConverted.load(ordering: .relaxed) - before == 12)
        let whole = try share.convert(copied(), last: PackedScreenPicture.LastPicture(), redFirst: true)
        #expect(Self.rowsDiffering(banded, whole) == 0)
    }

    @Test func exactPlansLineUpOrSayNo() throws {
        let p = try #require(X11StripPlan.exact(screenWidth: 1920, screenHeight: 1080, frame: .init(width: 1280, height: 720)))
        #expect(p.screenRows == 6 && p.frameRows == 4)
        #expect(p.band(covering: 333..<350) == (330, 24, 220, 16))
        #expect(p.band(covering: 1075..<1080) == (1074, 6, 716, 4))
        #expect(p.band(covering: 5..<5) == (0, 0, 0, 0))
        #expect(X11StripPlan.exact(screenWidth: 1920, screenHeight: 1080, frame: .init(width: 1920, height: 1080))?.screenRows == 2)
        #expect(X11StripPlan.exact(screenWidth: 1920, screenHeight: 1081, frame: .init(width: 1280, height: 720)) == nil)
        #expect(X11StripPlan.exact(screenWidth: 716, screenHeight: 716, frame: .init(width: 720, height: 720)) == nil)
        #expect(X11StripPlan.exact(screenWidth: 1920, screenHeight: 1080, frame: .init(width: 1276, height: 718)) == nil)
    }
}
