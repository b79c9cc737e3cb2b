import ArgumentParser
import NavlogAnalytics
import NavlogStore

/// `navlog query sql`: SQL over the derived tables, in an in-memory SQLite database.
struct QuerySQLCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql",
        abstract: "Run one SQL statement (SQLite) over the derived tables: events, screen_visits, transitions, sessions, anomalies, exits.",
        discussion: """
            The log is replayed once into an in-memory SQLite database holding the tables the \
            query reads (events only when the query reads it: it has a row per event). The \
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
        do {
            database = try SQLAnalyticsDatabase()
            if !plan.tables.isEmpty {
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
    }
}
