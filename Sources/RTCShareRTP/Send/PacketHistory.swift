import RTCShareCore

// The history of sent RTP packets that NACKs (RFC 4585) are answered from.
//
// Layout, one block carved from the session's `MemoryBudget` at start-up:
//
//     [ index: 2^k entries of 16 bytes ][ ring: capacityBytes ]
//
// Invariants:
// - The ring holds records `[length: u16 big-endian][packet]` placed at a free-running byte
//   position `head` (mod capacity). A record never wraps: when it does not fit before the
//   ring's end, `head` skips to the next lap. So a record starting at free-running position
//   `s` is intact exactly while `head - s <= capacityBytes`: eviction is implicit, O(1), and
//   the bytes held never exceed the cap.
// - Sequence numbers are unwrapped to 64 bits against the highest stored one (nearest value,
//   within ±2^15), so 65535 → 0 continues the count. Entry `e mod 2^k` of the index holds the
//   extended sequence number and record position of the last packet stored there; a lookup
//   matches only the same extended number with an intact record, so an evicted, overwritten
//   or never-stored packet gives nil, also a whole wrap (65536 packets) later.
// - 2^k ≤ 2^15, so everything the index can hold lies within the unwrapping window.
// - Store and lookup are O(1) and allocate nothing.

/// Sent packets, bounded by bytes, looked up by sequence number. Non-copyable: it owns its
/// block of the budget.
public struct PacketHistory: ~Copyable {
    private struct Entry {
        var extendedSequence: Int64
        var start: UInt64
    }

    private static let emptySequence = Int64.min
    private static let recordHeader = 2
    private static let entryBytes = MemoryLayout<Entry>.stride

    /// Bytes of packet data (plus 2 per packet) the ring holds.
    public let capacityBytes: Int
    /// Packets the index holds at most (a power of two).
    public let maxPackets: Int

    private let block: BudgetBlock
    private let entries: UnsafeMutablePointer<Entry>
    private let ring: UnsafeMutableRawBufferPointer
    private var head: UInt64 = 0
    private var highest: Int64?
    /// Packets stored so far.
    public private(set) var storedCount: UInt64 = 0

    /// The index size used for `capacityBytes` when none is given: one entry per 256 bytes
    /// (video packets are ~1200 bytes, Opus ~100–200), a power of two in 16...32768.
    public static func defaultMaxPackets(capacityBytes: Int) -> Int {
        var n = 16
        while n < 32_768 && n * 256 < capacityBytes { n <<= 1 }
        return n
    }

    /// Bytes of budget a history of `capacityBytes` takes (for the memory planner).
    public static func bytes(capacityBytes: Int, maxPackets: Int? = nil) -> Int {
        let n = roundedMaxPackets(maxPackets ?? defaultMaxPackets(capacityBytes: capacityBytes))
        return n * entryBytes + capacityBytes
    }

    private static func roundedMaxPackets(_ n: Int) -> Int {
        var p = 16
        while p < min(max(n, 16), 32_768) { p <<= 1 }
        return p
    }

    /// Reserves `bytes(capacityBytes:maxPackets:)` from `budget`. `capacityBytes` must hold at
    /// least one full-size packet (≥ 1500); `maxPackets` is rounded up to a power of two in
    /// 16...32768. Throws `.budgetExceeded` when the budget cannot give it.
    public init(budget: MemoryBudget, capacityBytes: Int, maxPackets: Int? = nil) throws(CoreError) {
        guard capacityBytes >= 1500, capacityBytes <= Int(Int32.max) else { throw .invalidArgument }
        let n = Self.roundedMaxPackets(maxPackets ?? Self.defaultMaxPackets(capacityBytes: capacityBytes))
        let block = try BudgetBlock(budget: budget, byteCount: n * Self.entryBytes + capacityBytes,
                                    alignment: 64)
        entries = block.base.bindMemory(to: Entry.self, capacity: n)
        entries.initialize(repeating: Entry(extendedSequence: Self.emptySequence, start: 0), count: n)
        ring = UnsafeMutableRawBufferPointer(start: block.base + n * Self.entryBytes, count: capacityBytes)
        self.block = block
        self.capacityBytes = capacityBytes
        self.maxPackets = n
    }

    private func extend(_ seq: UInt16) -> Int64 {
        guard let h = highest else { return Int64(seq) }
        return seq.extended(around: h)
    }

