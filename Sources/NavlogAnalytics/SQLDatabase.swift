public import GRDB
import GRDBSQLite
public import NavlogStore

/// An SQL error, with the position in the query SQLite reports (when it reports one).
public struct SQLQueryError: Error, Sendable, CustomStringConvertible {
    /// SQLite's message, e.g. `near "FORM": syntax error`.
    public var message: String
    /// The query.
    public var sql: String
    /// The byte offset in the query's UTF-8 that SQLite points at (`sqlite3_error_offset`), if any.
    public var offset: Int?

    /// An error.
    public init(message: String, sql: String, offset: Int? = nil) {
        self.message = message
        self.sql = sql
        self.offset = offset
    }

    /// The offset as a 1-based line and column (in characters).
    public var lineAndColumn: (line: Int, column: Int)? {
        guard let offset else { return nil }
        let bytes = Array(sql.utf8)
        guard offset >= 0, offset <= bytes.count else { return nil }
        var line = 1
        var lineStart = 0
        for index in 0..<offset where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        let column = String(decoding: bytes[lineStart..<offset], as: UTF8.self).count + 1
        return (line, column)
    }

    /// The message with its position, and the query's line with a caret under the position.
    public var description: String {
        guard let offset, let (line, column) = lineAndColumn else { return "SQL error: \(message)" }
        let text = sql.split(separator: "\n", omittingEmptySubsequences: false)
        let shown = line - 1 < text.count ? String(text[line - 1]) : ""
        let prefix = String(shown.prefix(column - 1).map { $0 == "\t" ? Character("\t") : Character(" ") })
        return "SQL error at line \(line), column \(column) (byte offset \(offset)): \(message)\n  \(shown)\n  \(prefix)^"
    }
}

/// One value of a query result, with its SQLite type.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// What a checked query reads (see ``SQLAnalyticsDatabase/plan(_:)``).
public struct SQLQueryPlan: Sendable {
    /// The derived tables it reads (only these need loading).
    public var tables: Set<SQLTable>
    /// The columns it reads, per table (`count(*)` reads none).
    public var columns: [SQLTable: Set<String>] = [:]

    /// Whether it reads the `events` table alone and none of its session tags (app, version,
    /// idiom, device): then its rows need no session's tags, and no pass over the sessions.
    public var readsUntaggedEventsOnly: Bool {
        tables == [.events] && (columns[.events] ?? []).isDisjoint(with: ["app", "version", "idiom", "device"])
    }
}

/// Rows loaded into the database, per table.
public struct SQLLoadReport: Sendable {
    /// Rows inserted per table (none for `events`, read from the log as a query runs).
    public var rows: [SQLTable: Int] = [:]
}

/// The derived tables in a temporary SQLite database (through GRDB), for `navlog query sql`;
/// `events` is read from the log as a query runs (``SQLEventsTable``).
///
/// Use: ``plan(_:)`` checks a query and tells which tables it reads; ``load(from:filter:tables:)``
/// (or ``load(tables:scan:)``) replays the log into those tables (prepared statements, one
/// transaction); ``query(_:columns:row:)`` or ``fetchAll(_:)`` runs the query. Columns are those of ``SQLTable/columns``: times INTEGER µs, booleans
/// INTEGER 0/1, optional values NULL.
public final class SQLAnalyticsDatabase {
    /// The database (SQLite's private temporary database).
    public let queue: DatabaseQueue
    /// The `events` table, read from the log as a query runs.
    private let eventsTable = SQLEventsTable()

