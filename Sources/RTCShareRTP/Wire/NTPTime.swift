// NTP timestamps as RTCP carries them (RFC 3550 §4): 32 bits of seconds since 1900-01-01 and
// 32 bits of fraction. Sender reports carry all 64 bits; receiver reports echo the middle 32
// (16.16 fixed point) as LSR and add DLSR in units of 1/65536 s, from which the sender gets
// the round-trip time without synchronised clocks (RFC 3550 §6.4.1).
//
// Invariants: conversion from Unix microseconds is exact to within one fraction unit
// (~233 ps); the era is chosen as in RFC 4330 §3 (seconds with the top bit clear belong to era 1,
// i.e. after 2036-02-07), so the representable range is 1968…2104. Nothing here reads a clock:
// callers pass the wall-clock time in.

/// A 64-bit NTP timestamp: seconds since 1900 in the high word, binary fraction in the low.
public struct NTPTime: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Seconds from 1900-01-01 (NTP epoch) to 1970-01-01 (Unix epoch).
    public static let unixEpochOffsetSeconds: Int64 = 2_208_988_800

    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public init(seconds: UInt32, fraction: UInt32) {
        rawValue = UInt64(seconds) << 32 | UInt64(fraction)
    }

    /// The NTP time of a wall-clock instant given in microseconds since the Unix epoch.
    /// Instants outside the two NTP eras around now wrap modulo 2^32 seconds.
    public init(unixMicroseconds: Int64) {
        // Floor division, so instants before 1970 still get a fraction in 0..<1 s.
        var seconds = unixMicroseconds / 1_000_000
        var micros = unixMicroseconds % 1_000_000
        if micros < 0 {
            seconds -= 1
            micros += 1_000_000
        }
        let ntpSeconds = UInt32(truncatingIfNeeded: seconds &+ Self.unixEpochOffsetSeconds)
        // micros < 10^6 < 2^20, so micros << 32 fits in 52 bits.
        let fraction = UInt32((UInt64(micros) << 32) / 1_000_000)
        self.init(seconds: ntpSeconds, fraction: fraction)
    }

    public var seconds: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) }
    public var fraction: UInt32 { UInt32(truncatingIfNeeded: rawValue) }

    /// The middle 32 bits (16 bits of seconds, 16 of fraction): what a receiver report echoes
    /// as LSR, and the "now" that RTT arithmetic is done in.
    public var middle32: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 16) }

    /// Microseconds since the Unix epoch (fraction rounded down), era chosen per RFC 4330.
    public var unixMicroseconds: Int64 {
        var s = Int64(seconds)
        if seconds & 0x8000_0000 == 0 { s += 1 << 32 }  // era 1: 2036 and later
        let micros = Int64((UInt64(fraction) * 1_000_000) >> 32)
        return (s - Self.unixEpochOffsetSeconds) * 1_000_000 + micros
    }

    public static func < (a: NTPTime, b: NTPTime) -> Bool { a.rawValue < b.rawValue }

    public var description: String { "NTP(\(seconds).\(fraction))" }

    /// Round-trip time from a receiver report block (RFC 3550 §6.4.1), in microseconds:
    /// `now − LSR − DLSR` in 1/65536 s units, done modulo 2^32 so it survives the 18-hour wrap
    /// of the middle 32 bits.
    ///
    /// Returns nil when the peer has not yet received a sender report (LSR == 0) or when the
    /// result is negative (clock or report mix-up; the RFC says to ignore it).
    /// - Parameters:
    ///   - now: when the report arrived, as NTP time on the sender's wall clock.
    ///   - lastSenderReport: the block's LSR field.
    ///   - delaySinceLastSenderReport: the block's DLSR field, 1/65536 s.
    public static func roundTripMicroseconds(now: NTPTime, lastSenderReport: UInt32,
                                             delaySinceLastSenderReport: UInt32) -> Int64? {
        guard lastSenderReport != 0 else { return nil }
        let units = Int32(bitPattern: now.middle32 &- lastSenderReport &- delaySinceLastSenderReport)
        guard units >= 0 else { return nil }
        return Int64(units) * 1_000_000 / 65_536
    }
}
