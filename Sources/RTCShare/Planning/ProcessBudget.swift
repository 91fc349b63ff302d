import Synchronization

/// The memory cap of a whole process that runs several shares (a gateway): the runtime and
/// libraries are counted once, each share reserves what its plan says beside them, and a share
/// that would not fit in what is left is refused before it touches anything.
///
/// Thread-safe: shares are created and finish on any thread.
public final class ProcessBudget: Sendable {
    /// The whole process's cap (default 50 MiB, a broadcast extension's limit).
    public let capBytes: Int
    /// What the process holds before any share: the runtime and the linked libraries.
    public let sharedBytes: Int
    private let reserved = Mutex<[String: Int]>([:])
    private let nextID = Atomic<Int>(0)

    public init(capBytes: Int = 50 << 20, sharedBytes: Int = MemoryPlanner.runtimeBytes) {
        self.capBytes = capBytes
        self.sharedBytes = sharedBytes
    }

    /// Bytes not yet reserved by any share.
    public var availableBytes: Int { reserved.withLock { left(after: $0) } }

    private func left(after reservations: [String: Int]) -> Int {
        capBytes - sharedBytes - reservations.values.reduce(0, +)
    }

    /// Bytes reserved by running (or prepared) shares.
    public var reservedBytes: Int { reserved.withLock { $0.values.reduce(0, +) } }

    /// Reserves `bytes` for a share; throws `.doesNotFit` (and reserves nothing) when they are
    /// more than what is left.
    func reserve(_ bytes: Int, for name: String) throws(ShareError) -> Reservation {
        let key = "\(name)#\(nextID.add(1, ordering: .relaxed).newValue)"
        let left: Int? = reserved.withLock { r in
            let room = self.left(after: r)
            guard bytes <= room else { return room }
            r[key] = bytes
            return nil
        }
        if let left {
            throw .doesNotFit("this share needs \(bytes >> 20) MiB and the process has \(max(left, 0) >> 20) MiB left of its \(capBytes >> 20) MiB")
        }
        return Reservation(budget: self, key: key)
    }

    fileprivate func release(_ key: String) { _ = reserved.withLock { $0.removeValue(forKey: key) } }

    /// A share's part of the process budget, given back when the share finishes (or is let go of).
    final class Reservation: Sendable {
        private let budget: ProcessBudget
        private let key: String

        fileprivate init(budget: ProcessBudget, key: String) {
            self.budget = budget
            self.key = key
        }

        func release() { budget.release(key) }
        deinit { release() }
    }
}
