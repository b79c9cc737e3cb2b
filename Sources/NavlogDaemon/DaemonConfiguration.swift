import Foundation  // JSONDecoder for the configuration file (read once at start, not a hot path)
public import NavlogStore

/// Every setting of navlogd. Defaults suit both a user running `navlogd` by hand and systemd.
///
/// The configuration file is JSON (`navlogd --config FILE`); every key is optional and
/// overrides the default; `navlogd --print-config` prints the effective configuration.
public struct DaemonConfiguration: Sendable, Codable, Equatable {
    /// The Unix socket apps connect to.
    public var socketPath: String
    /// The data directory of the log.
    public var dataDirectory: String
    /// The socket file's mode, as an octal string such as "0660".
    public var socketMode = "0660"
    /// If set, only these uids may send events.
    public var allowedUIDs: [UInt32]?
    /// If set, only these gids may send events (a peer passes if its uid, its gid or one of its
    /// supplementary groups is allowed).
    public var allowedGIDs: [UInt32]?
    /// These uids may relay events for others: a relay line (`{"relay":"KEY-ID"}`) from them
    /// sets the key id stored with the events that follow on the connection (the trusted
    /// `_key`), and their keyed events are exempt from the rate limit (the relay limits each key
    /// itself). Empty (the default) with ``relayGIDs`` empty: nobody may relay.
    public var relayUIDs: [UInt32] = []
    /// These gids may relay events (as ``relayUIDs``; a peer's supplementary groups count too,
    /// as for ``allowedGIDs``).
    public var relayGIDs: [UInt32] = []
    /// Connections beyond this are refused with an error line.
    public var maximumConnections = 1024
    /// Lines longer than this are rejected (events.md default: 64 KiB).
    public var maximumLineBytes = 65_536
    /// Per-connection rate limit window in seconds (like journald's RateLimitIntervalSec); 0 = off.
    public var rateLimitIntervalSeconds = 0.0
    /// Events allowed per window and connection (like journald's RateLimitBurst).
    public var rateLimitBurst = 10_000
    /// Buffered events are written and fsynced at least this often, even without durable clients.
    public var flushIntervalSeconds = 1.0
    /// Batches a connection may always have in the writer; beyond them, the daemon reads on
    /// only while the writer's queue holds less than ``writerQueueBytes``.
    public var maximumPendingBatchesPerConnection = 4
    /// Bytes of events the writer's queue may hold, from all connections together, before a
    /// connection with ``maximumPendingBatchesPerConnection`` batches waiting is no longer
    /// read. It lets a fast client go on while the writer seals a block (milliseconds of
    /// zstd), where 4 batches of one read each ran out in a fraction of that and stalled it.
    /// More buys no speed and only adds queueing delay: flat out with 4 clients, 1 MiB gave
    /// ack p99 25–30 ms, 2 MiB 34–35 ms, 16 MiB 175–224 ms, at about the same events/s.
    public var writerQueueBytes = 1 << 20
    /// Bytes of events read from clients and not yet taken by the writer, all connections
    /// together: at this, navlogd stops reading every connection that has a batch queued until
    /// the writer's rounds take the queue under it (one with none may hand over one batch, so a
    /// quiet client is not held behind floods); it also sizes each connection's reads (an equal share, 4–64 KiB). It bounds
    /// memory however many connections stream at once: 1000 clients flat out (8M events) took
    /// navlogd to 395 MiB peak before it, 148 MiB with 2 MiB (126 MiB over 4M events).
    public var maximumQueuedBytes = 2 << 20
    /// Bytes of events from connections that ask no acks (`"ack":"none"`) the writer's queue
    /// may hold before such a connection is no longer read, in place of ``writerQueueBytes``
    /// and ``maximumQueuedBytes``. Nobody waits on those events, so the queue may absorb the
    /// writer sealing a full block (131,072 events: tens of milliseconds of zstd), which at
    /// 2 MiB stopped a fast client's reads every block and left both threads idle in turn:
    /// one client flat out stored 0.96M events/s, 1.3M with 16 MiB (docs/BENCHMARKS.md). It
    /// bounds what such connections hold in memory together.
    public var unacknowledgedQueueBytes = 16 << 20
    /// Bytes of one connection's batches the writer takes per round at most (one batch at
    /// least): every connection with batches waiting gets a turn each round, so a quiet client's
    /// batch waits for one round, not for a flood's backlog. 0 takes the whole queue at once
    /// (the behaviour before rounds; the fairness benchmark's baseline).
    public var writerRoundBytes = 64 << 10
    /// Bytes the writer takes in one round at most (one connection's turn at least); the next
    /// round goes on with the connections not yet served. A connection with less than 16 KiB
    /// waiting goes first (``WriterQueue/lightFlowBytes``), so a quiet client waits for about
    /// one such round while a thousand connections burst or stream, not for a turn of each.
    /// 0: no limit (a turn of every connection each round).
    public var writerRoundLimitBytes = 1 << 20
    /// A segment is sealed at this size.
    public var segmentBytes = 64 << 20
    /// Delete the oldest segments beyond this total size (bytes); nil = keep all.
    public var retentionBytes: Int?
    /// Delete segments older than this many seconds; nil = keep all.
    public var retentionSeconds: Double?
    /// zstd level of blocks (``LogOptions/compressionLevel`` says why 6).
    public var compressionLevel: Int32 = 6
    /// zstd level sealed segments are written again at by compaction
    /// (``LogOptions/sealedCompressionLevel`` says why 19); 0 keeps the level they were
    /// written at.
    public var sealedCompressionLevel: Int32 = 19
    /// Every this many seconds, sealed segments with small blocks (written for durable
    /// clients, a block per fsync) or below ``sealedCompressionLevel`` are written again with
    /// full blocks at that level; 0 turns it off.
    public var compactionIntervalSeconds = 60.0
    /// Seconds a graceful stop may take before navlogd gives up waiting for connections.
    public var shutdownTimeoutSeconds = 10.0
    /// Threads that read and validate connections' lines (0 = one per core).
    public var eventLoopThreads = 0
    /// Where to serve Prometheus metrics (`GET /metrics`), as HOST:PORT on loopback, such as
    /// "127.0.0.1:9477"; nil (the default) serves none.
    public var metricsAddress: String?
    /// How long a session's missing sequence numbers wait for their late events: when the
    /// session stores nothing for this long (or its `session.end` is stored) they are given up
    /// and counted as lost. Until then `navlog stats` shows them as missing.
    public var lossGraceSeconds = 300.0