    /// A new temporary database with the six tables, empty: `events` is a virtual table that
    /// reads the log (``SQLEventsTable``) once a load gives it the log's events.
    public init() throws {
        var configuration = Configuration()
        configuration.label = "navlog.sql"
        // SQLite's private temporary database (the path ""): its pages beyond a 32 MiB cache
        // go to a file SQLite deletes when it closes, so that the derived tables of a big log
        // (screen_visits: 400 MB in memory at 10M events) do not have to fit in memory.
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = -32768; PRAGMA temp_store = FILE")
        }
        queue = try DatabaseQueue(path: "", configuration: configuration)
        let eventsTable = eventsTable
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: Self.schemaSQL(SQLTable.allCases.filter { $0 != .events }))
            guard let connection = db.sqliteConnection else { throw SQLQueryError(message: "the database is closed", sql: "") }
            let code = eventsTable.install(on: connection)
            if code != SQLITE_OK {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "creating the events table: \(String(cString: sqlite3_errmsg(connection)))")
            }
        }
    }

    /// `CREATE TABLE` statements for the six tables.
    public static var schemaSQL: String { schemaSQL(SQLTable.allCases) }

    /// `CREATE TABLE` statements for `tables`.
    static func schemaSQL(_ tables: [SQLTable]) -> String {
        tables.map { table in
            let columns = table.columns.map { "\(quoted($0.name)) \($0.type.sqlType)\($0.nullable ? "" : " NOT NULL")" }
            return "CREATE TABLE \(table.name) (\(columns.joined(separator: ", ")));"
        }.joined(separator: "\n")
    }

    /// Checks `sql` without running it (on a scratch database with the same tables): one
    /// statement, valid, naming existing tables and columns. Returns the derived tables it reads:
    /// those whose b-trees its bytecode opens (`EXPLAIN`'s OpenRead), and those SQLite's
    /// authorizer reports reading (views, CTEs and subqueries included; the authorizer alone
    /// misses the tables of a `JOIN … USING` that reads no other column of them).
    /// - Throws: ``SQLQueryError`` with SQLite's message and position.
    public static func plan(_ sql: String) throws(SQLQueryError) -> SQLQueryPlan {
        var connection: OpaquePointer?
        guard sqlite3_open_v2(":memory:", &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let connection else {
            throw SQLQueryError(message: "SQLite could not open an in-memory database.", sql: sql)
        }
        defer { sqlite3_close_v2(connection) }
        guard sqlite3_exec(connection, schemaSQL, nil, nil, nil) == SQLITE_OK else {
            throw SQLQueryError(message: String(cString: sqlite3_errmsg(connection)), sql: sql)
        }
        let reads = TableReads()
        let context = Unmanaged.passUnretained(reads).toOpaque()
        sqlite3_set_authorizer(
            connection,
            { context, action, table, column, _, _ in
                if action == SQLITE_READ, let context, let table {
                    let reads = Unmanaged<TableReads>.fromOpaque(context).takeUnretainedValue()
                    let name = String(cString: table)
                    reads.names.insert(name)
                    if let column { reads.columns[name, default: []].insert(String(cString: column)) }
                }
                return SQLITE_OK
            }, context)
        let statement = try prepare(sql, on: connection)
        sqlite3_finalize(statement)
        sqlite3_set_authorizer(connection, nil, nil)
        // The root page of each table, and the tables the bytecode opens.
        var roots: [Int64: String] = [:]
        let schema = try prepare("SELECT name, rootpage FROM sqlite_schema WHERE type = 'table'", on: connection)
        while sqlite3_step(schema) == SQLITE_ROW {
            roots[sqlite3_column_int64(schema, 1)] = String(cString: sqlite3_column_text(schema, 0))
        }
        sqlite3_finalize(schema)
        if let explain = try? prepare("EXPLAIN " + sql, on: connection) {
            while sqlite3_step(explain) == SQLITE_ROW {
                guard let opcode = sqlite3_column_text(explain, 1), String(cString: opcode) == "OpenRead" else { continue }
                if let name = roots[sqlite3_column_int64(explain, 3)] { reads.names.insert(name) }
            }
            sqlite3_finalize(explain)
        } else {
            // Not expected; loading every table is slow but right.
            reads.names.formUnion(SQLTable.allCases.map(\.name))
        }
        var plan = SQLQueryPlan(tables: Set(reads.names.compactMap(SQLTable.init(name:))))
        for (name, columns) in reads.columns {
            if let table = SQLTable(name: name) { plan.columns[table] = columns }
        }
        return plan
    }

    /// Collects the tables the authorizer reports.
    private final class TableReads {
        var names = Set<String>()
        var columns: [String: Set<String>] = [:]
    }

    /// Gives the `events` table its rows without a scan of the derived tables (for a query that
    /// reads no other table: ``SQLQueryPlan/readsUntaggedEventsOnly``).
    public func readEvents(from source: EventRowSource) {
        eventsTable.source = source
    }

    /// Prepares exactly one statement.
    static func prepare(_ sql: String, on connection: OpaquePointer) throws(SQLQueryError) -> OpaquePointer {
        var bytes = Array(sql.utf8)
        bytes.append(0)
        let result: Result<OpaquePointer, SQLQueryError> = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { text in
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let base = text.baseAddress!
                let length = Int32(text.count - 1)
                if sqlite3_prepare_v2(connection, base, length, &statement, &tail) != SQLITE_OK {
                    let offset = sqlite3_error_offset(connection)
                    return .failure(SQLQueryError(message: String(cString: sqlite3_errmsg(connection)), sql: sql, offset: offset >= 0 ? Int(offset) : nil))
                }
                guard let statement else { return .failure(SQLQueryError(message: "the query is empty: give one SQL statement, e.g. SELECT count(*) FROM sessions", sql: sql)) }
                // Anything after the first statement must be nothing but a `;`, spaces or comments.
                if let tail {
                    let consumed = base.distance(to: tail)
                    var rest: OpaquePointer?
                    var restTail: UnsafePointer<CChar>?
                    let code = sqlite3_prepare_v2(connection, tail, length - Int32(consumed), &rest, &restTail)
                    if code != SQLITE_OK || rest != nil {
                        sqlite3_finalize(rest)
                        sqlite3_finalize(statement)
                        return .failure(SQLQueryError(message: "only one SQL statement can run at a time; this is a second one", sql: sql, offset: consumed))
                    }
                }
                return .success(statement)
            }
        }
        return try result.get()
    }

    /// Replays `reader` once (``DerivedTableScanner`` with `filter`) and inserts the rows of
    /// `tables` in one transaction, with one prepared statement per table.
    /// - Throws: ``StoreError`` for log I/O, GRDB's `DatabaseError` for SQLite failures.
    @discardableResult
    public func load(from reader: LogReader, filter: AnalyticsFilter = AnalyticsFilter(), tables: Set<SQLTable> = Set(SQLTable.allCases)) throws -> SQLLoadReport {
        try load(tables: tables) { sink in
            var scanner = DerivedTableScanner(reader: reader, filter: filter)
            try scanner.scan(into: &sink)
        }
    }

    /// Inserts the rows `scan` feeds to the sink it is given (the rows of `tables`; others are
    /// dropped) in one transaction, with one prepared statement per table. `scan` runs a
    /// ``DerivedTableScanner`` into the sink, with whatever progress reporting the caller wants.
    /// - Throws: what `scan` throws; GRDB's `DatabaseError` for SQLite failures.
    @discardableResult
    public func load(tables: Set<SQLTable>, scan: (inout SQLTableSink) throws -> Void) throws -> SQLLoadReport {
        var report = SQLLoadReport()
        guard !tables.isEmpty else { return report }
        try queue.inTransaction { db in
            var statements: [Statement?] = []
            for table in SQLTable.allCases {
                if tables.contains(table) && table != .events {
                    let placeholders = Array(repeating: "?", count: table.columns.count).joined(separator: ", ")
                    statements.append(try db.makeStatement(sql: "INSERT INTO \(table.name) VALUES (\(placeholders))"))
                } else {
                    statements.append(nil)
                }
            }
            var sink = SQLTableSink(statements: statements.map { $0?.sqliteStatement }, events: tables.contains(.events) ? eventsTable : nil)
            try withExtendedLifetime(statements) { try scan(&sink) }
            if let failure = sink.failure {
                throw DatabaseError(resultCode: ResultCode(rawValue: failure.code), message: "inserting into \(failure.table.name): \(failure.message)")
            }
            for table in SQLTable.allCases where tables.contains(table) { report.rows[table] = sink.rows[table.ordinal] }
            return .commit
        }
        return report
    }

    /// Runs `sql` (one statement): calls `columns` with the column names, then `row` with each
    /// result row's values. Returns the column names.
    /// - Throws: ``SQLQueryError`` with SQLite's message and position; what the closures throw.
    @discardableResult
    public func query(_ sql: String, columns: ([String]) throws -> Void = { _ in }, row: ([SQLValue]) throws -> Void) throws -> [String] {
        try queue.writeWithoutTransaction { db throws -> [String] in
            guard let connection = db.sqliteConnection else { throw SQLQueryError(message: "the database is closed", sql: sql) }
            let statement = try Self.prepare(sql, on: connection)
            defer { sqlite3_finalize(statement) }
            let count = Int(sqlite3_column_count(statement))
            let names = (0..<count).map { String(cString: sqlite3_column_name(statement, Int32($0))) }
            try columns(names)
            var values = [SQLValue](repeating: .null, count: count)
            while true {
                let code = sqlite3_step(statement)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else {
                    let offset = sqlite3_error_offset(connection)
                    throw SQLQueryError(message: String(cString: sqlite3_errmsg(connection)), sql: sql, offset: offset >= 0 ? Int(offset) : nil)
                }
                for index in 0..<count {
                    let column = Int32(index)
                    switch sqlite3_column_type(statement, column) {
                    case SQLITE_INTEGER: values[index] = .integer(sqlite3_column_int64(statement, column))
                    case SQLITE_FLOAT: values[index] = .real(sqlite3_column_double(statement, column))
                    case SQLITE_TEXT:
                        let length = Int(sqlite3_column_bytes(statement, column))
                        if let text = sqlite3_column_text(statement, column) {
                            values[index] = .text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
                        } else {
                            values[index] = .text("")
                        }
                    case SQLITE_BLOB:
                        let length = Int(sqlite3_column_bytes(statement, column))
                        if let blob = sqlite3_column_blob(statement, column) {
                            values[index] = .blob(Array(UnsafeRawBufferPointer(start: blob, count: length)))
                        } else {
                            values[index] = .blob([])
                        }
                    default: values[index] = .null
                    }
                }
                try row(values)
            }
            return names
        }
    }

    /// Runs `sql` and returns its column names and every row.
    /// - Throws: ``SQLQueryError``.
    public func fetchAll(_ sql: String) throws -> (columns: [String], rows: [[SQLValue]]) {
        var rows: [[SQLValue]] = []
        let columns = try query(sql) { rows.append($0) }
        return (columns, rows)
    }

    /// `name` as a quoted SQL identifier (`end`, `from`, `index` and `to` are SQL keywords).
    public static func quoted(_ name: String) -> String { "\"" + name + "\"" }
}

