import CZlib
import Foundation
import NavlogEvents
public import NavlogStore
import NavlogZstd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file format of an export.
public enum ExportFormat: String, Sendable, CaseIterable {
    /// JSON Lines (`.jsonl`): one object per row, keys the column names, integers as numbers,
    /// booleans as true/false, NULL as null.
    case jsonl
    /// CSV (`.csv`) with a header line and RFC 4180 quoting; NULL is `\N` (ClickHouse's own
    /// CSV null, and the one value Spark's CSV reader can tell from an empty string, which is `""`).
    case csv
}

/// How export files are compressed.
public enum ExportCompression: String, Sendable, CaseIterable {
    /// zstd (`.zst`): each file is a run of complete zstd frames (one per few MB), which zstd,
    /// DuckDB, ClickHouse and Hadoop's codec read as one stream.
    case zstd
    /// gzip (`.gz`): each file is a run of complete gzip members (one per few MB), which gzip,
    /// DuckDB, ClickHouse and Hadoop's codec read as one stream.
    case gzip
    /// No compression.
    case none

    /// The file name suffix after the format's.
    public var suffix: String {
        switch self {
        case .zstd: ".zst"
        case .gzip: ".gz"
        case .none: ""
        }
    }
}

/// How rows are split into directories.
public enum ExportPartitioning: String, Sendable, CaseIterable {
    /// Hive-style `day=YYYY-MM-DD` directories, by the UTC day of each row's main time
    /// (``SQLTable/timeColumn``).
    case day
    /// One file per table.
    case none
}

/// What `navlog export` writes and where.
public struct ExportOptions: Sendable {
    /// The directory that receives one subdirectory per table.
    public var directory: String
    /// The file format.
    public var format: ExportFormat
    /// The compression.
    public var compression: ExportCompression
    /// The partitioning.
    public var partitioning: ExportPartitioning
    /// The tables to write.
    public var tables: Set<SQLTable>
    /// Whether existing table directories under ``directory`` are removed first (otherwise
    /// their presence is an error).
    public var overwrite: Bool
    /// Uncompressed bytes per zstd frame (and per write).
    public var chunkSize: Int
    /// The zstd level.
    public var level: Int32
    /// Uncompressed bytes buffered across all partitions before everything is flushed.
    public var memoryBudget: Int
    /// The host these rows come from: a `host=NAME` partition level above the day, so that the
    /// exports of several navlogd hosts go into one tree (a fleet). `nil`: no host level.
    public var host: String?
    /// Uncompressed bytes after which a partition's file is closed and the next part begun, so
    /// that an engine reads a large table-day as several splits in parallel.
    public var partSize: Int
    /// The start of every file name, before the part number (`part-` makes `part-00000.jsonl.zst`;
    /// incremental exports name the run: `part-r000007-`).
    public var filePrefix: String
    /// Whether the files are added to table directories that may exist (an incremental run)
    /// rather than written into new ones.
    public var appending = false

    /// Options; the defaults write every table as day-partitioned zstd JSON Lines.
    public init(
        directory: String, format: ExportFormat = .jsonl, compression: ExportCompression = .zstd, partitioning: ExportPartitioning = .day,
        tables: Set<SQLTable> = Set(SQLTable.allCases), overwrite: Bool = false, chunkSize: Int = 4 << 20, level: Int32 = 3, memoryBudget: Int = 128 << 20,
        host: String? = nil, partSize: Int = ExportOptions.defaultPartSize, filePrefix: String = "part-"
    ) {
        self.directory = directory
        self.format = format
        self.compression = compression
        self.partitioning = partitioning
        self.tables = tables
        self.overwrite = overwrite
        self.chunkSize = chunkSize
        self.level = level
        self.memoryBudget = memoryBudget
        self.host = host
        self.partSize = partSize
        self.filePrefix = filePrefix
    }

    /// 128 MiB of rows before compression: Spark's default split size, so that one part file is
    /// one task (docs/BENCHMARKS.md has the measurement).
    public static let defaultPartSize = 128 << 20
}

