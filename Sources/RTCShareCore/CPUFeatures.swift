import CCore

/// Instruction-set extensions CCore's pixel kernels may use on this machine.
public struct CPUFeatures: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let sse2 = CPUFeatures(rawValue: UInt32(CCORE_CPU_SSE2))
    public static let ssse3 = CPUFeatures(rawValue: UInt32(CCORE_CPU_SSSE3))
    public static let avx2 = CPUFeatures(rawValue: UInt32(CCORE_CPU_AVX2))
    public static let neon = CPUFeatures(rawValue: UInt32(CCORE_CPU_NEON))

    /// Detected now, as restricted by `restrict(to:)` or the CCORE_CPU_MASK environment variable.
    public static var current: CPUFeatures { CPUFeatures(rawValue: ccore_cpu_features()) }

    /// Restricts the kernels to `features` (empty: the scalar path) for the whole process.
    public static func restrict(to features: CPUFeatures) { ccore_cpu_set_mask(features.rawValue) }

    /// Lower-case names, narrowest first.
    public var names: [String] {
        let all: [(CPUFeatures, String)] = [(.sse2, "sse2"), (.ssse3, "ssse3"), (.avx2, "avx2"), (.neon, "neon")]
        return all.filter { contains($0.0) }.map(\.1)
    }
}
