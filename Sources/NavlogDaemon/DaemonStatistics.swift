import CoreMetrics
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
        /// Sequence numbers given up as lost: still missing when their session ended or after
        /// it stored nothing for `lossGraceSeconds` (a counter).
        public var lost = 0
        /// Sequence numbers missing now: holes in sessions' numbers whose events may still
        /// arrive (late, reordered, over another connection).
        public var missing = 0
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
        /// Since when (RFC 3339, UTC) the log cannot be written; `nil` while it can.
        public var storeErrorSince: String?
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
        /// Bytes of events waiting in the writer's queue (see `writerQueueBytes` in the
        /// configuration: at that size, busy connections are paused).
        public var writerQueueBytes = 0
        /// Times navlogd stopped reading a connection because the writer was behind (its queue
        /// full and the connection's pending batches at their limit): backpressure at work.
        public var readPausesWriterBehind = 0
        /// Times navlogd stopped reading a connection because its client left our replies
        /// unread (the connection's write buffer over its high mark).
        public var readPausesUnreadReplies = 0
        /// Segments in the data directory.
        public var segments = 0
        /// Bytes of segments and indexes in the data directory.
        public var bytesOnDisk = 0
        /// Sealed segments written again with full blocks since start (``CompactionService``).
        public var segmentsCompacted = 0
        /// Acknowledgement latency inside navlogd, in ms: from a batch being handed to the
        /// writer to its ack being ready (after the fsync for `durable`); p50 and p99 of the
        /// last 1024 acknowledged batches. What a client measures adds its socket's queues.
        public var ackP50Milliseconds = 0.0
        /// See ``ackP50Milliseconds``.
        public var ackP99Milliseconds = 0.0
        var fsyncSamples = LatencySamples()
        var ackSamples = LatencySamples()

        enum CodingKeys: String, CodingKey {
            case connections, connectionsTotal, refused, overLimit, accepted, rejected, duplicates, lost, missing, rateLimited
            case reportsDropped, bytesIn, storeFailures, storeRefusedEvents, storeError, storeErrorSince, sessionsTracked, fsyncP50Milliseconds, fsyncP99Milliseconds, fsyncs
            case lagEvents, writerQueueBytes, readPausesWriterBehind, readPausesUnreadReplies, segments, bytesOnDisk, segmentsCompacted, ackP50Milliseconds
            case ackP99Milliseconds
        }

        /// Records one fsync's duration; percentiles are computed when a snapshot is taken, not
        /// here (this runs for every group commit).
        mutating func recordFsync(seconds: Double) {
            fsyncs += 1
            fsyncSamples.record(seconds * 1000)
            DaemonMetrics.fsyncDuration.recordSeconds(seconds)
        }

        /// Fills the percentiles from the samples.
        mutating func computePercentiles() {
            (fsyncP50Milliseconds, fsyncP99Milliseconds) = fsyncSamples.percentiles()
            (ackP50Milliseconds, ackP99Milliseconds) = ackSamples.percentiles()
        }
    }

    /// The last 1024 values of a latency, for percentiles.
    struct LatencySamples: Sendable, Equatable {
        private var values: [Double] = []
        private var recorded = 0

        mutating func record(_ milliseconds: Double) {
            if values.count < 1024 {
                values.append(milliseconds)
            } else {
                values[recorded % 1024] = milliseconds
            }
            recorded += 1
        }

        /// p50 and p99, or zeros before the first value.
        func percentiles() -> (Double, Double) {
            guard !values.isEmpty else { return (0, 0) }
            let sorted = values.sorted()
            return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
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