    /// Defaults for the environment: under systemd, `/run/navlog/navlog.sock` and
    /// `/var/lib/navlog` (or systemd's `$RUNTIME_DIRECTORY`/`$STATE_DIRECTORY`); otherwise
    /// `$XDG_RUNTIME_DIR/navlog.sock` (or `./navlog.sock`) and `./navlog-data`.
    public init(environment: [String: String]) {
        let underSystemd = environment["INVOCATION_ID"] != nil || environment["NOTIFY_SOCKET"] != nil || environment["LISTEN_FDS"] != nil
        if underSystemd {
            let runtime = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first.map(String.init) ?? "/run/navlog"
            let state = environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init) ?? "/var/lib/navlog"
            socketPath = runtime + "/navlog.sock"
            dataDirectory = state
        } else {
            socketPath = (environment["XDG_RUNTIME_DIR"].map { $0 + "/navlog.sock" }) ?? "navlog.sock"
            dataDirectory = "navlog-data"
        }
    }

    /// Reads a JSON configuration file over these defaults.
    /// - Throws: an error naming the file and the bad key.
    public func merging(file path: String) throws -> DaemonConfiguration {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ConfigurationError(message: "Cannot read the configuration file \(path): \(error.localizedDescription)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ConfigurationError(message: "\(path) is not a JSON object; see navlogd --print-config for the format.")
        }
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        for key in object.keys where !known.contains(key) {
            throw ConfigurationError(message: "\(path): unknown setting \"\(key)\". Known settings: \(known.sorted().joined(separator: ", ")).")
        }
        var merged = try JSONSerialization.jsonObject(with: JSONEncoder().encode(self)) as! [String: Any]
        for (key, value) in object { merged[key] = value }
        let decoded: DaemonConfiguration
        do {
            decoded = try JSONDecoder().decode(DaemonConfiguration.self, from: JSONSerialization.data(withJSONObject: merged))
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw ConfigurationError(
                message: "\(path): setting \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" has the wrong type: \(context.debugDescription)")
        }
        // zstd takes levels 1–22 (it would quietly clamp others, and blocks record the level).
        guard (1...22).contains(decoded.compressionLevel) else {
            throw ConfigurationError(message: "\(path): compressionLevel is \(decoded.compressionLevel); zstd levels go from 1 to 22 (navlogd's default is 6).")
        }
        guard (0...22).contains(decoded.sealedCompressionLevel) else {
            throw ConfigurationError(
                message:
                    "\(path): sealedCompressionLevel is \(decoded.sealedCompressionLevel); use a zstd level from 1 to 22 (default 19), or 0 to keep sealed segments as written.")
        }
        return decoded
    }

    /// The socket mode as a number, or nil when ``socketMode`` is not octal.
    public var socketModeValue: UInt16? { UInt16(socketMode, radix: 8) }

    /// The log options these settings ask for.
    public var logOptions: LogOptions {
        var options = LogOptions()
        options.maximumSegmentBytes = segmentBytes
        options.retentionBytes = retentionBytes
        options.retentionAge = retentionSeconds.map { Int64($0 * 1_000_000) }
        options.compressionLevel = compressionLevel
        options.sealedCompressionLevel = sealedCompressionLevel > 0 ? sealedCompressionLevel : nil
        return options
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case socketPath, dataDirectory, socketMode, allowedUIDs, allowedGIDs, relayUIDs, relayGIDs, maximumConnections, maximumLineBytes
        case rateLimitIntervalSeconds, rateLimitBurst, flushIntervalSeconds, maximumPendingBatchesPerConnection, writerQueueBytes, maximumQueuedBytes,
            unacknowledgedQueueBytes, writerRoundBytes, writerRoundLimitBytes
        case segmentBytes, retentionBytes, retentionSeconds, compressionLevel, sealedCompressionLevel, compactionIntervalSeconds, shutdownTimeoutSeconds, eventLoopThreads,
            lossGraceSeconds, metricsAddress
    }
}

/// A configuration problem, said as a sentence.
public struct ConfigurationError: Error, CustomStringConvertible {
    /// What is wrong and where.
    public var message: String
    public var description: String { message }
}
