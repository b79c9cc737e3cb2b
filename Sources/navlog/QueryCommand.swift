import ArgumentParser
import NavlogAnalytics
import NavlogEvents
import NavlogReplayStore
import NavlogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `navlog query`: how people move through the app.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Reports on how people move through the app: screens, transitions, paths, funnels, exits, anomalies, sessions, SQL.",
        discussion: """
            Screens and dwell come from the replayer's focused screen (F1) and foreground time \
            (F4), not from appearance events. Every report replays the sessions it covers once. \
            Times for --since/--until: RFC 3339, µs since the epoch, now, or -15m/-2h/-7d.
            """,
        subcommands: [
            QueryScreensCommand.self, QueryTransitionsCommand.self, QueryPathsCommand.self, QueryFunnelCommand.self, QueryExitsCommand.self,
            QueryAnomaliesCommand.self, QuerySessionsCommand.self, QuerySQLCommand.self,
        ]
    )
}

/// Which sessions and times analytics covers (reports, SQL, exports).
struct AnalyticsFilterOptions: ParsableArguments {
    @OptionGroup var data: DataDirectoryOptions

    @Option(help: ArgumentHelp("Only what happened at or after this time.", valueName: "time"))
    var since: TimeArgument?

    @Option(help: ArgumentHelp("Only what happened at or before this time.", valueName: "time"))
    var until: TimeArgument?

    @Option(help: "Only sessions of this app.")
    var app: String?

    @Option(help: "Only sessions of this app version.")
    var version: String?

    @Option(help: "Only sessions on this idiom (phone, pad, mac, tv, vision).")
    var idiom: String?

    @Option(help: "Only this session.")
    var session: String?

    var filter: AnalyticsFilter {
        AnalyticsFilter(since: since?.microseconds, until: until?.microseconds, app: app, version: version, idiom: idiom, session: session)
    }
}

/// Options every report takes.
struct QueryOptions: ParsableArguments {
    @OptionGroup var scope: AnalyticsFilterOptions

    @Option(help: "Output format: table, json or csv.")
    var format: TableFormat = .table

    var data: DataDirectoryOptions { scope.data }
    var filter: AnalyticsFilter { scope.filter }

    /// Scans the log into `sink`, with progress on standard error when it is a terminal.
    func run<Sink: DerivedTableSink>(_ command: String, into sink: inout Sink) throws {
        let reader = try data.openReader(command: "query \(command)")
        // The replay index's focus journals answer without replaying the log (the first query
        // builds the index); without a usable index, replay the log.
        let total = reader.eventCount
        let showProgress = isatty(STDERR_FILENO) == 1 && total > 1_000_000
        func progress(_ verb: String) -> (Int) -> Void {
            { done in
                guard showProgress else { return }
                let line = "\rnavlog query \(command): \(verb) \(done * 100 / max(total, 1))% of \(total) events"
                _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            }
        }
        func clearProgress() {
            if showProgress { _ = "\r\u{1B}[K".withCString { write(STDERR_FILENO, $0, strlen($0)) } }
        }
        do {
            var index: ReplayIndex?
            let answered = try scanFocusJournals(
                reader, filter: filter, into: &sink, command: "query \(command)", indexUsed: &index, progress: progress("indexing"), beforeNote: clearProgress)
            clearProgress()
            if answered {
                if reportDamage(command: "query \(command)", reader, index: index) { throw ExitCode.failure }
                return
            }
        } catch let error as StoreError {
            printError("navlog query \(command): \(error.message)")
            throw ExitCode.failure
        }
        var scanner = DerivedTableScanner(reader: reader, filter: filter)
        do {
            try scanner.scan(into: &sink, progress: progress("replaying"))
        } catch let error as StoreError {
            printError("navlog query \(command): \(error.message)")
            throw ExitCode.failure
        }
        if showProgress { _ = "\r\u{1B}[K".withCString { write(STDERR_FILENO, $0, strlen($0)) } }
        if reportDamage(command: "query \(command)", reader) { throw ExitCode.failure }
    }

    /// Prints a table in the chosen format; on a terminal, lines wider than it are cut with `…`.
    func print(_ table: TableWriter) {
        var text = table.render(format)
        if format == .table, isatty(STDOUT_FILENO) == 1 {
            var size = winsize()
            if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 {
                let width = Int(size.ws_col)
                text = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                    line.count > width ? String(line.prefix(width - 1)) + "…" : String(line)
                }.joined(separator: "\n")
            }
        }
        printOutput(text)
    }
}

func seconds(_ micros: Int64) -> String {
    let tenths = (micros + 50_000) / 100_000
    return "\(tenths / 10).\(tenths % 10)"
}

struct QueryScreensCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screens", abstract: "Per screen: views, unique sessions, foreground dwell total, p50 and p90 (F4).")

    @OptionGroup var options: QueryOptions

    func run() throws {
        var report = ScreensReport()
        try options.run("screens", into: &report)
        var table = TableWriter(columns: ["screen", "storyboardID", "views", "sessions", "dwellTotal", "dwellP50", "dwellP90"])
        table.numeric = ["views", "sessions", "dwellTotal", "dwellP50", "dwellP90"]
        let human = options.format == .table
        for row in report.rows {
            func time(_ value: Int64) -> String { human ? seconds(value) + "s" : "\(value)" }
            table.rows.append([
                row.screen, row.storyboardID, "\(row.views)", "\(row.sessions)", time(row.dwellTotal), time(row.dwellP50), time(row.dwellP90),
            ])
        }
        options.print(table)
    }
}

