import Foundation

/// An engine that reads `navlog export`'s files.
public enum ExportEngine: String, Sendable, CaseIterable {
    /// DuckDB (`read_json` / `read_csv`).
    case duckdb
    /// ClickHouse (`file()` in clickhouse-local, a server, or chDB).
    case clickhouse
    /// Apache Spark SQL (spark-sql, `spark.sql(...)` in PySpark).
    case spark

    /// The suffix of the schema file written beside each table (`TABLE/_schema.SUFFIX`).
    public var schemaSuffix: String { rawValue }
}

/// Each engine's name for a column type, and the schema files and read statements of an export.
///
/// Engines left to infer types get them wrong on real data (an app version `1.10` read as the
/// number 1.1 from CSV; an integer column that is null in every row of the first file typed as
/// String by ClickHouse; partitions invisible to a Spark table until it is repaired), so the
/// export ships each table's exact types beside it and ``statements(for:directory:options:existingTables:)``
/// writes the statements that give them to each engine. The tests run these statements, and
/// docs/ANALYTICS-TABLES.md shows them.
public enum ExportReadStatements {
    /// The columns of `table` as `engine` declares them: a Spark DDL column list, a ClickHouse
    /// structure, or a DuckDB `columns` struct.
    public static func schema(_ table: SQLTable, for engine: ExportEngine) -> String {
        switch engine {
        case .spark:
            return table.columns.map { column in
                let type =
                    switch column.type {
                    case .integer: "BIGINT"
                    case .text: "STRING"
                    case .boolean: "BOOLEAN"
                    }
                return "`\(column.name)` \(type)"
            }.joined(separator: ", ")
        case .clickhouse:
            return table.columns.map { column in
                let base =
                    switch column.type {
                    case .integer: "Int64"
                    case .text: "String"
                    case .boolean: "Bool"
                    }
                return "`\(column.name)` " + (column.nullable ? "Nullable(\(base))" : base)
            }.joined(separator: ", ")
        case .duckdb:
            return "{"
                + table.columns.map { column in
                    let type =
                        switch column.type {
                        case .integer: "BIGINT"
                        case .text: "VARCHAR"
                        case .boolean: "BOOLEAN"
                        }
                    return "'\(column.name)': '\(type)'"
                }.joined(separator: ", ") + "}"
        }
    }

    /// The statements that make each exported table a view (DuckDB, ClickHouse) or a temporary
    /// view (Spark) with its exact column types, over the files under `directory` (a local
    /// path, made absolute, or a URI such as `s3://bucket/navlog`). Partition columns (`day`,
    /// and `host` for a fleet) come from the paths. Tables in `existingTables` that have no data
    /// files yet become empty views of the same columns, so that queries over them still run;
    /// `nil` means every table has files.
    /// `hostPartitioned` says whether the tree has a `host=` level (a fleet's export); ClickHouse
    /// names its partition columns, the other engines find them.
    public static func statements(
        for engine: ExportEngine, directory: String, options: ExportOptions, existingTables: Set<SQLTable>? = nil, hostPartitioned: Bool = false
    ) -> String {
        let root = absolute(directory)
        let suffix = "." + options.format.rawValue + options.compression.suffix
        var lines: [String] = []
        switch engine {
        case .duckdb:
            lines.append("-- DuckDB: views over navlog export's files in \(root) (run in duckdb, or con.execute() each statement).")
        case .clickhouse:
            lines.append("-- ClickHouse (clickhouse-local, chDB, a server with access to the files): views over \(root).")
        case .spark:
            lines.append("-- Spark SQL (spark-sql, or spark.sql() each statement): temporary views over \(root).")
        }
        for table in options.tables.sorted() {
            let path = root + "/" + table.name
            let quotedPath = path.replacingOccurrences(of: "'", with: "''")
            let hasFiles = existingTables?.contains(table) ?? true
            switch engine {
            case .duckdb:
                guard hasFiles else {
                    lines.append("-- \(table.name): no files yet, an empty view of its columns.")
                    let columns = table.columns.map { "CAST(NULL AS \(duckDBType($0))) AS \"\($0.name)\"" }.joined(separator: ", ")
                    lines.append("CREATE OR REPLACE VIEW \(table.name) AS SELECT \(columns) WHERE false;")
                    continue
                }
                let glob = quotedPath + "/**/*" + suffix
                let reader =
                    options.format == .jsonl
                    ? "read_json('\(glob)', format = 'newline_delimited', hive_partitioning = true, columns = \(schema(table, for: .duckdb)))"
                    : "read_csv('\(glob)', header = true, quote = '\"', escape = '\"', nullstr = '\\N', allow_quoted_nulls = false, hive_partitioning = true, columns = \(schema(table, for: .duckdb)))"
                lines.append("CREATE OR REPLACE VIEW \(table.name) AS SELECT * FROM \(reader);")
            case .clickhouse:
                let structure = schema(table, for: .clickhouse).replacingOccurrences(of: "'", with: "''")
                guard hasFiles else {
                    lines.append("-- \(table.name): no files yet, an empty view of its columns.")
                    lines.append("CREATE OR REPLACE VIEW \(table.name) AS SELECT * FROM generateRandom('\(structure)') LIMIT 0;")
                    continue
                }
                let format = options.format == .jsonl ? "JSONEachRow" : "CSVWithNames"
                // Partition columns are virtual in ClickHouse: `*` leaves them out.
                var partitions = hostPartitioned || options.host != nil ? ", host" : ""
                if options.partitioning == .day { partitions += ", day" }
                lines.append(
                    "CREATE OR REPLACE VIEW \(table.name) AS SELECT *\(partitions) FROM file('\(quotedPath)/**/*\(suffix)', \(format), '\(structure)') SETTINGS use_hive_partitioning = 1;"
                )
            case .spark:
                let source =
                    options.format == .jsonl
                    ? "USING json OPTIONS (path '\(quotedPath)')"
                    : "USING csv OPTIONS (path '\(quotedPath)', header 'true', escape '\"', multiLine 'true', nullValue '\\\\N')"
                lines.append("CREATE OR REPLACE TEMPORARY VIEW \(table.name) (\(schema(table, for: .spark))) \(source);")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func duckDBType(_ column: SQLColumn) -> String {
        switch column.type {
        case .integer: "BIGINT"
        case .text: "VARCHAR"
        case .boolean: "BOOLEAN"
        }
    }

    /// `directory` as an absolute path, or as it is when it is a URI.
    static func absolute(_ directory: String) -> String {
        if directory.contains("://") || directory.hasPrefix("/") { return trimmed(directory) }
        let base = FileManager.default.currentDirectoryPath
        var path = directory
        while path.hasPrefix("./") { path.removeFirst(2) }
        return trimmed(path == "." || path.isEmpty ? base : base + "/" + path)
    }

    private static func trimmed(_ path: String) -> String {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }
}