/// SQLite's "copy the value now" destructor.
let sqliteTransient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// `text` as a NUL-terminated copy in SQLite's memory (for what SQLite frees itself: an
/// `idxStr`, a virtual table's `zErrMsg`); nil when SQLite has no memory.
func sqliteCopy(_ text: String) -> UnsafeMutablePointer<CChar>? {
    let bytes = Array(text.utf8)
    guard let copy = sqlite3_malloc(Int32(bytes.count + 1)) else { return nil }
    copy.copyMemory(from: bytes, byteCount: bytes.count)
    copy.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
    return copy.assumingMemoryBound(to: CChar.self)
}

/// A NUL byte: the text bound for an empty string (a null pointer would bind NULL).
nonisolated(unsafe) private let emptyCString: UnsafeMutablePointer<CChar> = {
    let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
    pointer.pointee = 0
    return pointer
}()

/// Inserts derived rows through prepared statements (one per table, reused for every row);
/// made by ``SQLAnalyticsDatabase/load(tables:scan:)``.
public struct SQLTableSink: DerivedTableSink {
    /// Per table (by ordinal), its INSERT statement, or nil when the table is not loaded
    /// (always nil for `events`, read in place).
    let statements: [OpaquePointer?]
    /// The `events` table when the query reads it: it takes the scan's event source.
    let eventsTable: SQLEventsTable?
    /// Rows inserted per table (by ordinal).
    var rows = [Int](repeating: 0, count: SQLTable.allCases.count)
    var failure: (table: SQLTable, code: Int32, message: String)?
    /// No `events` rows one by one: the table reads them from the log as the query runs.
    public var wantsEvents: Bool { false }
    /// Whether the query reads the events table.
    public var takesEventSource: Bool { eventsTable != nil }

