import Synchronization

/// The daemon's counters, shared by every connection and the writer (a `Mutex` guards them).
public final class DaemonStatistics: Sendable {
    /// One consistent reading of every counter.
    public struct Snapshot: Sendable, Codable, Equatable {
        /// Open connections now.
        public var connections = 0
        /// Connections accepted since start.
        public var connectionsTotal = 0
        /// Connections refused by the access rules.
        public var refused = 0
        /// Connections refused because the connection limit was reached.
        public var overLimit = 0
        /// Events stored.
        public var accepted = 0
        /// Lines rejected, by reason (`EventRejection.Code` names).
        public var rejected: [String: Int] = [:]
        /// Events dropped as resent duplicates.
        public var duplicates = 0
        /// Sequence numbers skipped by clients (events lost before reaching the daemon).
        public var lost = 0
        /// Events suppressed by per-connection rate limits.
        public var rateLimited = 0
        /// Rejection reports not sent because the client was not reading.
        public var reportsDropped = 0
        /// Bytes received.
        public var bytesIn = 0
        /// Batches whose storing failed (disk full, I/O error).
        public var storeFailures = 0
        /// Events not stored because the log could not be written (their senders were told
        /// and resend them).
        public var storeRefusedEvents = 0
        /// Why the log cannot be written right now; `nil` while it can.
        public var storeError: String?
        /// Sessions whose sequence numbers are tracked.
        public var sessionsTracked = 0
        /// fsync latencies in ms: p50 and p99 of the last 1024.
        public var fsyncP50Milliseconds = 0.0
        /// See ``fsyncP50Milliseconds``.
        public var fsyncP99Milliseconds = 0.0
        /// fsyncs done.
        public var fsyncs = 0
        /// Lag: events received but not yet written to the log (queued for the writer, or in
        /// the block being filled); readers such as `navlog tail` see them once written.
        public var lagEvents = 0
        /// Segments in the data directory.
        public var segments = 0
        /// Bytes of segments and indexes in the data directory.
        public var bytesOnDisk = 0
        var fsyncSamples: [Double] = []

        enum CodingKeys: String, CodingKey {
            case connections, connectionsTotal, refused, overLimit, accepted, rejected, duplicates, lost, rateLimited
            case reportsDropped, bytesIn, storeFailures, storeRefusedEvents, storeError, sessionsTracked, fsyncP50Milliseconds, fsyncP99Milliseconds, fsyncs
            case lagEvents, segments, bytesOnDisk
        }

        /// Records one fsync's duration; percentiles are computed when a snapshot is taken, not
        /// here (this runs for every group commit).
        mutating func recordFsync(seconds: Double) {
            fsyncs += 1
            if fsyncSamples.count < 1024 {
                fsyncSamples.append(seconds * 1000)
            } else {
                fsyncSamples[fsyncs % 1024] = seconds * 1000
            }
        }

        /// Fills the fsync percentiles from the samples.
        mutating func computePercentiles() {
            guard !fsyncSamples.isEmpty else { return }
            let sorted = fsyncSamples.sorted()
            fsyncP50Milliseconds = sorted[sorted.count / 2]
            fsyncP99Milliseconds = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        }
    }

    private let state = Mutex(Snapshot())

    /// Creates zeroed counters.
    public init() {}

    /// Changes counters under the lock.
    func update(_ body: (inout Snapshot) -> Void) {
        state.withLock { body(&$0) }
    }

    /// A copy of every counter.
    public func snapshot() -> Snapshot {
        var snapshot = state.withLock { $0 }
        snapshot.computePercentiles()
        return snapshot
    }
}
