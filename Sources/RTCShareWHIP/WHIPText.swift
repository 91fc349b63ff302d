/// Text that came from a WHIP server (a reason in an error body, a Location), made safe to put
/// in an error line or a log: one line, printable ASCII, capped, and never the caller's secret.
///
/// Why: the server is not trusted. Its body may be a page of HTML, carry terminal escape
/// sequences, or echo the request's `Authorization` header back.
enum WHIPText {
    /// Longest reason kept from an error body (characters).
    static let maximumReason = 120

    /// The first non-empty line of `bytes`, control and non-ASCII characters dropped, at most
    /// `limit` characters (an ellipsis marks a cut), with every occurrence of each secret
    /// replaced by `<redacted>`.
    static func sanitised<C: Collection<UInt8>>(_ bytes: C, limit: Int = maximumReason, hiding secrets: [String] = []) -> String {
        var line = ""
        for b in bytes {
            if b == 0x0A || b == 0x0D {
                if line.isEmpty { continue }
                break
            }
            // Printable ASCII only: tabs become spaces, escapes and other control bytes go.
            if b == 0x09 { line.append(" ") } else if (0x20...0x7E).contains(b) { line.append(Character(Unicode.Scalar(b))) }
            if line.count > 4 * limit { break }  // enough to find a secret that straddles the cut
        }
        for secret in secrets where !secret.isEmpty {
            line = line.replacing(secret, with: "<redacted>")
        }
        line = String(line.drop { $0 == " " })
        while line.last == " " { line.removeLast() }
        if line.count > limit { line = String(line.prefix(limit)) + "…" }
        return line
    }

    /// `1.0`, `0.25`: a time in seconds without trailing noise.
    static func seconds(_ value: Double) -> String {
        let millis = Int((value * 1000).rounded())
        let whole = millis / 1000, frac = millis % 1000
        if frac == 0 { return "\(whole).0" }
        var f = String(frac)
        while f.count < 3 { f = "0" + f }
        while f.last == "0" { f.removeLast() }
        return "\(whole).\(f)"
    }
}
