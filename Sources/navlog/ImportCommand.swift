import ArgumentParser
import NavlogEvents
import NavlogImport
import NavlogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `navlog import`: other tools' navigation recordings (Sentry breadcrumbs, Datadog RUM views,
/// Firebase's BigQuery export) converted into navlog events and stored like `navlog ingest`'s.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import navigation recorded by Sentry, Datadog RUM or Firebase Analytics.",
        discussion: """
            Converts each source's records into navlog events (docs/IMPORT.md says how each field \
            maps and what navlog cannot know from it) and stores them with the same validation as \
            navlog ingest. Files are streamed: JSON Lines, one JSON value per file, or values one \
            after another; - reads standard input. Each session is tagged with a mark named \
            "import" saying its source, and its id says it too (sentry:…, datadog:…, firebase:…). \
            Session ids and seq are derived from the records, so importing the same files again \
            stores nothing new (each event already stored is counted as a duplicate); give all the \
            files of one session in one run. A record that cannot be imported is reported on \
            standard error with its file, line, JSON path and why, and the rest still imports. \
            Exits 1 when anything was skipped.

            Sources:
              sentry    Sentry event JSON (the events API's or the SDK's): ui.lifecycle and app.lifecycle breadcrumbs
              datadog   Datadog RUM events (JSON Lines) or pages of the RUM events search API: view events
              firebase  Firebase Analytics BigQuery export rows (bq extract, NEWLINE_DELIMITED_JSON): screen_view and app lifecycle rows
            """
    )

    @Option(name: .customLong("from"), help: ArgumentHelp("The tool that recorded the files: sentry, datadog or firebase.", valueName: "source"))
    var from: String

    @OptionGroup var data: DataDirectoryOptions

    @Option(help: ArgumentHelp("Skip (and report) records longer than this many bytes; no more than this is held of any record.", valueName: "bytes"))
    var maxRecordBytes = 32 << 20

    @Flag(help: "Do not list each skipped record, only the counts.")
    var quiet = false

    @Argument(help: ArgumentHelp("Files to import (- for standard input).", valueName: "file"))
    var files: [String]

    func validate() throws {
        guard ImportSource(rawValue: from) != nil else {
            throw ValidationError("--from \(from) is not a source navlog imports; use sentry, datadog or firebase.")
        }
        guard !files.isEmpty else { throw ValidationError("Name at least one file to import (or - for standard input).") }
        guard maxRecordBytes >= 1024, maxRecordBytes <= 1 << 30 else { throw ValidationError("--max-record-bytes must be between 1024 and 1073741824.") }
    }

    func run() throws {
        let source = ImportSource(rawValue: from)!
        let log = try openLog()
        // Dedupe by (session, seq) against what earlier imports of this source stored.
        let stored: [String: Set<UInt64>]
        do {
            stored = try Self.storedSequences(in: log.directory, prefix: source.rawValue + ":")
        } catch {
            printError("navlog import: reading the log to find what is already stored failed: \(error). Nothing was imported.")
            throw ExitCode.failure
        }
        var store = ImportedLineStore(log: log, stored: stored, peer: PeerCredentials(uid: getuid(), gid: getgid(), pid: getpid()))
        let firstLSN = log.nextLSN
        var importer = Importer(source: source, maximumRecordBytes: maxRecordBytes)
        try importFiles(into: &importer, store: &store)
        try importer.finish(into: &store)
        try store.finish()
        do {
            try log.close()
        } catch {
            printError("navlog import: \(error.message)")
            throw ExitCode.failure
        }
        try summarize(importer.statistics, of: source, store: store, firstLSN: firstLSN, nextLSN: log.nextLSN)
    }

    /// The data directory's log, its recovery reported if it was not closed cleanly.
    private func openLog() throws -> EventLog {
        try data.openLog(command: "import")
    }

    /// Converts the records of every file, read on a thread of its own (``ImportReadAhead``),
    /// storing the sessions complete after each chunk (so that memory does not hold them).
    /// - Throws: `ExitCode.failure` when a file cannot be opened or read, once what was
    ///   converted so far is stored: a run again stores nothing twice.
    private func importFiles(into importer: inout Importer, store: inout ImportedLineStore) throws {
        let readAhead = ImportReadAhead(files: files, maximumRecordBytes: maxRecordBytes)
        defer { readAhead.stop() }
        while let delivery = readAhead.next() {
            switch delivery {
            case .records(var records, let file, let endsFile):
                importer.convert(&records) { issue in
                    guard !quiet else { return }
                    printError("\(file): \(issue)")
                }
                readAhead.giveBack(records)
                // Sessions already complete (a Sentry event without a session tag) are stored now.
                if !endsFile { try importer.writeCompleted(into: &store) }
            case .failed(let message):
                printError(message)
                try store.closeEarly()
                throw ExitCode.failure
            }
        }
    }

    /// The summary line (standard output), then, when anything was skipped, what to do about it
    /// (standard error).
    /// - Parameters:
    ///   - firstLSN: the log's next LSN before this run stored anything, and `nextLSN` after:
    ///     the LSNs stored are named when events were stored.
    /// - Throws: `ExitCode.failure` when anything was skipped or rejected: the import is incomplete.
    private func summarize(_ statistics: ImportStatistics, of source: ImportSource, store: ImportedLineStore, firstLSN: UInt64, nextLSN: UInt64) throws {
        let storedEvents = statistics.events - store.duplicates - store.rejected
        let range = storedEvents > 0 ? " (LSNs \(firstLSN)–\(nextLSN - 1))" : ""
        print(
            "Imported \(source.rawValue) from \(files.count) file\(files.count == 1 ? "" : "s"): \(statistics.records) records read, \(statistics.sessions) sessions, "
                + "\(storedEvents) events stored in \(data.dataDirectory)\(range), \(store.duplicates) duplicates (already stored), \(statistics.skipped) skipped, "
                + "\(statistics.ignored) ignored (kinds navlog does not import), \(statistics.superseded) superseded or repeated, "
                + "\(statistics.notScreens) containers and system controllers left out."
        )
        if statistics.skipped > 0 {
            printError(
                "navlog import: \(statistics.skipped) records or parts of records were skipped (listed above\(quiet ? " without --quiet" : "")); the rest was imported. Fix or remove them and import again: what is stored already is not stored twice."
            )
        }
        if statistics.skipped > 0 || store.rejected > 0 { throw ExitCode.failure }
    }

    /// The `(session, seq)` pairs stored for sessions whose id starts with `prefix`.
    static func storedSequences(in directory: String, prefix: String) throws -> [String: Set<UInt64>] {
        let reader = try LogReader(directory: directory)
        let wanted = Array(prefix.utf8)
        var result: [String: Set<UInt64>] = [:]
        var everyEvent = LogQuery()
        everyEvent.readsBodies = false
        try reader.scan(everyEvent) { block, index in
            guard let sequence = block.sequence(index) else { return true }
            let session: String? = block.withSession(index) { bytes in
                guard bytes.count >= wanted.count, bytes.prefix(wanted.count).elementsEqual(wanted) else { return nil }
                return String(decoding: bytes, as: UTF8.self)
            }
            if let session { result[session, default: []].insert(sequence) }
            return true
        }
        return result
    }
}
