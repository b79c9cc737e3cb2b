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
