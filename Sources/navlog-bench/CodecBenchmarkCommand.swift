import ArgumentParser

/// `navlog-bench [codec]`: the codec benchmark (``CodecBenchmark``), the default subcommand, so
/// that `tools/bench/run`'s `navlog-bench --events N --size-events M` runs it.
struct CodecBenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec",
        abstract: "The codec and the log against zstd's CLI and Foundation's JSON parser, one table.",
        discussion: """
            Generates N production-shaped events (seed 42), then measures the validating parse \
            (against Foundation's JSONSerialization), the offline ingest (against zstd -3 -T1), \
            the full-scan decode and cat (against zstd -d) and the bytes per event on disk \
            (against zstd -3 and zstd -19 --long of the first --size-events lines). Needs the \
            zstd command. `--only replay` runs the replay benchmark instead (navlog-bench replay).
            """
    )

    @Option(help: ArgumentHelp("Events to generate.", valueName: "n"))
    var events = 2_000_000

    @Option(help: ArgumentHelp("Events of the bytes-per-event comparison (at most --events).", valueName: "n"))
    var sizeEvents = 500_000

    @Option(help: ArgumentHelp("Run only this phase (the ingest always runs): parse, scan or size; --only replay runs the replay benchmark instead.", valueName: "phase"))
    var only: CodecBenchmark.Phase?

    @Option(help: ArgumentHelp("Time the full scan this many times; the figure is their mean.", valueName: "n"))
    var scanRepeats = 1

    @Option(help: ArgumentHelp("The work directory, emptied first (default: a fresh one in the temporary directory).", valueName: "dir"))
    var work: String?

    @Flag(help: "Keep the work directory afterwards.")
    var keep = false

    @OptionGroup var log: LogWriteOptions

    func validate() throws {
        guard events > 0 else { throw ValidationError("--events must be a positive number of events (got \(events)).") }
        guard sizeEvents > 0 else { throw ValidationError("--size-events must be a positive number of events (got \(sizeEvents)).") }
        guard scanRepeats > 0 else { throw ValidationError("--scan-repeats must be at least 1 (got \(scanRepeats)).") }
        if work?.isEmpty == true { throw ValidationError("--work needs a directory.") }
    }

    func run() {
        var benchmark = CodecBenchmark()
        benchmark.events = events
        benchmark.sizeEvents = sizeEvents
        benchmark.only = only
        benchmark.scanRepeats = scanRepeats
        if let work { benchmark.work = work }
        benchmark.keep = keep
        benchmark.options = log.logOptions
        benchmark.run()
    }
}

extension CodecBenchmark.Phase: ExpressibleByArgument {}
