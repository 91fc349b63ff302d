import CCore

/// A block of raw memory carved from a `MemoryBudget`, given back when the value ends: how
/// state that a C library lets the caller place (the Opus encoder, transform scratch) ends up
/// inside the budget instead of on the heap.
public struct BudgetBlock: ~Copyable, @unchecked Sendable {
    // Sendable: the block is plain memory owned by exactly one value.
    public let base: UnsafeMutableRawPointer
    public let byteCount: Int
    private let budget: MemoryBudget

    /// `byteCount` bytes aligned to `alignment` (a power of two up to 4096). Throws
    /// `.budgetExceeded` when the cap would be passed, `.invalidArgument` for a bad size.
    public init(budget: MemoryBudget, byteCount: Int, alignment: Int = 64) throws(CoreError) {
        guard byteCount > 0, alignment > 0, alignment <= 4096, alignment & (alignment - 1) == 0
        else { throw .invalidArgument }
        guard let base = ccore_arena_alloc(budget.arena, byteCount, alignment) else {
            throw .budgetExceeded
        }
        self.base = base
        self.byteCount = byteCount
        self.budget = budget
    }

    deinit { ccore_arena_free(budget.arena, base) }
}