/// An export failure, said as a sentence.
public struct ExportError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: Sendable, Hashable {
        /// The options cannot make an export (no table, a file where the directory should be).
        case invalidOptions
        /// The output directory already holds what the export would write.
        case outputExists
        /// The output tree holds another layout (host partitions or not).
        case layoutMismatch
        /// The incremental state file cannot be read, or belongs to other options.
        case stateMismatch
        /// The compressor failed.
        case compression
        /// A file could not be created, written, renamed or deleted.
        case io
    }

    /// What kind of failure.
    public var code: Code
    /// What went wrong and what to do.
    public var message: String
    /// An error of `code` (an I/O failure unless said otherwise).
    public init(_ message: String, code: Code = .io) {
        self.message = message
        self.code = code
    }
    public var description: String { message }
}

/// What an export wrote.
public struct ExportReport: Sendable {
    /// Rows written per table.
    public var rows: [SQLTable: Int] = [:]
    /// Partition files written per table.
    public var files: [SQLTable: Int] = [:]
    /// Bytes written to disk (after compression).
    public var bytesWritten = 0
    /// Bytes before compression.
    public var uncompressedBytes = 0
    /// Events the scan read from the log.
    public var eventsRead = 0
    /// The files written, relative to the export directory, sorted.
    public var paths: [String] = []

    /// Rows written in all.
    public var totalRows: Int { rows.values.reduce(0, +) }
}

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
    public mutating func visit(_ row: ScreenVisit) { writer.write(.screenVisits, time: row.start) { row.encodeColumns(into: &$0) } }
    /// Writes a `transitions` row.
    public mutating func transition(_ row: TransitionRow) { writer.write(.transitions, time: row.timestamp) { row.encodeColumns(into: &$0) } }
    /// Writes a `sessions` row.
    public mutating func session(_ row: SessionRow) { writer.write(.sessions, time: row.first) { row.encodeColumns(into: &$0) } }
    /// Writes an `anomalies` row.
    public mutating func anomaly(_ row: AnomalyRow) { writer.write(.anomalies, time: row.timestamp) { row.encodeColumns(into: &$0) } }
    /// Writes an `exits` row.
    public mutating func exit(_ row: ExitRow) { writer.write(.exits, time: row.timestamp) { row.encodeColumns(into: &$0) } }
}

/// Appends a row's values to a buffer as a JSON object or a CSV line.
struct ExportRowEncoder: SQLRowEncoder {
    var buffer: [UInt8]
    /// Per column: `{"name":` or `,"name":` for JSON; empty for CSV.
    let keys: [[UInt8]]
    let csv: Bool
    var column = 0

    @inline(__always)
    private mutating func separator() {
        if csv {
            if column > 0 { buffer.append(UInt8(ascii: ",")) }
        } else {
            buffer.append(contentsOf: keys[column])
        }
        column += 1
    }

    @inline(__always)
    mutating func integer(_ value: Int64) {
        separator()
        EventJSONWriter.appendInteger(value, to: &buffer)
    }

    @inline(__always)
    mutating func optionalInteger(_ value: Int64?) {
        if let value { integer(value) } else { null() }
    }

    @inline(__always)
    mutating func text(_ value: String) {
        separator()
        if csv {
            // "" is the empty string and \N is NULL, so both are quoted when they are values.
            if value.isEmpty || value == "\\N" {
                buffer.append(UInt8(ascii: "\""))
                buffer.append(contentsOf: value.utf8)
                buffer.append(UInt8(ascii: "\""))
            } else {
                appendCSVField(value, to: &buffer)
            }
        } else {
            EventJSONWriter.appendString(value, to: &buffer)
        }
    }

    @inline(__always)
    mutating func optionalText(_ value: String?) {
        if let value { text(value) } else { null() }
    }

    @inline(__always)
    mutating func boolean(_ value: Bool) {
        separator()
        buffer.append(contentsOf: value ? "true".utf8 : "false".utf8)
    }

    @inline(__always)
    private mutating func null() {
        separator()
        buffer.append(contentsOf: csv ? "\\N".utf8 : "null".utf8)
    }

