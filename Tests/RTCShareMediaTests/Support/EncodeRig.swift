import RTCShareCore

/// One pool slot and the synthetic screen to fill it with: frame `i` is rendered into a fresh
/// slot with pts i x 33 333 us (30 fps).
struct EncodeRig {
    let pool: FramePool
    let screen: SyntheticScreen
    static let frameInterval: Int64 = 33_333

    init(width: Int, height: Int, busy: Bool = false) throws {
        let frameBytes = PixelFormat.i420.bytes(width: width, height: height)!
        let budget = try MemoryBudget(capBytes: frameBytes * 2 + (1 << 20))
        pool = try FramePool(budget: budget, format: .i420, maxWidth: width, maxHeight: height, count: 2)
        screen = SyntheticScreen(width: width, height: height, busy: busy)
    }

    func frame(_ index: Int) throws -> FrameSlot {
        var slot = try pool.acquire(format: .i420, width: screen.width, height: screen.height)
        slot.ptsMicroseconds = Int64(index) * Self.frameInterval
        slot.withMutablePixels { screen.render(frame: index, into: $0) }
        return slot
    }
}

/// A heap buffer for encoded frames, freed at the end of the test.
final class OutputBuffer {
    let bytes: UnsafeMutableRawBufferPointer
    init(count: Int) { bytes = .allocate(byteCount: count, alignment: 16) }
    deinit { bytes.deallocate() }
    func prefix(_ n: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[0..<n]) }
}
