import ArgumentParser
import Foundation
import NavlogAnalytics
import NavlogReplayStore
import NavlogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--format` of navlog export.
enum ExportFormatArgument: String, ExpressibleByArgument, CaseIterable {
    case jsonl, csv
    var value: ExportFormat { self == .jsonl ? .jsonl : .csv }
}

/// `--compress` of navlog export.
enum ExportCompressionArgument: String, ExpressibleByArgument, CaseIterable {
    case zstd, gzip, none
    var value: ExportCompression {
        switch self {
        case .zstd: .zstd
        case .gzip: .gzip
        case .none: .none
        }
    }
}

/// `--partition` of navlog export.
enum ExportPartitionArgument: String, ExpressibleByArgument, CaseIterable {
    case day, none
    var value: ExportPartitioning { self == .day ? .day : .none }
}

/// `navlog export`: the derived tables as Hive-style partitioned files for DuckDB, ClickHouse and Spark.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the derived tables as Hive-style partitions (JSON Lines or CSV; zstd, gzip or none) that DuckDB, ClickHouse and Spark read as they are.",
        discussion: """
            Writes DIR/TABLE/day=YYYY-MM-DD/part-00000.jsonl.zst for the tables events, \
            screen_visits, transitions, sessions, anomalies and exits (the columns of navlog query \
            sql --schema; times are µs since the epoch; a row's day is the UTC day of its main time: \
            start for screen_visits, first for sessions, timestamp otherwise). --partition none \
            writes DIR/TABLE/part-00000.jsonl.zst. zstd files are runs of complete frames of a few \
            MB each (gzip: complete gzip members). \
            Each table directory also gets _schema.spark, _schema.clickhouse and _schema.duckdb: \
            its exact column types. Rows per second and bytes written are printed on standard error.
            To read it: navlog export --to DIR --print-read duckdb|clickhouse|spark prints the \
            statements that make every table a typed view. --incremental --state FILE writes only \
            what is new since the last run, exactly once (systemd/navlog-export.timer runs it); \
            --host NAME puts a host's rows under host=NAME so a fleet shares one tree. \
            See docs/ANALYTICS-TABLES.md.
            """
    )

    @Option(name: .customLong("to"), help: ArgumentHelp("The directory to write the tables in.", valueName: "dir"))
    var directory: String

    @Option(help: "File format: jsonl or csv.")
    var format: ExportFormatArgument = .jsonl

    @Option(help: "Compression: zstd, gzip or none.")
    var compress: ExportCompressionArgument = .zstd

    @Option(help: "Partitioning: day (day=YYYY-MM-DD directories, UTC) or none.")
    var partition: ExportPartitionArgument = .day

    @Option(name: .customLong("table"), help: ArgumentHelp("Only this table (repeat for several; default: all six).", valueName: "table"))
    var tables: [String] = []

    @Flag(help: "Replace the table directories already in the output directory.")
    var overwrite = false

    @Option(
        help: ArgumentHelp(
            "Put the rows under a host=NAME partition (above day=), so that the exports of several navlogd hosts make one tree.",
            valueName: "name"))
    var host: String?

    @Option(
        help: ArgumentHelp(
            "Close a partition's file after this many bytes of rows (before compression) and begin the next part: 128M, 1G, 65536.",
            valueName: "size"))
    var partSize: ByteCountArgument = ByteCountArgument(bytes: ExportOptions.defaultPartSize)

    @Option(
        help: ArgumentHelp(
            "Print the statements that read this export with exact column types in ENGINE (duckdb, clickhouse or spark), and export nothing.",
            valueName: "engine"))
    var printRead: ExportEngineArgument?

    @Flag(
        help: ArgumentHelp(
            "Write only what is new since the last run (needs --state): the new events, and the rows of the sessions that became complete. Every row reaches the output exactly once, even after a crash and a rerun."
        ))
    var incremental = false

    @Option(help: ArgumentHelp("The file where --incremental keeps what it has exported (created on the first run).", valueName: "file"))
    var state: String?

    @Option(
        help: ArgumentHelp(
            "With --incremental: a session without session.end is complete (and its screens, transitions and other rows exported) once no event of it arrived for this long (90s, 10m, 2h).",
            valueName: "duration"))
    var idle = "30m"

    @Option(
        help: ArgumentHelp(
            "With --incremental: a session is complete this long after its session.end when no event of it arrived since (events delivered late still count). At most --idle.",
            valueName: "duration"))
    var endGrace = "5m"

    @OptionGroup var scope: AnalyticsFilterOptions

    func validate() throws {
        if let host {
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
            if host.isEmpty || !host.allSatisfy(allowed.contains) || host.hasPrefix(".") || host.hasPrefix("_") {
                throw ValidationError("--host \(host): a host name is letters, digits, '.', '-' and '_' (not first), so that it is a valid partition directory.")
            }
        }
        if incremental {
            guard state != nil else { throw ValidationError("--incremental needs --state FILE: where it keeps what it has exported between runs.") }
            guard DurationText.microseconds(idle) != nil else { throw ValidationError("--idle takes a duration such as 90s, 10m or 2h, not \(idle).") }
            guard DurationText.microseconds(endGrace) != nil else {
                throw ValidationError("--end-grace takes a duration such as 0s, 90s or 5m, not \(endGrace).")
            }
            if overwrite { throw ValidationError("--incremental adds files to the output directory; --overwrite would delete what earlier runs wrote.") }
            let filter = scope.filter
            if filter.since != nil || filter.until != nil || filter.app != nil || filter.version != nil || filter.idiom != nil || filter.session != nil {
                throw ValidationError("--incremental exports every session; --since, --until, --app, --version, --idiom and --session are for one-off exports.")
            }
        } else if state != nil {
            throw ValidationError("--state is for --incremental exports.")
        }
        if partSize.bytes < 4096 { throw ValidationError("--part-size must be at least 4096 bytes.") }
        for table in tables where SQLTable(name: table) == nil {
            throw ValidationError("\(table) is not a table. Tables: \(SQLTable.allCases.map(\.name).joined(separator: ", ")).")
        }
    }

    /// The export's options.
    var options: ExportOptions {
        ExportOptions(
            directory: directory, format: format.value, compression: compress.value, partitioning: partition.value,
            tables: tables.isEmpty ? Set(SQLTable.allCases) : Set(tables.compactMap(SQLTable.init(name:))), overwrite: overwrite,
            host: host, partSize: partSize.bytes)
    }

    func run() throws {
        if let printRead {
            let hostPartitioned = options.tables.contains { table in
                ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/" + table.name)) ?? []).contains { $0.hasPrefix("host=") }
            }
            printOutput(
                ExportReadStatements.statements(
                    for: printRead.value, directory: directory, options: options, existingTables: Self.tablesWithFiles(in: directory, options),
                    hostPartitioned: hostPartitioned))
            return
        }
        let reader = try scope.data.openReader(command: "export")
        let options = self.options
        if incremental {
            try runIncremental(reader, options)
            return
        }
        let filter = scope.filter
        let total = reader.eventCount
        let showProgress = isatty(STDERR_FILENO) == 1 && total > 1_000_000
        let clock = ContinuousClock()
        let started = clock.now
        var eventsRead = 0
        var index: ReplayIndex?
        let report = try reportingFailure("export") {
            try Exporter.export(options: options) { sink in
                // The replay index's focus journals give every table but events without a replay.
                if try scanFocusJournals(reader, filter: filter, into: &sink, command: "export", indexUsed: &index) {
                    eventsRead = reader.eventCount
                    return
                }
                var scanner = DerivedTableScanner(reader: reader, filter: filter)
                try scanner.scan(into: &sink) { read in
                    guard showProgress else { return }
                    let line = "\rnavlog export: \(read * 100 / max(total, 1))% of \(total) events"
                    _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
                }
                eventsRead = scanner.eventsRead
            }
        }
        if showProgress { _ = "\r\u{1B}[K".withCString { write(STDERR_FILENO, $0, strlen($0)) } }
        let elapsed = clock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rows = report.totalRows
        let perTable = SQLTable.allCases.filter { report.rows[$0] != nil }.map { "\($0.name) \(report.rows[$0]!)" }.joined(separator: ", ")
        let rate = seconds > 0 ? Int((Double(rows) / seconds).rounded()) : rows
        let files = report.files.values.reduce(0, +)
        printError(
            "navlog export: \(rows) rows (\(perTable)) from \(eventsRead) events in \(Self.decimal(seconds, 2)) s, \(rate) rows/s; "
                + "\(files) file(s), \(report.bytesWritten) bytes written (\(report.uncompressedBytes) before compression) to \(directory)")
        if reportDamage(command: "export", reader, index: index) { throw ExitCode.failure }
    }

    /// One incremental run, reported on standard error.
    func runIncremental(_ reader: LogReader, _ options: ExportOptions) throws {
        let clock = ContinuousClock()
        let started = clock.now
        let rule = IncrementalExportRule(idle: DurationText.microseconds(idle)!, endGrace: DurationText.microseconds(endGrace)!)
        let report = try reportingFailure("export") {
            try IncrementalExporter.run(reader: reader, options: options, statePath: state!, rule: rule)
        }
        let elapsed = clock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard report.ran else {
            printError("navlog export: nothing new since the last run (\(state!)).")
            return
        }
        let export = report.export
        let perTable = SQLTable.allCases.filter { export.rows[$0] != nil }.map { "\($0.name) \(export.rows[$0]!)" }.joined(separator: ", ")
        var line = "navlog export: run \(report.run)\(report.redone ? " (redone after a run that did not finish; \(report.deletedFiles) of its files deleted first)" : ""): "
        line += report.lsns.map { "LSNs \($0.lowerBound)–\($0.upperBound)" } ?? "no new event"
        line += ", \(report.sessionsCompleted) session(s) completed, \(report.sessionsLive) still live; "
        line += "\(export.totalRows) rows (\(perTable)), \(export.files.values.reduce(0, +)) file(s), \(export.bytesWritten) bytes in \(Self.decimal(seconds, 2)) s"
        printError(line)
        if report.eventsAfterSessionExported > 0 {
            printError(
                "navlog export: \(report.eventsAfterSessionExported) event(s) arrived for sessions exported by an earlier run: they are in events, not in their session's other rows (a longer --idle keeps sessions open longer)."
            )
        }
        if reportDamage(command: "export", reader, index: nil) { throw ExitCode.failure }
    }

    /// The tables of `options` with at least one data file under `directory`; nil when the
    /// directory is not a local one (a URI, or not written yet): then every table is taken to have files.
    static func tablesWithFiles(in directory: String, _ options: ExportOptions) -> Set<SQLTable>? {
        let files = FileManager.default
        guard !directory.contains("://"), files.fileExists(atPath: directory) else { return nil }
        let suffix = "." + options.format.rawValue + options.compression.suffix
        return Set(
            options.tables.filter { table in
                guard let walk = files.enumerator(atPath: directory + "/" + table.name) else { return false }
                while let path = walk.nextObject() as? String {
                    if path.hasSuffix(suffix) { return true }
                }
                return false
            })
    }

    /// `value` with `places` decimals.
    static func decimal(_ value: Double, _ places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = Int((value * scale).rounded())
        let whole = scaled / Int(scale)
        let fraction = String(scaled % Int(scale))
        return "\(whole)." + String(repeating: "0", count: max(0, places - fraction.count)) + fraction
    }
}

/// `--print-read` of navlog export.
enum ExportEngineArgument: String, ExpressibleByArgument, CaseIterable {
    case duckdb, clickhouse, spark
    var value: ExportEngine { ExportEngine(rawValue: rawValue)! }
}

/// A size in bytes, written as a number with an optional K, M or G (binary multiples).
struct ByteCountArgument: ExpressibleByArgument {
    /// The size.
    var bytes: Int

    init(bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        var text = argument.uppercased()
        if text.hasSuffix("B") { text.removeLast() }
        var scale = 1
        switch text.last {
        case "K": scale = 1 << 10
        case "M": scale = 1 << 20
        case "G": scale = 1 << 30
        default: break
        }
        if scale > 1 { text.removeLast() }
        guard let value = Int(text), value >= 0, value <= Int.max / scale else { return nil }
        bytes = value * scale
    }

    var defaultValueDescription: String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20)M" : "\(bytes)"
    }
}
