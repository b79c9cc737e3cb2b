import ArgumentParser
import NavlogEvents
import NavlogStore

/// `navlog cat`: prints stored events as JSON Lines.
struct CatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cat",
        abstract: "Print stored events as JSON Lines, oldest first.",
        discussion: """
            Each line is the event as received (with ts as µs) followed by the trusted fields \
            _lsn, _recv, _uid, _gid and _pid. Times for --since/--until: an RFC 3339 date-time \
            (2025-11-21T10:00:00Z), µs since the epoch, now, or an offset such as -15m, -2h, -7d. \
            Damaged blocks are skipped and reported on standard error (exit status 1). The output \
            can be ingested again (trusted fields are ignored on input); lines grow by the trusted \
            fields, so give navlog ingest a larger --max-line-bytes for lines near the limit.
            """
    )

    @OptionGroup var data: DataDirectoryOptions

    @Option(help: "Only events of this session.")
    var session: String?

    @Option(help: ArgumentHelp("Only events at or after this time (device time ts).", valueName: "time"))
    var since: TimeArgument?

    @Option(help: ArgumentHelp("Only events at or before this time (device time ts).", valueName: "time"))
    var until: TimeArgument?

    @Option(name: .customLong("type"), parsing: .singleValue, help: ArgumentHelp("Only events of this type, e.g. nav.push (repeat or separate with commas).", valueName: "type"))
    var types: [String] = []

    func run() throws {
        let typeSet = try parseEventTypes(types)
        let reader = try data.openReader(command: "cat")
        var output = OutputBuffer()
        var malformed = 0
        let query = LogQuery(session: session, since: since?.microseconds, until: until?.microseconds, types: typeSet)
        do {
            try reader.scan(query) { block, index in
                do {
                    try block.appendJSONLine(index, to: &output.bytes)
                } catch {
                    malformed += 1
                }
                output.flushIfNeeded()
                return true
            }
        } catch let error as StoreError {
            output.flush()
            printError("navlog cat: \(error.message)")
            throw ExitCode.failure
        }
        output.flush()
        for damage in reader.damage { printError("navlog cat: skipped damaged data: \(damage). Run navlog verify for a full check.") }
        if malformed > 0 { printError("navlog cat: skipped \(malformed) events whose stored bodies are malformed. Run navlog verify.") }
        if !reader.damage.isEmpty || malformed > 0 { throw ExitCode.failure }
    }
}
