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
        } else if argument.hasPrefix("-"), let unit = argument.last, let amount = Int64(argument.dropFirst().dropLast()) {
            let scale: Int64
            switch unit {
            case "s": scale = 1_000_000
            case "m": scale = 60_000_000
            case "h": scale = 3_600_000_000
            case "d": scale = 86_400_000_000
            default: return nil
            }
            microseconds = currentMicroseconds() - amount * scale
        } else {
            return nil
        }
    }

    static var defaultCompletionKind: CompletionKind { .default }
}
