import ArgumentParser
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
            Rows per second and bytes written are printed on standard error. DuckDB:
              SELECT * FROM read_json('DIR/screen_visits/*/*.jsonl.zst', hive_partitioning=true)
            See docs/ANALYTICS-TABLES.md for ClickHouse and Spark.
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

    @OptionGroup var scope: AnalyticsFilterOptions

    func validate() throws {
        for table in tables where SQLTable(name: table) == nil {
            throw ValidationError("\(table) is not a table. Tables: \(SQLTable.allCases.map(\.name).joined(separator: ", ")).")
        }
    }

    func run() throws {
        let reader: LogReader
        do {
            reader = try LogReader(directory: scope.data.dataDirectory)
        } catch {
            printError("navlog export: \(error.message)")
            throw ExitCode.failure
        }
        let options = ExportOptions(
            directory: directory, format: format.value, compression: compress.value, partitioning: partition.value,
            tables: tables.isEmpty ? Set(SQLTable.allCases) : Set(tables.compactMap(SQLTable.init(name:))), overwrite: overwrite)
        let filter = scope.filter
        let total = reader.eventCount
        let showProgress = isatty(STDERR_FILENO) == 1 && total > 1_000_000
        let clock = ContinuousClock()
        let started = clock.now
        var eventsRead = 0
        let report: ExportReport
        var index: ReplayIndex?
        do {
            report = try Exporter.export(options: options) { sink in
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
        } catch let error as StoreError {
            printError("navlog export: \(error.message)")
            throw ExitCode.failure
        } catch {
            printError("navlog export: \(error)")
            throw ExitCode.failure
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