    init(statements: [OpaquePointer?], events: SQLEventsTable?) {
        self.statements = statements
        self.eventsTable = events
    }

    /// Gives the `events` table its rows.
    public mutating func events(_ source: EventRowSource) throws {
        eventsTable?.source = source
    }

    /// Binds values to a statement's parameters in order.
    struct Binder: SQLRowEncoder {
        let statement: OpaquePointer
        var index: Int32 = 1

        @inline(__always)
        mutating func integer(_ value: Int64) {
            sqlite3_bind_int64(statement, index, value)
            index += 1
        }

        @inline(__always)
        mutating func text(_ value: String) {
            let statement = statement
            let index = index
            let bound = value.utf8.withContiguousStorageIfAvailable { bytes in
                bytes.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(statement, index, $0.baseAddress ?? UnsafePointer(emptyCString), Int32(bytes.count), sqliteTransient) }
            }
            if bound == nil {
                var copy = value
                copy.withUTF8 { bytes in
                    _ = bytes.withMemoryRebound(to: CChar.self) {
                        sqlite3_bind_text(statement, index, $0.baseAddress ?? UnsafePointer(emptyCString), Int32(bytes.count), sqliteTransient)
                    }
                }
            }
            self.index += 1
        }

        @inline(__always)
        mutating func null() {
            sqlite3_bind_null(statement, index)
            index += 1
        }

