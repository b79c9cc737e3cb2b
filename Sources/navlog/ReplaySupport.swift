import ArgumentParser
import Foundation
import NavlogAnalytics
import NavlogJSON
import NavlogReplay
import NavlogReplayStore
import NavlogStore

/// Options of the commands that read replay results.
struct ReplayIndexOptions: ParsableArguments {
    @Option(
        name: .customLong("index-dir"),
        help: ArgumentHelp(
            "Where replay checkpoints are kept (default: <data-dir>/replay). Give one when the data directory is read-only; nothing is written anywhere else.",
            valueName: "dir"))
    var indexDirectory: String?

    /// Resolved against the working directory once, at startup.
    mutating func validate() throws {
        indexDirectory = indexDirectory.map(ReplayFiles.absolute)
    }
}

/// Opens the log and its replay index, brought up to date; prints a clear error and exits on failure.
func openReplayIndex(command: String, data: DataDirectoryOptions, options: ReplayIndexOptions, refresh: Bool = true) throws -> ReplayIndex {
    let reader = try data.openReader(command: command)
    let index = ReplayIndex(log: reader, directory: options.indexDirectory)
    if refresh {
        do {
            try index.refresh()
            noteRebuiltIndex(command: command, index)
        } catch {
            printError("navlog \(command): \(error) Replays will read sessions from their first event.")
        }
    }
    return index
}

/// Says, in one line, that the last refresh rebuilt index files another navlog version wrote
/// (an upgrade changes the index format; the first command after it rebuilds, slower).
func noteRebuiltIndex(command: String, _ index: ReplayIndex) {
    let report = index.lastRefresh
    guard report.filesOfAnotherVersion > 0 else { return }
    let format = report.otherFormat.map { " (index format \($0))" } ?? ""
    printError(
        "navlog \(command): the replay index in \(index.directory ?? "the data directory") was written by another navlog version\(format); rebuilt \(report.filesOfAnotherVersion) file(s) for this one. This happens once after an upgrade."
    )
}

/// Prints damage the reader met (skipped blocks) and, with an index, the damage its builds met
/// in blocks this command did not read again: every reading command says it, every time.
/// Returns whether there was any.
func reportDamage(command: String, _ reader: LogReader, index: ReplayIndex? = nil) -> Bool {
    var lines = reader.damage.map(\.description)
    for line in index?.recordedDamage() ?? [] where !lines.contains(line) { lines.append(line) }
    for line in lines { printError("navlog \(command): skipped damaged data: \(line). Run navlog verify for a full check.") }
    return !lines.isEmpty
}

/// An `--at` value: an absolute time, or an offset from the session's first event (`+12.5s`, `+3m`, `+250ms`).
enum SessionTime: ExpressibleByArgument {
    case absolute(Int64)
    case offset(Int64)

    init?(argument: String) {
        if argument.hasPrefix("+") {
            var text = argument.dropFirst()
            var scale: Double = 1_000_000
            for (suffix, value) in [("ms", 1_000.0), ("us", 1.0), ("µs", 1.0), ("s", 1_000_000.0), ("m", 60_000_000.0), ("h", 3_600_000_000.0)]
            where text.hasSuffix(suffix) {
                text = text.dropLast(suffix.count)
                scale = value
                break
            }
            guard let amount = Double(text), amount >= 0 else { return nil }
            self = .offset(Int64(amount * scale))
        } else if let time = TimeArgument(argument: argument) {
            self = .absolute(time.microseconds)
        } else {
            return nil
        }
    }

    /// µs since the epoch, for a session that started at `start`.
    func microseconds(sessionStart start: Int64) -> Int64 {
        switch self {
        case .absolute(let value): value
        case .offset(let value): start + value
        }
    }
}

/// Output formats of tables.
enum TableFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, csv
}

/// Renders rows as aligned columns, JSON Lines or CSV.
struct TableWriter {
    var columns: [String]
    /// The cells; nil is an absent value (`null` in JSON, empty in a table or CSV), distinct
    /// from an empty string (`""` in JSON).
    var rows: [[String?]] = []
    /// Columns whose values are numbers (unquoted in JSON, right-aligned in tables).
    var numeric: Set<String> = []

    func render(_ format: TableFormat) -> String {
        switch format {
        case .table:
            var widths = columns.map(\.count)
            let rows = self.rows.map { $0.map { $0 ?? "" } }
            for row in rows {
                for (index, value) in row.enumerated() { widths[index] = max(widths[index], value.count) }
            }
            func line(_ values: [String]) -> String {
                values.enumerated().map { index, value in
                    let pad = String(repeating: " ", count: widths[index] - value.count)
                    return numeric.contains(columns[index]) ? pad + value : value + pad
                }.joined(separator: "  ").trimmingTrailingSpaces()
            }
            return ([line(columns.map { $0.uppercased() })] + rows.map(line)).joined(separator: "\n") + "\n"
        case .csv:
            func field(_ value: String) -> String {
                value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) ? "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : value
            }
            return ([columns] + rows.map { $0.map { $0 ?? "" } }).map { $0.map(field).joined(separator: ",") }.joined(separator: "\n") + "\n"
        case .json:
            var json = JSONWriter()
            for row in rows {
                json.byte(UInt8(ascii: "{"))
                for (index, value) in row.enumerated() {
                    json.key(escaping: columns[index], first: index == 0)
                    guard let value, !(value.isEmpty && numeric.contains(columns[index])) else {
                        json.null()
                        continue
                    }
                    // A numeric column holds the number's text already.
                    if numeric.contains(columns[index]) { json.raw(value.utf8) } else { json.string(value) }
                }
                json.raw("}\n")
            }
            return String(decoding: json.bytes, as: UTF8.self)
        }
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}

/// Writes `text` to standard output.
func printOutput(_ text: String) {
    var output = OutputBuffer()
    output.bytes.append(contentsOf: text.utf8)
    output.flush()
}

/// Feeds `sink` the rows of the replay index's focus journals (building or extending the index
/// first), so that a report needs no replay of the log.
/// - Returns: whether the journals answered. Not when `sink` wants the events themselves or
///   there is no index directory, nor when the index cannot be written (a full disk, a read-only
///   directory): then a note says so, after `beforeNote` (which clears a progress line), and the
///   caller replays the log instead, with the same rows.
func scanFocusJournals<Sink: DerivedTableSink>(
    _ reader: LogReader, filter: AnalyticsFilter, into sink: inout Sink, command: String, indexUsed: inout ReplayIndex?,
    progress: ((Int) -> Void)? = nil, beforeNote: () -> Void = {}
) throws -> Bool {
    do {
        let index = ReplayIndex(log: reader)
        let answered = try JournalScanner(index: index, filter: filter).scan(into: &sink, progress: progress)
        if index.lastRefresh.filesOfAnotherVersion > 0 {
            beforeNote()
            noteRebuiltIndex(command: command, index)
        }
        if answered { indexUsed = index }
        return answered
    } catch let error as ReplayIndexError where error.code == .unwritable {
        beforeNote()
        printError("navlog \(command): \(error.message) Answering by replaying the log instead (slower).")
        return false
    }
}
