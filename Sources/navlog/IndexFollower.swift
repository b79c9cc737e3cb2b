import ArgumentParser
import Logging
import NavlogReplayStore
import NavlogStore
import ServiceLifecycle
import UnixSignals

/// `navlog index --follow`: keeps the replay index up to date as navlogd appends, so that the
/// first query after ingest reads a ready index (no cold start). A `Service`: it stops on
/// SIGTERM or SIGINT between two refreshes, never in the middle of writing an index file
/// (files are written whole and renamed, so even a kill leaves no half file behind).
struct IndexFollower: Service {
    /// The data directory to follow.
    let dataDirectory: String
    /// Where the index is (nil: `<data-dir>/replay`).
    let indexDirectory: String?
    /// How long to wait between two looks at the log while it keeps up (sooner while it is
    /// behind: ``FollowCadence``).
    let interval: Duration
    /// Cores a build uses (``ReplayIndex/workers``).
    var workers = ReplayIndex.defaultWorkers
    /// Told one line per refresh that wrote something, and each damage met, once.
    let report: @Sendable (String) -> Void

    func run() async throws {
        try await cancelWhenGracefulShutdown { try await follow() }
    }

    /// Refreshes the index every ``interval`` (sooner while it is behind: ``FollowCadence``)
    /// until the task is cancelled.
    private func follow() async throws {
        // The reader and index are this task's own (neither is Sendable). The data directory
        // may not exist yet (started before navlogd's first start): wait for it, saying so once.
        var opened: LogReader?
        var said = false
        while opened == nil && !Task.isCancelled {
            do {
                opened = try LogReader(directory: dataDirectory)
            } catch {
                if !said { report("\(error.message) Waiting for it.") }
                said = true
                try? await Task.sleep(for: interval)
            }
        }
        guard let reader = opened else { return }
        let index = ReplayIndex(log: reader, directory: indexDirectory)
        index.workers = workers
        guard index.directory != nil else {
            throw FollowError(
                message: "found no writable place for the replay index in \(dataDirectory). Give one with --index-dir DIR, or run as a user who may write there.")
        }
        var damageSaid = Set<String>()
        let cadence = FollowCadence(interval: interval)
        while !Task.isCancelled {
            var wait = interval
            do {
                try reader.refresh()
                let clock = ContinuousClock()
                let started = clock.now
                try index.refresh()
                let refresh = index.lastRefresh
                wait = cadence.wait(afterIndexing: refresh.eventsReplayed, took: clock.now - started)
                if refresh.filesOfAnotherVersion > 0 {
                    report("the index was written by another navlog version; rebuilt \(refresh.filesOfAnotherVersion) file(s) for this one.")
                }
                if refresh.filesWritten > 0 || refresh.filesRemoved > 0 {
                    report(
                        "indexed \(refresh.eventsReplayed) new event(s) in \(clock.now - started): \(refresh.filesWritten) file(s) written, \(refresh.filesRemoved) removed."
                    )
                }
                for line in reader.damage.map(\.description) + index.recordedDamage() where !damageSaid.contains(line) {
                    damageSaid.insert(line)
                    report("skipped damaged data: \(line). Run navlog verify for a full check.")
                }
            } catch {
                // A moment of trouble (a segment deleted by retention while read, a full disk):
                // say it and try again at the next look.
                report("could not bring the index up to date: \(error). Trying again in \(interval).")
            }
            try? await Task.sleep(for: wait)
        }
    }

    /// Why following cannot start.
    struct FollowError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

extension IndexCommand {
    /// Runs an ``IndexFollower`` in a service group that stops it on SIGTERM or SIGINT.
    func runFollowing() async throws {
        guard interval > 0, interval <= 3600 else {
            printError("navlog index: --interval must be between 0 and 3600 seconds (got \(interval)).")
            throw ExitCode.failure
        }
        let logger = Logger(label: "navlog-index")
        let follower = IndexFollower(
            dataDirectory: data.dataDirectory, indexDirectory: indexOptions.indexDirectory, interval: .milliseconds(Int(interval * 1000)),
            workers: workers ?? ReplayIndex.defaultWorkers, report: { line in printError("navlog index: \(line)") })
        printError("navlog index: following \(data.dataDirectory); indexing new events every \(interval) s until stopped.")
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [.init(service: follower)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            printError("navlog index: \(error)")
            throw ExitCode.failure
        }
        printError("navlog index: stopped.")
    }
}
