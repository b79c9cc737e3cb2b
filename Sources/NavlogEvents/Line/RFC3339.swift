/// RFC 3339 date-times (`2025-11-21T10:00:00.123456Z`) to and from µs since the Unix epoch.
public enum RFC3339 {
    /// Parses an RFC 3339 `date-time` (section 5.6) as JSON Schema's `date-time` format checks it:
    /// upper-case `T` and `Z` or a `±HH:MM` offset, an optional fraction (digits beyond µs are
    /// truncated), years 0001–9999, no leap second (`:60`).
    /// - Returns: µs since the Unix epoch, or `nil` when the text is not a valid date-time.
    public static func microseconds(_ text: UnsafeRawBufferPointer) -> Int64? {
        let n = text.count
        guard n >= 20 else { return nil }
        func digit(_ i: Int) -> Int? {
            let b = text[i]
            return b >= 0x30 && b <= 0x39 ? Int(b - 0x30) : nil
        }
        func number(_ i: Int, _ count: Int) -> Int? {
            var value = 0
            for k in i..<(i + count) {
                guard let d = digit(k) else { return nil }
                value = value * 10 + d
            }
            return value
        }
        guard let year = number(0, 4), text[4] == 0x2D, let month = number(5, 2), text[7] == 0x2D,
            let day = number(8, 2), text[10] == 0x54,
            let hour = number(11, 2), text[13] == 0x3A, let minute = number(14, 2), text[16] == 0x3A,
            let second = number(17, 2)
        else { return nil }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour <= 23, minute <= 59, second <= 59
        else { return nil }
        var i = 19
        var fraction: Int64 = 0
        if text[i] == 0x2E {
            i += 1
            var digits = 0
            while i < n, let d = digit(i) {
                if digits < 6 { fraction = fraction * 10 + Int64(d) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in min(digits, 6)..<6 { fraction *= 10 }
        }
        guard i < n else { return nil }
        var offsetSeconds = 0
        switch text[i] {
        case 0x5A:
            i += 1
        case 0x2B, 0x2D:
            guard i + 6 == n, let oh = number(i + 1, 2), text[i + 3] == 0x3A, let om = number(i + 4, 2),
                oh <= 23, om <= 59
            else { return nil }
            offsetSeconds = (oh * 3600 + om * 60) * (text[i] == 0x2D ? -1 : 1)
            i += 6
        default:
            return nil
        }
        guard i == n else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        return seconds * 1_000_000 + fraction
    }

    /// Parses a date-time given as a `String`.
    public static func microseconds(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { microseconds(UnsafeRawBufferPointer($0)) }
    }

    /// Formats µs since the epoch as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC).
    public static func format(microseconds: Int64) -> String {
        let (seconds, micros) = microseconds.quotientAndRemainder(dividingBy: 1_000_000)
        var secs = seconds
        var us = micros
        if us < 0 { us += 1_000_000; secs -= 1 }
        var days = secs / 86_400
        var rest = secs % 86_400
        if rest < 0 { rest += 86_400; days -= 1 }
        let (y, m, d) = civilFromDays(Int(days))
        func pad(_ value: Int, _ width: Int) -> String {
            let s = String(value)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(Int(rest / 3600), 2)):\(pad(Int(rest % 3600 / 60), 2)):\(pad(Int(rest % 60), 2)).\(pad(Int(us), 6))Z"
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The proleptic Gregorian (year, month, day) of a day number since 1970-01-01 (Howard
    /// Hinnant's algorithm).
    public static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
