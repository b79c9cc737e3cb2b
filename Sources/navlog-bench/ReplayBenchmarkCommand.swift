import ArgumentParser
import NavlogStore

/// `navlog-bench replay` (also `navlog-bench --only replay`, see ``NavlogBench/replayAlias(_:)``):
/// the replay benchmark (``ReplayBenchmark``). Exits 1 when the benchmark fails.
struct ReplayBenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "The replay engine, checkpoints and seeks, one table.",
        discussion: """
            Builds a log of N generated events in <work>/data (or reuses the log already there), \
            then measures replaying all of it against a scan that reads one field of each body, \
            building the replay index against that replay, and P random seeks from the nearest \
            checkpoint against the same seeks from each session's start (the first 100 must give \
            byte-identical JSON). The index is left in <work>/data/replay for navlog replay. \
            `navlog-bench --only replay …` runs this too.
            """
    )

    @Option(help: ArgumentHelp("Events to generate when the work directory holds no log.", valueName: "n"))
    var events = 2_000_000

    @Option(help: ArgumentHelp("Random points to seek to.", valueName: "p"))
    var points = 1_000

    @Option(help: ArgumentHelp("The work directory; a log already in <dir>/data is reused (default: a fresh one in the temporary directory).", valueName: "dir"))
    var work: String?

    @Flag(help: "Keep the work directory afterwards (and the log this run made).")
    var keep = false

    @OptionGroup var log: LogWriteOptions

    @Option(help: ArgumentHelp("zstd level of grouped blocks' spines, 1 to 22 (default: --level); as compaction writes sealed segments.", valueName: "level"))
    var spineLevel: Int?

    func validate() throws {
        guard events > 0 else { throw ValidationError("--events must be a positive number of events (got \(events)).") }
        guard points > 0 else { throw ValidationError("--points must be a positive number of points (got \(points)).") }
        if work?.isEmpty == true { throw ValidationError("--work needs a directory.") }
        if let spineLevel, !(1...22).contains(spineLevel) { throw ValidationError("--spine-level takes a zstd level from 1 to 22 (got \(spineLevel)).") }
    }

    func run() throws {
        var options = ReplayBenchmark.Options()
        options.events = events
        options.points = points
        options.work = work
        options.keep = keep
        options.log = log.logOptions
        if let spineLevel { options.log.spineCompressionLevel = Int32(spineLevel) }
        do {
            try ReplayBenchmark.run(options)
        } catch {
            ReplayBenchmark.printError("navlog-bench: \(error)")
            throw ExitCode.failure
        }
    }
}
