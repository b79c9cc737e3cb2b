import ArgumentParser
import NavlogAnalytics
import NavlogStore

/// `navlog query sql`: SQL over the derived tables, in a temporary SQLite database.
struct QuerySQLCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql",
        abstract: "Run one SQL statement (SQLite) over the derived tables: events, screen_visits, transitions, sessions, anomalies, exits.",
        discussion: """
            The tables the query reads are loaded into a temporary SQLite database (its pages \
            past 32 MiB in a file SQLite deletes, in $SQLITE_TMPDIR, $TMPDIR or /var/tmp) from \
            the replay index's journals (the log is replayed when there is none); events, a row \
            per stored event, is read from the log as the query runs. The \
            filters keep sessions (--app, --version, --idiom, --session) and rows in a time window \
            (--since, --until). Times are INTEGER µs since the epoch, booleans INTEGER 0/1, missing \
            values NULL. end, from, index and to are SQL keywords: quote them ("from"). \
            --schema lists every column. json prints one object per row with SQL types kept; csv \
            has a header line. Example:
              navlog query sql "SELECT screen, count(*) AS views FROM screen_visits GROUP BY 1 ORDER BY 2 DESC"
            """
    )

    @OptionGroup var options: QueryOptions

    @Flag(help: "Print the tables' columns with their types and meanings.")
    var schema = false

    @Flag(help: ArgumentHelp("With --schema: print Markdown tables (those of docs/ANALYTICS-TABLES.md).", visibility: .hidden))
    var markdown = false

    @Argument(help: ArgumentHelp("One SQL statement.", valueName: "sql"))
    var query: String?

    func validate() throws {
        if schema && query != nil { throw ValidationError("Give a query or --schema, not both.") }
        if !schema && query == nil { throw ValidationError("Give a SQL query, e.g. navlog query sql \"SELECT count(*) FROM sessions\", or --schema.") }
    }

    func run() throws {
        guard let sql = query else {
            printOutput(sqlSchemaDescription(markdown: markdown))
            return
        }
        let plan: SQLQueryPlan
        do {
            plan = try SQLAnalyticsDatabase.plan(sql)
        } catch {
            printError("navlog query sql: \(error)")
            throw ExitCode.failure
        }
        let database: SQLAnalyticsDatabase
        // Events alone, untagged and unfiltered by tags: read the log as the query runs, with no
        // pass over the sessions first (their tags are all the journals would add).
        let filter = options.filter
        var eventsReader: LogReader?
        if plan.readsUntaggedEventsOnly, filter.app == nil, filter.version == nil, filter.idiom == nil {
            eventsReader = try options.data.openReader(command: "query sql")
        }
        do {
            database = try SQLAnalyticsDatabase()
            if let eventsReader {
                database.readEvents(from: EventRowSource(reader: eventsReader, filter: filter, sessions: [:]))
            } else if !plan.tables.isEmpty {
                try database.load(tables: plan.tables) { sink in try options.run("sql", into: &sink) }
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            printError("navlog query sql: \(error)")
            throw ExitCode.failure
        }
        do {
            switch options.format {
            case .table:
                let result = try database.fetchAll(sql)
                printOutput(SQLResultWriter.renderTable(columns: result.columns, rows: result.rows))
            case .json, .csv:
                var output = OutputBuffer()
                var writer = SQLResultWriter(format: .json, columns: [])
                let format: SQLResultFormat = options.format == .json ? .json : .csv
                try database.query(sql) { columns in
                    writer = SQLResultWriter(format: format, columns: columns)
                    writer.header(to: &output.bytes)
                } row: { values in
                    writer.append(values, to: &output.bytes)
                    output.flushIfNeeded()
                }
                output.flush()
            }
        } catch {
            printError("navlog query sql: \(error)")
            throw ExitCode.failure
        }
        if let eventsReader, reportDamage(command: "query sql", eventsReader) { throw ExitCode.failure }
    }
}