    /// Ends the row.
    @inline(__always)
    mutating func finish() {
        if !csv { buffer.append(UInt8(ascii: "}")) }
        buffer.append(UInt8(ascii: "\n"))
    }
}

/// The partitions of every table being written: buffers, files, zstd frames.
final class ExportPartitionWriter {
    /// One output file.
    struct Partition {
        var table: SQLTable
        /// Relative to the export directory: the partition's directory.
        var directory: String
        /// The part number of the file being written.
        var part = 0
        /// Relative to the export directory, without the `.tmp` suffix.
        var path: String
        var buffer: [UInt8] = []
        var rows = 0
        var bytesWritten = 0
        var uncompressedBytes = 0
        /// Whether the file has been created (the first write truncates).
        var created = false
    }

    let options: ExportOptions
    private let compressor: ZstdBox?
    private var partitions: [Partition] = []
    /// Files closed because they reached ``ExportOptions/partSize``.
    private var closedParts: [Partition] = []
    /// Per table: day → partition index, and the last day seen (most rows repeat it).
    private var byDay: [[Int64: Int]] = Array(repeating: [:], count: SQLTable.allCases.count)
    private var lastDay = [Int64](repeating: .min, count: SQLTable.allCases.count)
    private var lastIndex = [Int](repeating: -1, count: SQLTable.allCases.count)
    /// Per table: the JSON keys of its columns, and its CSV header.
    private let keys: [[[UInt8]]]
    private let headers: [[UInt8]]
    /// Per table (by ordinal): whether it is written.
    private let wanted: [Bool]
    private var buffered = 0
    private var compressed: [UInt8] = []
    private(set) var failure: ExportError?
    private let suffix: String

    init(options: ExportOptions) throws {
        self.options = options
        if options.compression == .zstd {
            do { compressor = ZstdBox(try ZstdCompressor(level: options.level, contentChecksum: true)) } catch {
                throw ExportError("zstd: \(error)", code: .compression)
            }
        } else {
            compressor = nil
        }
        keys = SQLTable.allCases.map { table in
            table.columns.enumerated().map { index, column in
                var key: [UInt8] = [UInt8(ascii: index == 0 ? "{" : ",")]
                EventJSONWriter.appendString(column.name, to: &key)
                key.append(UInt8(ascii: ":"))
                return key
            }
        }
        headers = SQLTable.allCases.map { table in
            var header: [UInt8] = []
            for (index, column) in table.columns.enumerated() {
                if index > 0 { header.append(UInt8(ascii: ",")) }
                appendCSVField(column.name, to: &header)
            }
            header.append(UInt8(ascii: "\n"))
            return header
        }
        suffix = "." + options.format.rawValue + options.compression.suffix
        wanted = SQLTable.allCases.map { options.tables.contains($0) }
    }

    /// Appends one row of `table` to the partition of `time`'s day.
    @inline(__always)
    func write(_ table: SQLTable, time: Int64, _ encode: (inout ExportRowEncoder) -> Void) {
        guard failure == nil, wanted[table.ordinal] else { return }
        let index = partition(table, time: time)
        var encoder = ExportRowEncoder(buffer: [], keys: keys[table.ordinal], csv: options.format == .csv)
        swap(&encoder.buffer, &partitions[index].buffer)
        let before = encoder.buffer.count
        encode(&encoder)
        encoder.finish()
        let added = encoder.buffer.count - before
        swap(&encoder.buffer, &partitions[index].buffer)
        partitions[index].rows += 1
        buffered += added
        if partitions[index].uncompressedBytes + partitions[index].buffer.count >= options.partSize {
            buffered -= partitions[index].buffer.count
            nextPart(index)
        } else if partitions[index].buffer.count >= options.chunkSize {
            buffered -= partitions[index].buffer.count
            flush(index, release: false)
        }
        if buffered > options.memoryBudget {
            for other in partitions.indices where !partitions[other].buffer.isEmpty { flush(other, release: true) }
            buffered = 0
        }
    }

