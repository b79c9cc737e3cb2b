import ArgumentParser

/// `navlog-bench`: navlog's benchmarks and load tools (tools/bench runs them and prints the
/// tables). Without a subcommand it runs the codec benchmark (``CodecBenchmarkCommand``), so
/// `navlog-bench --events N` is `navlog-bench codec --events N`.
@main
struct NavlogBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "navlog-bench",
        abstract: "navlog's benchmarks and load tools (tools/bench runs them and prints the tables).",
        discussion: """
            codec (the default): the codec and the log against zstd's CLI and Foundation's JSON \
            parser, one table. replay: the replay engine, checkpoints and seeks, one table; \
            `navlog-bench --only replay …` runs it too. load: drives navlogd (or rsyslog) and \
            prints one JSON line. chaos-load: misbehaving connections while good clients are timed \
            (tools/chaos load). generate: workload events as JSON Lines on standard output.
            """,
        subcommands: [CodecBenchmarkCommand.self, ReplayBenchmarkCommand.self, LoadCommand.self, ChaosLoadCommand.self, GenerateCommand.self],
        defaultSubcommand: CodecBenchmarkCommand.self
    )

    /// Parses the command line after ``replayAlias(_:)`` has turned `--only replay` into the
    /// `replay` subcommand.
    static func main() {
        main(replayAlias(Array(CommandLine.arguments.dropFirst())))
    }

    /// `arguments` with `[codec] … --only replay …` rewritten as `replay …`: the replay
    /// benchmark was once a phase of the codec benchmark's `--only`, and tools/bench/replay and
    /// docs/BENCHMARKS.md still run it that way. Other command lines are returned unchanged.
    static func replayAlias(_ arguments: [String]) -> [String] {
        guard let first = arguments.first, first == "codec" || first.hasPrefix("-") else { return arguments }
        var rest = arguments
        if let at = rest.firstIndex(of: "--only=replay") {
            rest.remove(at: at)
        } else if let at = rest.indices.first(where: { rest[$0] == "--only" && $0 + 1 < rest.count && rest[$0 + 1] == "replay" }) {
            rest.removeSubrange(at...(at + 1))
        } else {
            return arguments
        }
        if rest.first == "codec" { rest.removeFirst() }
        return ["replay"] + rest
    }
}
