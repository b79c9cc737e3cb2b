import ArgumentParser
import NavlogEvents
import NavlogReplay
import NavlogReplayStore
import NavlogStore

/// `navlog index`: builds or refreshes the replay checkpoints, once or following the log.
struct IndexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Build or bring up to date the replay checkpoints of a data directory.",
        discussion: """
            navlog replay, sessions, timeline, anomalies, query and export do this themselves; \
            run it ahead so that they answer at once. With --follow it keeps running and indexes \
            what navlogd appends within a second (systemd/navlog-index.service runs it beside \
            navlogd), so the first query after ingest is as fast as the next. Checkpoints are \
            derived from the log: deleting them is safe, they are rebuilt.
            """
    )

    @OptionGroup var data: DataDirectoryOptions
    @OptionGroup var indexOptions: ReplayIndexOptions

    @Flag(help: "Keep running: index new events as they are stored, until SIGTERM or SIGINT.")
    var follow = false

    @Option(
        help: ArgumentHelp(
            "With --follow: seconds between two looks at the log while it keeps up; while events pour in (10,000 or more in a look) it looks again as soon as the last look took, at least 0.1 s later.",
            valueName: "seconds"))
    var interval = 1.0

    @Option(
        help: ArgumentHelp(
            "Cores the build uses, each replaying the sessions of its share (1 to 64; default: the processors online, 1, 2 or 4). 1 leaves the other cores to navlogd.",
            valueName: "count"))
    var workers: Int?

    func validate() throws {
        if let workers, !(1...64).contains(workers) {
            throw ValidationError("--workers must be between 1 and 64 (got \(workers)); 2 or 4 on machines with that many cores.")
        }
    }

    func run() async throws {
        if follow {
            try await runFollowing()
            return
        }
        let clock = ContinuousClock()
        let started = clock.now
        let index = try openReplayIndex(command: "index", data: data, options: indexOptions, refresh: false)
        if let workers { index.workers = workers }
        guard let directory = index.directory else {
            printError("navlog index: found no writable place for the replay index. Give one with --index-dir DIR.")
            throw ExitCode.failure
        }
        do {
            try index.refresh()
            noteRebuiltIndex(command: "index", index)
        } catch {
            printError("navlog index: \(error)")
            throw ExitCode.failure
        }
        let report = index.lastRefresh
        let elapsed = clock.now - started
        let logBytes = index.log.segments.reduce(0) { $0 + ($1.blocks.last.map { $0.offset + $0.size } ?? 0) }
        let size = index.sizeOnDisk
        let share = logBytes > 0 ? Double(size) * 100 / Double(logBytes) : 0
        let rederived = index.rederivedFromHeldEvents + index.rederivedByReading
        // Sessions replayed again (E4, E7), and how many took a second read of the log: what
        // an operator looks at when a build is slower than its events explain.
        let again =
            rederived == 0
            ? ""
            : "; sessions replayed again from their first event \(rederived) time(s), in seq order or knowing a gesture cancelled (E4, E7), \(index.rederivedByReading) of them by reading the log again"
        printOutput(
            "replay index in \(directory): \(report.filesWritten) file(s) written, \(report.eventsReplayed) events replayed, \(report.filesRemoved) stale file(s) removed in \(elapsed); \(size) bytes (\(Int(share.rounded()))% of the log's \(logBytes) bytes)\(again)\n"
        )
        if reportDamage(command: "index", index.log, index: index) { throw ExitCode.failure }
    }
}

/// Listing every session needs the index's per-session states.
func requireIndexDirectory(_ index: ReplayIndex, command: String) throws {
    guard index.directory == nil else { return }
    printError("navlog \(command): found no writable place for the replay index, which this command reads. Give one with --index-dir DIR.")
    throw ExitCode.failure
}
