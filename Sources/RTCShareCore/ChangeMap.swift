import CCore

/// Which 16x16 macroblocks of the encoder's input changed since the last picture it was shown
/// (CCore's `ccore_change_map`): a 64-bit signature a macroblock is kept, not the picture, so
/// no frame slot is held back for the comparison. Each macroblock carries an activity count:
/// set to `hold` when it changes, one lower at each picture after. An encoder codes a
/// macroblock whose count is 0 as skipped, without searching it (VP8's active map), and a
/// picture with none active need not be coded at all.
///
/// The memory is carved from the share's budget at start (`bytes(width:height:)`: 9 bytes a
/// macroblock, 33 KiB at 1280x720) and reused for a smaller picture after a resize.
public struct ChangeMap: ~Copyable, @unchecked Sendable {
    // Sendable: the map is plain memory owned by exactly one value.
    private let block: BudgetBlock
    private var map: OpaquePointer
    public private(set) var width: Int
    public private(set) var height: Int

    /// What an update found (`ccore_change_counts`).
    public struct Counts: Equatable, Sendable {
        /// Macroblocks whose pixels differ from the last picture's.
        public var changed: Int
        /// Macroblocks still active (changed within the last `hold` pictures).
        public var active: Int
        /// Macroblocks in the picture.
        public var total: Int

        init(_ counts: ccore_change_counts) {
            changed = Int(counts.changed)
            active = Int(counts.active)
            total = Int(counts.total)
        }
    }

    /// Budget bytes a map for pictures of this size takes; nil for a size outside 1...16383.
    public static func bytes(width: Int, height: Int) -> Int? {
        guard let w = Int32(exactly: width), let h = Int32(exactly: height) else { return nil }
        let bytes = ccore_change_map_bytes(w, h)
        return bytes > 0 ? bytes : nil
    }

    /// A map for pictures of `width` x `height`, from `budget`. Throws `.invalidArgument` for a
    /// bad size, `.budgetExceeded` when the budget has no room.
    public init(budget: MemoryBudget, width: Int, height: Int) throws(CoreError) {
        guard let bytes = Self.bytes(width: width, height: height) else { throw .invalidArgument }
        let block = try BudgetBlock(budget: budget, byteCount: bytes, alignment: 8)
        var map: OpaquePointer?
        try CoreError.check(ccore_change_map_init(block.base, bytes, Int32(width), Int32(height), &map))
        self.block = block
        self.map = map!
        self.width = width
        self.height = height
    }

    /// Starts over for pictures of another size (not larger than the memory allows): the next
    /// update finds every macroblock changed. Throws `.bufferTooSmall` for a larger picture.
    public mutating func resize(width: Int, height: Int) throws(CoreError) {
        guard let bytes = Self.bytes(width: width, height: height) else { throw .invalidArgument }
        var map: OpaquePointer?
        guard bytes <= block.byteCount else { throw .bufferTooSmall }
        try CoreError.check(ccore_change_map_init(block.base, block.byteCount, Int32(width), Int32(height), &map))
        self.map = map!
        self.width = width
        self.height = height
    }

    /// Compares `frame` (I420 at the map's size) with the picture of the last update. Throws
    /// `.invalidArgument` for another format or size.
    public mutating func update(_ frame: borrowing FrameSlot, hold: UInt8) throws(CoreError) -> Counts {
        var counts = ccore_change_counts()
        var image = frame.image
        try CoreError.check(ccore_change_map_update(map, &image, hold, &counts))
        return Counts(counts)
    }

    /// The last picture is coded again: every activity count goes one lower.
    public mutating func age() -> Counts {
        var counts = ccore_change_counts()
        ccore_change_map_age(map, &counts)
        return Counts(counts)
    }

    /// The picture of the last update was not coded (the encoder dropped it): what is active
    /// stays active through the next update.
    public mutating func renew(hold: UInt8) {
        ccore_change_map_renew(map, hold)
    }

    /// Every macroblock was coded afresh (a keyframe): all stay active for at least `count`
    /// more pictures, so the frames after it refine the whole picture.
    public mutating func activateAll(count: UInt8) {
        ccore_change_map_activate_all(map, count)
    }

    /// Forgets the last picture: the next update finds every macroblock changed.
    public mutating func reset() {
        ccore_change_map_reset(map)
    }

    /// The activity counts, a byte a macroblock row after row (nonzero: active), with the rows
    /// and columns; valid only inside `body`.
    public func withActivity<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>, _ rows: Int, _ cols: Int) throws(E) -> R)
        throws(E) -> R {
        var rows: Int32 = 0, cols: Int32 = 0
        let base = ccore_change_map_activity(map, &rows, &cols)
        return try body(UnsafeBufferPointer(start: base, count: Int(rows) * Int(cols)), Int(rows), Int(cols))
    }
}
