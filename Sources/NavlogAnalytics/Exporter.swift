import Foundation
import NavlogEvents
import NavlogReplay
public import NavlogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes the derived tables of a log as Hive-style partitions:
/// `DIR/TABLE/day=YYYY-MM-DD/part-00000.jsonl.zst` (or `DIR/TABLE/part-00000.jsonl.zst` without
/// partitioning). Files are written under a `.tmp` suffix and renamed when complete.
public enum Exporter {
    /// Replays `reader` once with `filter` and writes the tables of `options`.
    /// - Throws: ``ExportError`` (bad options, existing output, I/O), ``StoreError`` (the log).
    public static func export(from reader: LogReader, filter: AnalyticsFilter = AnalyticsFilter(), options: ExportOptions) throws -> ExportReport {
        var eventsRead = 0
        var report = try export(options: options) { sink in
            var scanner = DerivedTableScanner(reader: reader, filter: filter)
            try scanner.scan(into: &sink)
            eventsRead = scanner.eventsRead
        }
        report.eventsRead = eventsRead
        return report
    }

    /// Writes the tables of `options` from the rows `scan` feeds to the sink it is given (`scan`
    /// runs a ``DerivedTableScanner`` into it, with whatever progress reporting the caller wants).
    /// - Throws: ``ExportError`` (bad options, existing output, I/O), what `scan` throws.
    public static func export(options: ExportOptions, scan: (inout ExportSink) throws -> Void) throws -> ExportReport {
        guard !options.tables.isEmpty else { throw ExportError("no table to export.", code: .invalidOptions) }
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        if files.fileExists(atPath: options.directory, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw ExportError("\(options.directory) exists and is not a directory.", code: .invalidOptions)
        }
        for table in options.tables.sorted() {
            // One layout per tree: every file under host= directories (a fleet), or none.
            let entries = ((try? files.contentsOfDirectory(atPath: options.directory + "/" + table.name)) ?? []).filter { !$0.hasPrefix("_") }
            let hostEntries = entries.filter { $0.hasPrefix("host=") }
            if options.host != nil && hostEntries.count < entries.count || options.host == nil && !hostEntries.isEmpty {
                throw ExportError(
                    "\(options.directory)/\(table.name) holds an export \(options.host == nil ? "with" : "without") host= partitions; "
                        + "\(options.host == nil ? "give --host NAME" : "export without --host") to add to it, or choose another directory.", code: .layoutMismatch)
            }
        }
        for table in options.tables.sorted() where !options.appending {
            // A host's export replaces its own partition only: the other hosts of a fleet's tree stay.
            let path = options.directory + "/" + table.name + (options.host.map { "/host=" + $0 } ?? "")
            guard files.fileExists(atPath: path) else { continue }
            guard options.overwrite else {
                throw ExportError("\(path) already exists. Remove it, export to another directory, or pass --overwrite to replace the tables written.", code: .outputExists)
            }
            do { try files.removeItem(atPath: path) } catch { throw ExportError("cannot remove \(path): \(error.localizedDescription)") }
        }
        do {
            try files.createDirectory(atPath: options.directory, withIntermediateDirectories: true)
        } catch {
            throw ExportError("cannot create \(options.directory): \(error.localizedDescription)")
        }
        let writer = try ExportPartitionWriter(options: options)
        var sink = ExportSink(writer: writer, wantsEvents: options.tables.contains(.events))
        do {
            try scan(&sink)
            if let failure = writer.failure { throw failure }
            return try writer.finish()
        } catch {
            writer.abandon()
            throw error
        }
    }

    /// `YYYY-MM-DD` of the UTC day `day` (days since 1970-01-01).
    public static func dayString(_ day: Int64) -> String {
        let (y, m, d) = RFC3339.civilFromDays(Int(day))
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let digits = "\(y)"
        let year = y >= 0 && digits.count < 4 ? String(repeating: "0", count: 4 - digits.count) + digits : digits
        return "\(year)-\(two(m))-\(two(d))"
    }

    /// The UTC day of `microseconds` since the epoch.
    @inline(__always)
    public static func day(ofMicroseconds microseconds: Int64) -> Int64 {
        let perDay: Int64 = 86_400_000_000
        return microseconds >= 0 ? microseconds / perDay : (microseconds - perDay + 1) / perDay
    }
}

/// Receives the derived rows of an export and hands them to its partition files; made by
/// ``Exporter/export(options:scan:)``.
public struct ExportSink: DerivedTableSink {
    let writer: ExportPartitionWriter
    /// Whether the scan is to give it the events table's rows (an incremental export writes
    /// them itself, by LSN, and turns this off for its replay of the sessions).
    public var wantsEvents: Bool

    /// Writes an `events` row.
    public mutating func event(_ row: EventRow) { writer.write(.events, time: row.timestamp) { row.encodeColumns(into: &$0) } }
    /// Writes a `screen_visits` row.
    public mutating func visit(_ row: ScreenVisit) { writer.write(.screenVisits, time: row.view.start) { row.encodeColumns(into: &$0) } }
    /// Writes a `transitions` row.
    public mutating func transition(_ row: TransitionRow) { writer.write(.transitions, time: row.timestamp) { row.encodeColumns(into: &$0) } }
    /// Writes a `sessions` row.
    public mutating func session(_ row: SessionRow) { writer.write(.sessions, time: row.first) { row.encodeColumns(into: &$0) } }
    /// Writes an `anomalies` row.
    public mutating func anomaly(_ row: AnomalyRow) { writer.write(.anomalies, time: row.timestamp) { row.encodeColumns(into: &$0) } }
    /// Writes an `exits` row.
    public mutating func exit(_ row: ExitRow) { writer.write(.exits, time: row.timestamp) { row.encodeColumns(into: &$0) } }
}
