/// `Retry-After` (RFC 9110 §10.2.3): how long a server that answered 503 or 429 (or a 3xx)
/// asks the client to wait. Either delta-seconds ("120") or an HTTP-date in the IMF-fixdate
/// form every sender must use ("Sun, 06 Nov 1994 08:49:37 GMT"), taken against the response's
/// own `Date` when it has one (so the two clocks need not agree), else against ours.
///
/// The delay is capped at `maximumSeconds`: a server asking for an hour (or a date in 2099)
/// would otherwise hold an unattended sender off that long. A date in the past is 0.
/// Anything else (the obsolete RFC 850 and asctime dates, garbage) is nil: no advice.
enum HTTPRetryAfter {
    static let maximumSeconds = 300

    /// The delay `value` asks for, in seconds (0...maximumSeconds), or nil.
    /// `responseDate`: the response's `Date` field; `now`: seconds since 1970 (UTC).
    static func seconds(_ value: String, responseDate: String?, now: Int) -> Int? {
        let text = value.trimmingSpaces
        if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            // delta-seconds: 1*DIGIT; a huge one is simply the cap.
            return Int(text).map { min($0, maximumSeconds) } ?? maximumSeconds
        }
        guard let at = epochSeconds(imfFixdate: text) else { return nil }
        let reference = responseDate.flatMap { epochSeconds(imfFixdate: $0.trimmingSpaces) } ?? now
        return min(max(at - reference, 0), maximumSeconds)
    }

    /// "Sun, 06 Nov 1994 08:49:37 GMT" as seconds since 1970, or nil if it is not that form.
    static func epochSeconds(imfFixdate text: String) -> Int? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT",
              parts[1].count == 2, let day = Int(parts[1]),
              let month = months.firstIndex(of: String(parts[2])).map({ $0 + 1 }),
              parts[3].count == 4, let year = Int(parts[3]) else { return nil }
        let clock = parts[4].split(separator: ":")
        guard parts[4].count == 8, clock.count == 3, let h = Int(clock[0]), let m = Int(clock[1]),
              let s = Int(clock[2]), (1...31).contains(day), h < 24, m < 60, s < 61 else { return nil }
        return daysFromCivil(year: year, month: month, day: day) * 86_400 + h * 3_600 + m * 60 + s
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