    /// The partition index of `table` for `time`, made on first use.
    @inline(__always)
    private func partition(_ table: SQLTable, time: Int64) -> Int {
        let ordinal = table.ordinal
        let day = options.partitioning == .day ? Exporter.day(ofMicroseconds: time) : 0
        if day == lastDay[ordinal] { return lastIndex[ordinal] }
        let index: Int
        if let known = byDay[ordinal][day] {
            index = known
        } else {
            index = partitions.count
            var directory = table.name
            if let host = options.host { directory += "/host=" + host }
            if options.partitioning == .day { directory += "/day=" + Exporter.dayString(day) }
            var partition = Partition(table: table, directory: directory, path: fileName(directory, part: 0))
            if options.format == .csv { partition.buffer.append(contentsOf: headers[ordinal]) }
            buffered += partition.buffer.count
            partitions.append(partition)
            byDay[ordinal][day] = index
        }
        lastDay[ordinal] = day
        lastIndex[ordinal] = index
        return index
    }

    /// `directory/PREFIX#####.EXT`.
    private func fileName(_ directory: String, part: Int) -> String {
        let digits = String(part)
        return directory + "/" + options.filePrefix + String(repeating: "0", count: max(0, 5 - digits.count)) + digits + suffix
    }

    /// Closes the partition's file and begins its next part.
    private func nextPart(_ index: Int) {
        flush(index, release: true)
        guard failure == nil else { return }
        closedParts.append(partitions[index])
        var next = Partition(table: partitions[index].table, directory: partitions[index].directory, path: "")
        next.part = partitions[index].part + 1
        next.path = fileName(next.directory, part: next.part)
        if options.format == .csv {
            next.buffer.append(contentsOf: headers[next.table.ordinal])
            buffered += next.buffer.count
        }
        partitions[index] = next
    }

    /// Writes a partition's buffer to its file (as one zstd frame when compressing).
    private func flush(_ index: Int, release: Bool) {
        guard failure == nil, !partitions[index].buffer.isEmpty else { return }
        let path = options.directory + "/" + partitions[index].path + ".tmp"
        if !partitions[index].created {
            let directory = String(path[..<path.lastIndex(of: "/")!])
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                failure = ExportError("cannot create \(directory): \(error.localizedDescription)")
                return
            }
        }
        let uncompressed = partitions[index].buffer.count
        var bytes = 0
        do {
            if let compressor {
                compressed.removeAll(keepingCapacity: true)
                try partitions[index].buffer.withUnsafeBytes { raw in
                    _ = try compressor.compressor.compress(raw, appendingTo: &compressed)
                }
                try append(compressed, to: path, truncate: !partitions[index].created)
                bytes = compressed.count
            } else if options.compression == .gzip {
                compressed.removeAll(keepingCapacity: true)
                try partitions[index].buffer.withUnsafeBytes { raw in try Gzip.compress(raw, level: 6, appendingTo: &compressed) }
                try append(compressed, to: path, truncate: !partitions[index].created)
                bytes = compressed.count
            } else {
                try append(partitions[index].buffer, to: path, truncate: !partitions[index].created)
                bytes = uncompressed
            }
        } catch let error as ExportError {
            failure = error
            return
        } catch {
            failure = ExportError("\(options.compression.rawValue): \(error)", code: .compression)
            return
        }
        partitions[index].created = true
        partitions[index].bytesWritten += bytes
        partitions[index].uncompressedBytes += uncompressed
        if release { partitions[index].buffer = [] } else { partitions[index].buffer.removeAll(keepingCapacity: true) }
    }

    /// Removes the files written so far, and the directories left empty (after a failure).
    func abandon() {
        for partition in closedParts + partitions {
            let path = options.directory + "/" + partition.path
            unlink(path + ".tmp")
            unlink(path)
            var directory = Substring(partition.path)
            while let slash = directory.lastIndex(of: "/") {
                directory = directory[..<slash]
                rmdir(options.directory + "/" + directory)
            }
        }
    }

    /// Flushes every buffer, renames the files into place and reports.
    func finish() throws(ExportError) -> ExportReport {
        for index in partitions.indices { flush(index, release: true) }
        if let failure { throw failure }
        var report = ExportReport()
        for partition in closedParts + partitions where partition.created {
            let path = options.directory + "/" + partition.path
            // On disk before its name says it is complete: a file renamed into place is whole after a crash.
            let descriptor = open(path + ".tmp", O_RDONLY | O_CLOEXEC)
            if descriptor >= 0 {
                fsync(descriptor)
                close(descriptor)
            }
            guard rename(path + ".tmp", path) == 0 else { throw ExportError("cannot rename \(path).tmp: \(String(cString: strerror(errno))).") }
            report.rows[partition.table, default: 0] += partition.rows
            report.files[partition.table, default: 0] += 1
            report.bytesWritten += partition.bytesWritten
            report.uncompressedBytes += partition.uncompressedBytes
            report.paths.append(partition.path)
        }
        for table in options.tables { report.rows[table] = report.rows[table] ?? 0 }
        report.paths.sort()
        for directory in Set((closedParts + partitions).map(\.directory)) {
            do { try DurableFile.syncDirectory(containing: options.directory + "/" + directory + "/x") } catch { throw ExportError(error.message) }
        }
        try writeSchemas()
        return report
    }
}