    /// Stores a copy of an RTP packet as sent (before SRTP), keyed by the sequence number in
    /// its bytes 2...3; evicts the oldest packets as needed. Throws `.truncated` for fewer
    /// than 12 bytes and `.malformed` for a packet the ring cannot hold.
    public mutating func store(_ packet: UnsafeRawBufferPointer) throws(RTPError) {
        guard packet.count >= RTPHeader.fixedSize else {
            throw .truncated("packet of \(packet.count) bytes stored in history")
        }
        let record = Self.recordHeader + packet.count
        guard packet.count <= Int(UInt16.max), record <= capacityBytes else {
            throw .malformed("packet of \(packet.count) bytes larger than the \(capacityBytes)-byte history")
        }
        var header = RTPReader(packet)
        try header.skip(2)
        let seq = try header.u16()
        let ext = extend(seq)
        let cap = UInt64(capacityBytes)
        var pos = Int(head % cap)
        if pos + record > capacityBytes {
            head += cap - UInt64(pos)
            pos = 0
        }
        var w = RTPWriter(ring, at: pos)
        w.u16(UInt16(packet.count))
        w.bytes(packet)
        _ = try w.finish()
        entries[Int(ext & Int64(maxPackets - 1))] = Entry(extendedSequence: ext, start: head)
        head += UInt64(record)
        if highest == nil || ext > highest! { highest = ext }
        storedCount &+= 1
    }

    /// Where the packet with sequence number `seq` lies in the ring, if it is still held.
    private func locate(_ seq: UInt16) -> Range<Int>? {
        guard highest != nil else { return nil }
        let ext = extend(seq)
        let e = entries[Int(ext & Int64(maxPackets - 1))]
        guard e.extendedSequence == ext, head - e.start <= UInt64(capacityBytes) else { return nil }
        let pos = Int(e.start % UInt64(capacityBytes))
        guard let length = recordLength(at: pos) else { return nil }
        return (pos + Self.recordHeader)..<(pos + Self.recordHeader + length)
    }

    /// The length prefix of the record at `pos` in the ring (nil only if `pos` were not a
    /// record's start inside the ring, which the entries never say).
    private func recordLength(at pos: Int) -> Int? {
        var r = RTPReader(UnsafeRawBufferPointer(ring))
        guard (try? r.seek(to: pos)) != nil, let length = try? r.u16() else { return nil }
        return Int(length)
    }

    /// Whether the packet with sequence number `seq` is still held.
    public func contains(_ seq: UInt16) -> Bool { locate(seq) != nil }

    /// Whether storing a packet of `packetBytes` next, as sequence number `next` (nil: the one
    /// after the highest), would evict the packet with sequence number `seq` (false when it is
    /// not held): its index slot taken (the index has gone round once more: many small packets
    /// get there before the bytes run out), or its bytes overwritten.
    public func wouldEvict(_ seq: UInt16, storing packetBytes: Int, as next: UInt16? = nil) -> Bool {
        guard let highest else { return false }
        let ext = extend(seq)
        let e = entries[Int(ext & Int64(maxPackets - 1))]
        let cap = UInt64(capacityBytes)
        guard e.extendedSequence == ext, head - e.start <= cap else { return false }
        let nextExt = next == nil ? highest + 1 : extend(next!)
        if nextExt - ext >= Int64(maxPackets) { return true }
        // Where the record would start (a record never wraps), and where `head` would end.
        var start = head
        let record = UInt64(Self.recordHeader + packetBytes)
        if start % cap + record > cap { start += cap - start % cap }
        return start + record - e.start > cap
    }

    /// Calls `body` with the bytes of the packet with sequence number `seq` and returns its
    /// result, or returns nil when the packet is not held (never stored, or evicted). The
    /// bytes are valid only inside `body`.
    public func withPacket<R, E: Error>(_ seq: UInt16,
                                        _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R? {
        guard let range = locate(seq) else { return nil }
        return try body(UnsafeRawBufferPointer(rebasing: ring[range]))
    }

    /// Bytes (records, length prefixes included) of every packet still held: ≤ `capacityBytes`.
    /// O(maxPackets); for tests and statistics, not the hot path.
    public var heldBytes: Int {
        var total = 0
        for i in 0..<maxPackets {
            let e = entries[i]
            guard e.extendedSequence != Self.emptySequence, head - e.start <= UInt64(capacityBytes) else { continue }
            total += Self.recordHeader + (recordLength(at: Int(e.start % UInt64(capacityBytes))) ?? 0)
        }
        return total
    }
}
