// What every harness shares: starting libFuzzer from a SwiftPM executable, a cursor that carves
// structured values out of the input, a sink that keeps parse results alive, and the oracle check.

import CFuzzerDriver
#if canImport(Glibc)
import Glibc
#endif

/// The per-input callback libFuzzer calls.
public typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs libFuzzer on the process arguments with `callback`, then exits with its status.
///
/// Why not libFuzzer's own `main`: SwiftPM compiles an executable target's entry point as
/// `<module>_main` and links it with `--defsym main=<module>_main`, so the `main` inside
/// libclang_rt.fuzzer is never the one that runs. Each harness therefore has a Swift `@main`
/// that lands here, and libFuzzer's documented driver entry point does the rest (same flags,
/// same behaviour). Each harness also exports `LLVMFuzzerTestOneInput`, which the unused
/// libFuzzer `main` references.
public func runLibFuzzer(_ callback: FuzzCallback) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    let status = LLVMFuzzerRunDriver(&argc, &argv, callback)
    exit(status)
}

/// The input as a raw buffer (libFuzzer may pass a null pointer with size 0).
@inline(__always)
public func fuzzBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeRawBufferPointer {
    guard let data, size > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
    return UnsafeRawBufferPointer(start: data, count: size)
}

/// A cursor over the input that never fails: reads past the end give zeros / empty buffers.
public struct FuzzInput {
    public let bytes: UnsafeRawBufferPointer
    public private(set) var offset = 0

    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    public var remaining: Int { bytes.count - offset }
    public var isAtEnd: Bool { offset >= bytes.count }

    public mutating func u8() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Big-endian.
    public mutating func u16() -> UInt16 { UInt16(u8()) << 8 | UInt16(u8()) }

    /// Big-endian.
    public mutating func u32() -> UInt32 { UInt32(u16()) << 16 | UInt32(u16()) }

    public mutating func bool() -> Bool { u8() & 1 != 0 }

    /// The next `n` bytes, or fewer at the end.
    public mutating func take(_ n: Int) -> UnsafeRawBufferPointer {
        let k = max(0, min(n, remaining))
        defer { offset += k }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + k)])
    }

    /// A chunk preceded by its length: one byte, or two (big-endian) when `wide`.
    public mutating func lengthPrefixed(wide: Bool = false) -> UnsafeRawBufferPointer {
        let n = wide ? Int(u16()) : Int(u8())
        return take(n)
    }

    /// Everything left.
    public mutating func rest() -> UnsafeRawBufferPointer { take(remaining) }
}

// MARK: - sink

nonisolated(unsafe) private var sinkState: UInt64 = 0

/// Folds a value into a global the optimizer cannot see through, so no parse is dropped as dead.
@inline(never)
public func consume<T: BinaryInteger>(_ value: T) {
    sinkState = (sinkState &* 0x100_0000_01B3) ^ UInt64(truncatingIfNeeded: value)
}

@inline(never)
public func consume(_ value: Bool) { consume(value ? 1 : 0) }

/// Reads every byte (so AddressSanitizer checks the whole range) and folds a checksum in.
@inline(never)
public func consume(_ bytes: UnsafeRawBufferPointer) {
    var h: UInt64 = UInt64(bytes.count)
    for b in bytes { h = (h &* 31) &+ UInt64(b) }
    consume(h)
}

@inline(never)
public func consume(_ text: String) {
    var h: UInt64 = 0
    for b in text.utf8 { h = (h &* 31) &+ UInt64(b) }
    consume(h)
}

@inline(never)
public func consume(_ text: Substring) { consume(String(text)) }

/// Anything else: its description (exercises the type's CustomStringConvertible as well).
@inline(never)
public func consumeDescription(_ value: some Any) { consume(String(describing: value)) }

// MARK: - oracle

/// A documented property of the code under test that the input broke. This is a finding, not a
/// harness failure: it prints the reason and aborts, and libFuzzer saves the input.
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
    if condition() { return }
    let text = "FUZZ ORACLE FAILED at \(file):\(line): \(message())\n"
    text.utf8CString.withUnsafeBufferPointer { _ = write(2, $0.baseAddress, $0.count - 1) }
    abort()
}