extension ExportPartitionWriter {
    /// Writes `TABLE/_schema.ENGINE` for every table exported: the column types each engine is
    /// to read the files with (``ExportReadStatements/schema(_:for:)``). Engines skip these
    /// files: Spark ignores names starting with `_`, and the read statements' globs match the
    /// data files' extension only.
    func writeSchemas() throws(ExportError) {
        for table in options.tables.sorted() {
            let directory = options.directory + "/" + table.name
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                throw ExportError("cannot create \(directory): \(error.localizedDescription)")
            }
            for engine in ExportEngine.allCases {
                let path = directory + "/_schema." + engine.schemaSuffix
                try append(Array((ExportReadStatements.schema(table, for: engine) + "\n").utf8), to: path + ".tmp", truncate: true)
                guard rename(path + ".tmp", path) == 0 else { throw ExportError("cannot rename \(path).tmp: \(String(cString: strerror(errno))).") }
            }
        }
    }
}

/// Appends `bytes` to the file at `path` (created, or emptied when `truncate`).
private func append(_ bytes: [UInt8], to path: String, truncate: Bool) throws(ExportError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : O_APPEND), 0o644)
    guard descriptor >= 0 else { throw ExportError("cannot open \(path): \(String(cString: strerror(errno))).") }
    defer { close(descriptor) }
    var written = 0
    var failed: Int32 = 0
    bytes.withUnsafeBytes { raw in
        while written < raw.count {
            let n = write(descriptor, raw.baseAddress! + written, raw.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                failed = errno
                return
            }
            written += n
        }
    }
    if failed != 0 { throw ExportError("cannot write \(path): \(String(cString: strerror(failed))).") }
}

/// Holds the non-copyable compressor in a class, so the writer can share it.
final class ZstdBox {
    let compressor: ZstdCompressor
    init(_ compressor: consuming ZstdCompressor) { self.compressor = compressor }
}

/// gzip through zlib: one complete gzip member per call (members concatenate into one stream).
enum Gzip {
    /// Appends the gzip member of `input` to `output`.
    static func compress(_ input: UnsafeRawBufferPointer, level: Int32, appendingTo output: inout [UInt8]) throws(ExportError) {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
        guard deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw ExportError("gzip: zlib could not start a stream (\(String(cString: zError(Z_STREAM_ERROR)))).", code: .compression)
        }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: bound))
        let result: Int32 = output.withUnsafeMutableBytes { raw in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(input.count)
            stream.next_out = raw.baseAddress!.advanced(by: start).assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(bound)
            return deflate(&stream, Z_FINISH)
        }
        guard result == Z_STREAM_END else {
            output.removeLast(bound)
            throw ExportError("gzip: deflate failed (\(String(cString: zError(result)))).", code: .compression)
        }
        output.removeLast(Int(stream.avail_out))
    }
}