        @inline(__always)
        mutating func boolean(_ value: Bool) { integer(value ? 1 : 0) }
    }

    @inline(__always)
    private mutating func insert(_ table: SQLTable, _ encode: (inout Binder) -> Void) {
        guard failure == nil, let statement = statements[table.ordinal] else { return }
        var binder = Binder(statement: statement)
        encode(&binder)
        let code = sqlite3_step(statement)
        if code != SQLITE_DONE {
            failure = (table, code, String(cString: sqlite3_errmsg(sqlite3_db_handle(statement))))
        }
        sqlite3_reset(statement)
        rows[table.ordinal] += 1
    }

    /// Inserts a `screen_visits` row.
    public mutating func visit(_ row: ScreenVisit) { insert(.screenVisits) { row.encodeColumns(into: &$0) } }
    /// Inserts a `transitions` row.
    public mutating func transition(_ row: TransitionRow) { insert(.transitions) { row.encodeColumns(into: &$0) } }
    /// Inserts a `sessions` row.
    public mutating func session(_ row: SessionRow) { insert(.sessions) { row.encodeColumns(into: &$0) } }
    /// Inserts an `anomalies` row.
    public mutating func anomaly(_ row: AnomalyRow) { insert(.anomalies) { row.encodeColumns(into: &$0) } }
    /// Inserts an `exits` row.
    public mutating func exit(_ row: ExitRow) { insert(.exits) { row.encodeColumns(into: &$0) } }
}
