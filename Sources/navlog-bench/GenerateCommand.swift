import ArgumentParser
import Foundation
import NavlogWorkload

/// `navlog-bench generate N [SEED]`: N workload events as JSON Lines on standard output, the
/// input of most benchmarks and of the engine and intake tests.
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write N workload events as JSON Lines to standard output.",
        discussion: """
            By default of production's shape (../shared/workload.md: 560 live sessions, ~480 \
            events each, ~8 s between actions, recorded in a mix of styles: 40% full, 25% \
            did-only, 20% will and did, 15% calls only). The same N and SEED give the same lines.
            """
    )

    @Argument(help: ArgumentHelp("Events to write.", valueName: "n"))
    var count: Int

    @Argument(help: ArgumentHelp("The seed of every choice.", valueName: "seed"))
    var seed: UInt64 = 42

    @Option(help: ArgumentHelp("Sessions live at once.", valueName: "n"))
    var live: Int?

    @Option(help: ArgumentHelp("Mean events per session.", valueName: "n"))
    var meanEvents: Int?

    @Option(help: ArgumentHelp("Mean seconds between a user's actions.", valueName: "s"))
    var thinkSeconds: Double?

    @Flag(help: "The older workload: 200 live sessions of ~400 events, 7 s between actions, all recorded in full.")
    var small = false

    @Flag(help: "Every session recorded in full.")
    var full = false

    func validate() throws {
        guard count >= 0 else { throw ValidationError("N, the number of events, cannot be negative (got \(count)).") }
        if let live, live < 1 { throw ValidationError("--live must be at least 1 session (got \(live)).") }
        if let meanEvents, meanEvents < 1 { throw ValidationError("--mean-events must be at least 1 (got \(meanEvents)).") }
        if let thinkSeconds, !(0...1e9).contains(thinkSeconds) {
            throw ValidationError("--think-seconds must be a number of seconds from 0 to 1e9 (got \(thinkSeconds)).")
        }
    }

    func run() {
        var configuration = small ? WorkloadConfiguration(seed: seed) : .production(seed: seed)
        if let live { configuration.concurrentSessions = live }
        if let meanEvents { configuration.meanEventsPerSession = meanEvents }
        if let thinkSeconds { configuration.meanThinkTime = Int64(thinkSeconds * 1_000_000) }
        if full { configuration.recordingMix = [RecordingShare(.full, 1)] }
        var generator = WorkloadGenerator(configuration)
        FileHandle.standardOutput.write(Data(generator.ndjson(events: count)))
    }
}
