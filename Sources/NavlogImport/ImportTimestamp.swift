import NavlogEvents

/// Reads the timestamps the sources write, into µs since the Unix epoch.
///
/// Sentry writes ISO 8601 strings (`2024-05-02T10:00:00.123Z`) in SDK payloads and epoch
/// seconds as a float (`1714644000.123`) in stored events; Datadog writes ms numbers; the
/// Firebase BigQuery export writes µs, as a number or, through `bq extract`, as a string.
public enum ImportTimestamp {
    /// The unit a bare number is in.
    public enum Unit: Sendable {
        /// Seconds (a float is allowed).
        case seconds
        /// Milliseconds.
        case milliseconds
        /// Microseconds.
        case microseconds
        /// Decided by the magnitude: below 10¹¹ seconds, below 10¹⁴ milliseconds, else microseconds
        /// (10¹¹ s is the year 5138; 10¹⁴ ms is the year 5138 too; µs of today are about 1.7·10¹⁵).
        case byMagnitude
    }

    /// The latest time accepted (the last µs of the year 9999, as events.md allows).
    public static let latest: Int64 = 253_402_300_799_999_999

    /// The time of a number or string node, or a phrase saying why it is none.
    public static func microseconds(_ document: JSONDocument, _ node: JSONDocument.Node, unit: Unit) -> Result<Int64, TimestampError> {
        switch document.kind(node) {
        case .number:
            if let integer = document.integer(node) { return fromInteger(integer, unit: unit) }
            // A fraction (Sentry's seconds) is never an exact integer of µs: it is scaled as a Double.
            if let value = document.shortDecimal(node) {
                return scaled(value, by: scale(of: value, unit: unit)) { document.numberText(node) ?? "" }
            }
            return fromNumber(document.numberText(node) ?? "", unit: unit)
        case .string:
            // BigQuery's JSON writes INT64 µs as a string of digits: read without making it.
            if let integer = document.digitString(node) { return fromInteger(integer, unit: unit) }
            let text = document.string(node) ?? ""
            if let first = text.utf8.first, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39), !text.contains("T"), !text.contains(":") {
                return fromNumber(text, unit: unit)
            }
            // A naive ISO 8601 time (no offset) is taken as UTC.
            guard let value = RFC3339.microseconds(text) ?? RFC3339.microseconds(text + "Z") else {
                return .failure(TimestampError(reason: "\"\(text.prefix(40))\" is neither an ISO 8601 time nor a number"))
            }
            // navlog stores times from 1970 to 9999 (events.md); RFC 3339 also writes earlier years.
            guard value >= 0, value <= latest else { return .failure(TimestampError(reason: "\"\(text.prefix(40))\" is outside 1970–9999")) }
            return .success(value)
        default:
            return .failure(TimestampError(reason: "expected a time (a number or a string), found \(document.kind(node).name)"))
        }
    }

    /// A number written as an integer, in `unit`: the same as ``fromNumber(_:unit:)`` of its
    /// text, without making the text.
    static func fromInteger(_ integer: Int64, unit: Unit) -> Result<Int64, TimestampError> {
        let value = Double(integer)
        let scale = scale(of: value, unit: unit)
        if scale == 1 {
            return integer >= 0 && integer <= latest ? .success(integer) : .failure(TimestampError(reason: "\(integer) is outside 1970–9999"))
        }
        return scaled(value, by: scale) { "\(integer)" }
    }

    /// `value` × `scale` rounded to whole µs, if it falls in 1970–9999; `text` is the number as
    /// written, for the message.
    private static func scaled(_ value: Double, by scale: Double, text: () -> String) -> Result<Int64, TimestampError> {
        let micros = (value * scale).rounded()
        guard micros >= 0, micros <= Double(latest) else { return .failure(TimestampError(reason: "\(text()) is outside 1970–9999")) }
        return .success(Int64(micros))
    }

    /// What a number read in `unit` is multiplied by to make µs.
    private static func scale(of value: Double, unit: Unit) -> Double {
        switch unit {
        case .seconds: 1_000_000
        case .milliseconds: 1_000
        case .microseconds: 1
        case .byMagnitude:
            abs(value) < 1e11 ? 1_000_000 : abs(value) < 1e14 ? 1_000 : 1
        }
    }

    /// A number's text in `unit`.
    static func fromNumber(_ text: String, unit: Unit) -> Result<Int64, TimestampError> {
        guard let value = Double(text), value.isFinite else {
            return .failure(TimestampError(reason: "\"\(text.prefix(40))\" is not a number"))
        }
        let scale = scale(of: value, unit: unit)
        // Integers of µs are taken exactly (a Double loses digits past 2⁵³).
        if scale == 1, let exact = Int64(text) {
            return exact >= 0 && exact <= latest ? .success(exact) : .failure(TimestampError(reason: "\(text) is outside 1970–9999"))
        }
        return scaled(value, by: scale) { text }
    }
}

/// Why a value is not a time.
public struct TimestampError: Error, Sendable {
    /// A phrase saying what was found.
    public var reason: String
}
