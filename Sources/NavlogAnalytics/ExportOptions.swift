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