struct QueryTransitionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transitions",
        abstract: "From-screen → to-screen counts, by how: push, pop, present, dismiss, tab, show, segue:IDENTIFIER, unwind, …")

    @OptionGroup var options: QueryOptions

    func run() throws {
        var report = TransitionsReport()
        try options.run("transitions", into: &report)
        var table = TableWriter(columns: ["from", "to", "how", "count"])
        table.numeric = ["count"]
        for row in report.rows { table.rows.append([row.from, row.to, row.how, "\(row.count)"]) }
        options.print(table)
    }
}

struct QueryPathsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "paths", abstract: "The most frequent sequences of consecutive screens within sessions.")

    @OptionGroup var options: QueryOptions

    @Option(help: "Screens per path.")
    var length = 3

    @Option(help: ArgumentHelp("Only paths that start at this screen.", valueName: "screen"))
    var from: String?

    @Option(help: ArgumentHelp("Only paths that end at this screen.", valueName: "screen"))
    var to: String?

    @Option(help: "How many paths.")
    var top = 20

    func validate() throws {
        if length < 1 { throw ValidationError("--length must be at least 1.") }
        if from != nil && to != nil { throw ValidationError("Give --from or --to, not both.") }
    }

    func run() throws {
        var report = PathsReport(length: length, from: from, to: to)
        try options.run("paths", into: &report)
        var table = TableWriter(columns: ["path", "count", "sessions"])
        table.numeric = ["count", "sessions"]
        for row in report.rows(top: top) { table.rows.append([row.path.joined(separator: " → "), "\(row.count)", "\(row.sessions)"]) }
        options.print(table)
    }
}

struct QueryFunnelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "funnel",
        abstract: "An ordered funnel of screens: sessions reaching each step, conversion, median time to convert.",
        discussion: "Steps are screen class names, in order. With --within, every step must come within that time of the first (e.g. 10m, 90s, 2h).")

    @OptionGroup var options: QueryOptions

    @Argument(help: ArgumentHelp("The screens of the funnel, in order.", valueName: "screen"))
    var steps: [String]

    @Option(help: ArgumentHelp("The time allowed from the first step to the last (90s, 10m, 2h, 1d).", valueName: "duration"))
    var within: String?

    func validate() throws {
        if steps.count < 2 { throw ValidationError("A funnel needs at least two screens.") }
        if let within, DurationText.microseconds(within) == nil { throw ValidationError("--within takes a duration such as 90s, 10m, 2h or 1d, not \(within).") }
    }

    func run() throws {
        var report = FunnelReport(steps: steps, within: within.flatMap(DurationText.microseconds))
        try options.run("funnel", into: &report)
        var table = TableWriter(columns: ["step", "screen", "sessions", "conversion", "overall", "medianTime"])
        table.numeric = ["step", "sessions", "conversion", "overall", "medianTime"]
        let human = options.format == .table
        for row in report.rows {
            func share(_ value: Double) -> String { human ? "\(Int((value * 1000).rounded()) / 10).\(Int((value * 1000).rounded()) % 10)%" : "\(value)" }
            table.rows.append([
                "\(row.step)", row.screen, "\(row.sessions)", share(row.conversion), share(row.overall), human ? seconds(row.medianTime) + "s" : "\(row.medianTime)",
            ])
        }
        options.print(table)
    }
}

struct QueryExitsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exits", abstract: "The screen focused when the app went to the background or the session ended.")

    @OptionGroup var options: QueryOptions

    func run() throws {
        var report = ExitsReport()
        try options.run("exits", into: &report)
        var table = TableWriter(columns: ["reason", "screen", "count", "share"])
        table.numeric = ["count", "share"]
        for row in report.rows {
            let share = options.format == .table ? "\(Int((row.share * 1000).rounded()) / 10).\(Int((row.share * 1000).rounded()) % 10)%" : "\(row.share)"
            table.rows.append([row.reason, row.screen, "\(row.count)", share])
        }
        options.print(table)
    }
}

struct QueryAnomaliesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "anomalies", abstract: "Anomaly counts by code and app version, first and last seen.")

    @OptionGroup var options: QueryOptions

    func run() throws {
        var report = AnomalyCountsReport()
        try options.run("anomalies", into: &report)
        var table = TableWriter(columns: ["code", "name", "fatal", "app", "version", "count", "sessions", "first", "last"])
        table.numeric = ["count", "sessions"]
        for row in report.rows {
            table.rows.append([
                row.code, row.name, row.fatal ? "FATAL" : nil, row.app, row.version, "\(row.count)", "\(row.sessions)",
                RFC3339.format(microseconds: row.first), RFC3339.format(microseconds: row.last),
            ])
        }
        options.print(table)
    }
}

struct QuerySessionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "Session length, screens per session, depth of navigation stacks and presentation chains: mean, p50, p90, max.")

    @OptionGroup var options: QueryOptions

    func run() throws {
        var report = SessionsReport()
        try options.run("sessions", into: &report)
        var table = TableWriter(columns: ["measure", "sessions", "mean", "p50", "p90", "max"])
        table.numeric = ["sessions", "mean", "p50", "p90", "max"]
        for row in report.rows {
            table.rows.append([row.measure, "\(row.sessions)", "\((row.mean * 10).rounded() / 10)", "\(row.p50)", "\(row.p90)", "\(row.max)"])
        }
        options.print(table)
    }
}
