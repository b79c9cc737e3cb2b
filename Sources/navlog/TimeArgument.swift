import ArgumentParser
import NavlogEvents
import NavlogStore

/// A point in time on the command line: an RFC 3339 date-time, µs since the epoch, `now`, or
/// an offset from now such as `-15m`, `-2h`, `-7d`, `-30s`.
struct TimeArgument: ExpressibleByArgument {
    /// µs since the epoch.
    var microseconds: Int64

    init?(argument: String) {
        if argument == "now" {
            microseconds = currentMicroseconds()
        } else if let value = Int64(argument) {
            microseconds = value
        } else if let value = RFC3339.microseconds(argument) {
            microseconds = value
        } else if argument.hasPrefix("-"), let ago = DurationText.microseconds(argument.dropFirst()) {
            microseconds = currentMicroseconds() - ago
        } else {
            return nil
        }
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

/// A length of time on the command line: an amount and a unit, such as `90s`, `10m`, `2h`,
/// `1d` or `1.5h`.
enum DurationText {
    /// The duration `text` says, in µs; nil when it says none.
    static func microseconds(_ text: some StringProtocol) -> Int64? {
        guard let unit = text.last, let amount = Double(text.dropLast()), amount >= 0, amount.isFinite else { return nil }
        let scale: Double
        switch unit {
        case "s": scale = 1e6
        case "m": scale = 60e6
        case "h": scale = 3600e6
        case "d": scale = 86400e6
        default: return nil
        }
        let microseconds = amount * scale
        return microseconds < 9e18 ? Int64(microseconds) : nil
    }
}
