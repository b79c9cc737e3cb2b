import CoreMetrics
import Foundation  // Thread: the syncer's dedicated OS thread
import Logging
import NIOConcurrencyHelpers
import NavlogStore

/// Makes written events durable on its own thread, so the writer never waits for fsync: every
/// sync point waiting is handled at once, one fsync per file (the newest point of a file
/// covers the older ones), then their durable acks go out.
final class Syncer: Sendable {
    private struct Shared {
        var items: [(SyncPoint, [(WriteRequest, WriteOutcome)])] = []
        var stopping = false
    }

    private let shared = NIOLockedValueBox(Shared())
    private let handshake = ThreadHandshake()
    private let statistics: DaemonStatistics
    private let logger: Logger
    private let fatal: @Sendable (String) -> Void

    init(statistics: DaemonStatistics, logger: Logger, fatal: @escaping @Sendable (String) -> Void) {
        self.statistics = statistics
        self.logger = logger
        self.fatal = fatal
    }

    func start() {
        Thread { [self] in self.run() }.start()
    }

    func submit(_ point: SyncPoint, _ waiting: [(WriteRequest, WriteOutcome)]) {
        shared.withLockedValue { $0.items.append((point, waiting)) }
        handshake.wake()
    }

    /// Syncs what is queued, then stops the thread and waits for it.
    func stop() {
        shared.withLockedValue { $0.stopping = true }
        handshake.wake()
        handshake.waitUntilFinished()
    }

    private func run() {
        while true {
            handshake.waitForWork()
            let (items, stopping) = shared.withLockedValue { shared in
                let taken = shared.items
                shared.items.removeAll(keepingCapacity: true)
                return (taken, shared.stopping)
            }
            if !items.isEmpty { sync(items) }
            if stopping && shared.withLockedValue({ $0.items.isEmpty }) {
                handshake.finish()
                return
            }
        }
    }

    private func sync(_ items: [(SyncPoint, [(WriteRequest, WriteOutcome)])]) {
        // The newest point of each file is synced; older ones of the same file are covered.
        var failures: [String: StoreError] = [:]
        let started = monotonicSeconds()
        for (index, item) in items.enumerated().reversed() {
            let point = item.0
            // Only a newer point that syncs the same file's data covers this one.
            let newerOfSameFile = items[(index + 1)...].contains { $0.0.fileName == point.fileName && $0.0.syncsData }
            if newerOfSameFile && !point.syncsDirectory {
                point.discard()
                continue
            }
            do throws(StoreError) {
                try point.sync()
            } catch {
                failures[point.fileName] = error
                logger.error("fsync failed: \(error.message)")
            }
        }
        let now = monotonicSeconds()
        statistics.update { stats in
            stats.recordFsync(seconds: now - started)
            for (point, waiting) in items {
                if failures[point.fileName] == nil {
                    for (request, _) in waiting {
                        stats.ackSamples.record((now - request.submittedAt) * 1000)
                        DaemonMetrics.ackLatency.recordSeconds(now - request.submittedAt)
                    }
                } else {
                    stats.storeFailures += waiting.count
                }
            }
        }
        for (point, waiting) in items {
            for (request, var outcome) in waiting {
                outcome.failure = failures[point.fileName] ?? outcome.failure
                request.completion(outcome)
            }
        }
        if let (file, failure) = failures.first {
            fatal("fsync of \(file) failed: \(failure.message)")
        }
    }
}
