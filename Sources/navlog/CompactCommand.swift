import ArgumentParser
import NavlogStore

/// `navlog compact`: log compaction now, on a log no daemon is writing.
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Write sealed segments again with full blocks at the sealed zstd level (what navlogd does in the background).",
        discussion: """
            navlogd does this on its own every compactionIntervalSeconds: a sealed segment with \
            small blocks (durable clients make a block per fsync) or written below the sealed \
            level is written again beside the log, checked, and put in place with one rename, so \
            an interruption at any point loses nothing. Run this command on a log navlogd is not \
            writing (after `navlog ingest`, or after changing the level): it takes the log's \
            lock and refuses while another writer holds it. The replay index of a segment that \
            was written again is rebuilt by the next `navlog index` (or the index service).
            """
    )

    @OptionGroup var data: DataDirectoryOptions

    @Option(help: ArgumentHelp("zstd level to write sealed segments at, 1 to 22 (navlogd's sealedCompressionLevel).", valueName: "level"))
    var level: Int32 = 19

    func validate() throws {
        guard (1...22).contains(level) else { throw ValidationError("--level \(level) is not a zstd level; use 1 to 22 (19 is the default).") }
    }

    func run() throws {
        var options = LogOptions()
        options.sealedCompressionLevel = level
        let log: EventLog
        let reader: LogReader
        do {
            log = try EventLog(directory: data.dataDirectory, options: options)
            reader = try LogReader(directory: data.dataDirectory)
        } catch {
            printError("navlog compact: \(error.message)")
            throw ExitCode.failure
        }
        if !log.recovery.isClean { reportRecovery(log.recovery) }
        let candidates = SegmentCompaction.candidates(reader, options: options)
        var totals = (segments: 0, before: 0, after: 0, events: 0)
        for name in candidates {
            do {
                guard let copy = try SegmentCompaction.writeCopy(of: name, reader: reader, options: options) else {
                    printError("navlog compact: left \(name) as it is: it has damaged blocks or a gap in its LSNs (`navlog verify` says where).")
                    continue
                }
                guard try log.install(copy) else {
                    printError("navlog compact: left \(name) as it is: it changed while it was copied.")
                    continue
                }
                print(
                    "\(name): \(copy.events) events, \(copy.originalBlocks) blocks, \(copy.originalBytes) bytes → \(copy.compactedBlocks) blocks, \(copy.compactedBytes) bytes"
                )
                totals.segments += 1
                totals.before += copy.originalBytes
                totals.after += copy.compactedBytes
                totals.events += copy.events
            } catch {
                printError("navlog compact: could not compact \(name) (the original stays as it was): \(error.message)")
                try? log.close()
                throw ExitCode.failure
            }
        }
        do { try log.close() } catch {
            printError("navlog compact: \(error.message)")
            throw ExitCode.failure
        }
        if totals.segments == 0 {
            print("Nothing to compact: every sealed segment has full blocks written at level \(level) or above.")
        } else {
            let permille = (1000 * totals.after + totals.before / 2) / max(1, totals.before)
            print(
                "Compacted \(totals.segments) of \(candidates.count) segments: \(totals.events) events, \(totals.before) → \(totals.after) bytes (\(permille / 10).\(permille % 10)% of before)."
            )
        }
    }
}
